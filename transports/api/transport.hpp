#pragma once
// The transport interface: completion-based, in the style of verbs and io_uring.
//
// Two objects per transport:
//  - an Engine per worker thread (the epoll set, the ring, the completion queue) that owns the
//    worker's buffers and reaps completions for every connection of that thread;
//  - a connection per flow, made by the transport's set-up path (endpoint.hpp) and adopted by
//    the engine (ConnId).
//
// Engines are used through templates (see workloads/worker.hpp); there is no virtual call per
// operation. The transport itself is chosen once, from the registry (registry.hpp), and builds
// each worker's engine through EngineHost<E> (engine_host.hpp); bindings/ instantiates the
// workload over each engine type, so that neither transports/ nor workloads/ knows the other.
//
// Engine contract (checked by the EngineType concept below):
//   int  adopt(Endpoint&)              take over a flow's connection, as the transport's set-up
//                                      made it (endpoint.hpp); returns a ConnId or -errno.
//                                      Setup path.
//   int  open(const Endpoint&)         a new connection to the endpoint's target (crr client);
//                                      ConnId or -errno.
//   int  listen_adopt(Endpoint&)       watch a flow's listener for accept() (crr server);
//                                      ListenId or -errno.
//   int  accept(int listen_id)         accept one connection; ConnId, -EAGAIN when none is ready.
//   void close(ConnId)                 close a connection; its queued work is dropped.
//   void shutdown_send(ConnId)         half-close (end of a stream).
//   int  post(ConnId, span<WorkReq>)   queue work; no syscall. Returns how many were queued.
//   int  flush()                       submit what was queued (io_uring_submit; nothing for
//                                      sockets). Returns submitted count or -errno.
//   int  poll(span<Completion>, Wait, int64_t timeout_ns)
//                                      reap completions; submits whatever is still queued first
//                                      (a flush() right before poll() is never needed); for a
//                                      blocking socket with one flow per thread, performs the
//                                      queued send/recv itself. Returns the number of
//                                      completions written (0 on timeout) or -errno on an
//                                      engine failure.
//   BufferPool& pool()                 buffers allocated and registered before the timed phase.
//   Caps caps() const
// Engines with Caps::provides_recv_buffers also have
//   void recycle(uint16_t buf_id)      give a receive buffer (Completion::buf_id) back once its
//                                      bytes have been read. No syscall.
//
// Completion semantics, the same for every transport:
//   send on a stream socket completes when the whole buffer is handed to the kernel;
//   recv completes with 1..len bytes; 0 means the peer closed; negative is -errno.
//   With Caps::provides_recv_buffers the engine picks the receive buffer: the completion has
//   kCompBuffer, `data` points at the bytes, and one posted recv may complete many times
//   (kCompMore: it is still armed, post no other recv on that connection).
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <netinet/in.h>
#include <sys/socket.h>

namespace mtperf {

struct Buf {
  std::byte* data = nullptr;
  uint32_t len = 0;
  // The engine's local key for the buffer, where it needs one: BufferPool::get gives the buffer's
  // index (io_uring's fixed-buffer index); an RDMA engine uses its memory region's lkey itself.
  uint32_t key = 0;
};

// write/read: one-sided, RDMA only. accept: on a listener; the completion carries the new ConnId.
enum class Op : uint8_t { send, recv, write, read, accept };

struct WorkReq {
  Op op = Op::send;
  Buf buf;
  uint64_t cookie = 0;  // returned in the Completion; the workload encodes flow and op in it
  // false, on a send: no completion when it succeeds, only when it fails (with the error).
  // Engines without Caps::unsignaled_sends ignore it and complete the send as usual. Use it only
  // where the workload knows the send is done before it posts the next send on that connection
  // (request/response with one transaction in flight: the answer came, so the peer read the
  // whole request). The engine lets go of the send then, or when the connection is closed.
  bool signal = true;
  // A send whose answer is expected: the next recv posted on the same connection before the
  // next poll() starts only once this send has completed, and both are submitted together
  // (IOSQE_IO_LINK). Engines without Caps::linked_ops ignore it. Use it only where the peer
  // reads everything before it answers (request/response with one transaction in flight).
  bool link = false;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
};

enum CompletionFlags : uint16_t {
  kCompMore = 1,  // more completions will follow for the same request (multishot)
  kCompError = 2,
  kCompBuffer = 4,  // the engine chose the receive buffer: data and buf_id are set; recycle it
};

struct Completion {
  uint64_t cookie = 0;
  int32_t bytes = 0;  // >0 bytes moved, 0 peer closed (recv), <0 -errno
  uint16_t flags = 0;
  uint16_t buf_id = 0;              // provided-buffer id when the transport chose the buffer
  const std::byte* data = nullptr;  // with kCompBuffer: the received bytes, valid until recycled
};

enum class Wait : uint8_t { spin, block, none };

enum class Proto : uint8_t { tcp, udp };

struct Caps {
  // A stream's receiver sees nothing of what it is sent (RDMA WRITE): its side counts no bytes,
  // and the report takes the stream's throughput from the sender.
  bool one_sided = false;
  // A stream's receiver pulls the data itself (RDMA READ): the sender posts nothing, waits for
  // the end of the phase and then half-closes; its side counts no bytes.
  bool passive_sender = false;
  // Bytes a send may carry inside its work request (RDMA inline data); the report shows it.
  uint32_t max_inline = 0;
  uint32_t max_outstanding = 64;  // per connection and direction
  // Sends a stream keeps in flight per flow; 0: an eighth of max_outstanding, 1 to 8
  // (workloads/engine_config.hpp's stream_depth).
  uint32_t stream_depth = 0;
  bool provides_recv_buffers = false;  // receives land in engine buffers (Completion::data)
  bool linked_ops = false;             // honours WorkReq::link
  bool unsignaled_sends = false;       // honours WorkReq::signal = false
  // The set-up greets a TCP flow's peer with FlowSetup::greeting in place of mtperf's own flow
  // hello: a kernel socket that an unmodified peer's server can take (peers/, iperf3's cookie).
  bool peer_greeting = false;
};

// A socket address (IPv4 or IPv6) that can be copied around freely.
struct SockAddr {
  sockaddr_storage ss{};
  socklen_t len = 0;
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&ss); }
  sockaddr* get() { return reinterpret_cast<sockaddr*>(&ss); }
  int family() const { return ss.ss_family; }
  uint16_t port() const;
  void set_port(uint16_t port);
  std::string to_string() const;  // "127.0.0.1:5001", "[::1]:5001"
  bool is_loopback() const;       // 127.0.0.0/8 or ::1: this host
};

// A numeric IPv4 or IPv6 address (no brackets, no port) and a port; throws
// std::invalid_argument naming the text when it is not one. No resolver.
SockAddr numeric_address(const std::string& address, uint16_t port);

// Kernel-socket options shared by every transport that rides on kernel sockets.
struct SocketOptions {
  int sndbuf = 0;  // bytes; 0 = kernel default
  int rcvbuf = 0;
  bool nodelay = true;      // the CLI turns it off for streams (see cli/run_options.cpp)
  std::string congestion;   // "" = kernel default
  int mss = 0;              // TCP_MAXSEG, bytes; 0 = the path's (kernel default)
  std::string bind_device;  // SO_BINDTODEVICE
  std::string source;       // local address to bind data sockets to ("" = any)
  bool mptcp = false;
  int busy_poll_us = 0;     // SO_BUSY_POLL
  int io_timeout_ms = 200;  // SO_RCVTIMEO/SO_SNDTIMEO on blocking sockets: no wait is unbounded
};

// Fixed-size buffers carved from one allocation, made before the timed phase.
class BufferPool {
 public:
  BufferPool() = default;
  BufferPool(uint32_t count, uint32_t size);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  BufferPool(BufferPool&& o) noexcept;
  BufferPool& operator=(BufferPool&& o) noexcept;

  uint32_t count() const { return count_; }
  uint32_t size() const { return size_; }
  std::byte* base() const { return base_; }
  size_t bytes() const { return size_t(count_) * size_; }
  Buf get(uint32_t index) const { return Buf{base_ + size_t(index) * size_, size_, index}; }

 private:
  std::byte* base_ = nullptr;
  uint32_t count_ = 0;
  uint32_t size_ = 0;
};

// What a worker asks of its engine; filled by the workload (workloads/engine_config.hpp) from
// the flows it runs. Everything is sized here, before the timed phase.
struct EngineConfig {
  uint32_t max_conns = 1;     // connections and listeners alive at once
  uint32_t queue_depth = 16;  // outstanding work per connection and direction
  uint32_t buffers = 0;       // pool: count x size
  uint32_t buffer_size = 0;
  Wait wait = Wait::block;
  bool single_flow = true;  // one flow on this thread: blocking calls beat an event loop
  const SocketOptions* sock = nullptr;
  // Which worker of its side the engine serves (flows are dealt round-robin): a transport that
  // set connections up per worker (RDMA) finds them by it.
  uint32_t worker = 0;
  bool request_response = false;  // rr or crr: each request waits for its answer
  uint32_t stream_msg_size = 0;   // a stream's message (what one RDMA READ pulls)
  // The longest one blocking call may wait, where the workload needs a shorter bound than the
  // transport's own (0: none): a UDP rr client's --udp-timeout, so that a lost answer is
  // counted on time by an engine that blocks in the receive itself.
  int64_t max_block_ns = 0;
};

class Endpoint;  // endpoint.hpp

template <class E>
concept EngineType = requires(E e, const E ce, int id, Endpoint& ep, const Endpoint& cep,
                              std::span<const WorkReq> wr, std::span<Completion> out, Wait w,
                              int64_t t) {
  { e.adopt(ep) } -> std::same_as<int>;
  { e.open(cep) } -> std::same_as<int>;
  { e.listen_adopt(ep) } -> std::same_as<int>;
  { e.accept(id) } -> std::same_as<int>;
  { e.close(id) } -> std::same_as<void>;
  { e.shutdown_send(id) } -> std::same_as<void>;
  { e.post(id, wr) } -> std::same_as<int>;
  { e.flush() } -> std::same_as<int>;
  { e.poll(out, w, t) } -> std::same_as<int>;
  { e.pool() } -> std::same_as<BufferPool&>;
  { ce.caps() } -> std::same_as<Caps>;
};

}  // namespace mtperf
