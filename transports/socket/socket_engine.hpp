#pragma once
// The kernel-socket engine: one per worker thread.
//
// Two modes, chosen from the EngineConfig:
//  - blocking (one flow on the thread, Wait::block): sockets stay blocking with SO_RCVTIMEO /
//    SO_SNDTIMEO; poll() performs the queued operations itself, in order, one syscall each,
//    and an unsignaled send with nothing queued before it goes out at once in post(). This is
//    the cheapest way to drive one connection (no readiness syscalls at all).
//  - event loop (several flows, or Wait::spin): sockets are non-blocking under an edge-triggered
//    epoll set; poll() runs the operations of the connections that are ready and waits in
//    epoll_wait (or spins on it with a zero timeout) when none is.
// Every table is sized at construction; post/poll never allocate.
#include <sys/epoll.h>

#include <cerrno>
#include <vector>

#include "transports/api/transport.hpp"
#include "transports/inet/endpoint.hpp"

namespace mtperf {

class SocketEngine {
 public:
  explicit SocketEngine(const EngineConfig& cfg);
  ~SocketEngine();
  SocketEngine(const SocketEngine&) = delete;
  SocketEngine& operator=(const SocketEngine&) = delete;

  int adopt(int fd, Proto proto);
  int open(const inet::ConnectSpec& spec);
  int listen_adopt(int fd);
  // The engine contract over set-up's endpoints (inet/endpoint.hpp).
  int adopt(Endpoint& ep) { return inet::adopt_endpoint(*this, ep); }
  int listen_adopt(Endpoint& ep) { return inet::listen_endpoint(*this, ep); }
  int open(const Endpoint& ep) { return inet::open_endpoint(*this, ep); }
  int accept(int listen_id);
  void close(int id);
  void shutdown_send(int id);
  int post(int id, std::span<const WorkReq> reqs);  // inline below: once per operation
  int flush() { return 0; }
  int poll(std::span<Completion> out, Wait wait, int64_t timeout_ns);
  BufferPool& pool() { return pool_; }
  Caps caps() const;

 private:
  struct Queue {
    uint32_t head = 0, tail = 0;  // ring over the connection's slice of ops_
    uint32_t size() const { return tail - head; }
  };
  struct Conn {
    int fd = -1;
    Proto proto = Proto::tcp;
    bool listener = false;
    bool rd_ready = true, wr_ready = true;
    bool runnable = false;  // on runnable_
    bool rd_eof = false;
    // Blocking mode: SO_SNDTIMEO is set. A crr client's connection gets it only before a send
    // has to wait; most never do (the request goes out at post()).
    bool snd_timeout = true;
    uint32_t send_off = 0;  // bytes of the head send already written
    int send_err = 0;       // the head send failed when post() tried it: report this, not retry
    Queue sq, rq;           // sends; recvs and accepts
  };

  // Where a descriptor comes from says which of its settings are already right, so a crr
  // connection costs no system call it does not need:
  //   adopted    from set-up: any blocking state, no I/O timeouts yet
  //   connected  connect_fast(): blocking, no I/O timeouts; in blocking mode it gets the
  //              receive timeout now and the send timeout only if a send must wait
  //   accepted   our accept4(): blocking or not as this engine's mode wants, and the I/O
  //              timeouts, TCP_NODELAY and SO_BUSY_POLL inherited from the listener, which
  //              listen_adopt() gave them once
  enum class Origin { adopted, connected, accepted };
  int register_fd(int fd, Proto proto, bool listener, Origin origin);
  WorkReq& slot(int id, bool send_side, uint32_t pos) {
    size_t base = (size_t(id) * 2 + (send_side ? 0 : 1)) * depth_;
    return ops_[base + (pos & (depth_ - 1))];
  }
  [[gnu::always_inline]] void make_runnable(int id) {
    Conn& c = conns_[id];
    if (!c.runnable) {
      c.runnable = true;
      runnable_.push_back(id);  // reserved for every connection: never allocates
    }
  }
  bool has_ready_work(const Conn& c) const;
  // Run queued sends / receives and accepts of one connection; return completions written.
  // `block`: the operation may wait (blocking mode). `try_listener`: a blocking listener that
  // may not wait is tried all the same (the wait before it was in vain).
  size_t run_sends(int id, std::span<Completion> out, bool block);
  size_t progress_one(std::span<Completion> out);  // progress(): one runnable connection
  size_t run_recvs(int id, std::span<Completion> out, bool block, bool try_listener = false);
  int do_send(Conn& c, const WorkReq& r, bool dontwait);
  // Blocking mode, an unsignaled send with none queued before it: sent at once, without waiting.
  // True when it is done; false when it must be queued (the kernel could not take all of it
  // now, or it failed, which the queued send then reports).
  bool send_now(Conn& c, const WorkReq& r);
  int do_recv(Conn& c, const WorkReq& r, bool dontwait);
  int do_accept(Conn& c, bool dontwait);
  size_t progress(std::span<Completion> out);
  int wait_events(int64_t timeout_ns);

  EngineConfig cfg_;
  bool blocking_;
  // SO_RCVTIMEO/SO_SNDTIMEO of blocking sockets and the blocking accept's wait: the socket
  // options' bound, or the workload's shorter one (EngineConfig::max_block_ns).
  int io_timeout_ms_;
  int epfd_ = -1;
  uint32_t depth_;  // power of two
  std::vector<Conn> conns_;
  std::vector<WorkReq> ops_;  // conns_.size() * 2 * depth_
  std::vector<int> free_;
  std::vector<int> runnable_, scratch_;
  std::vector<epoll_event> events_;
  BufferPool pool_;
};

[[gnu::always_inline]] inline int SocketEngine::post(int id, std::span<const WorkReq> reqs) {
  Conn& c = conns_[id];
  if (c.fd < 0) return -EBADF;
  int n = 0;
  bool queued = false;
  for (const WorkReq& r : reqs) {
    if (r.op == Op::write || r.op == Op::read) [[unlikely]]
      return n > 0 ? n : -EOPNOTSUPP;
    bool send_side = r.op == Op::send;
    Queue& q = send_side ? c.sq : c.rq;
    if (q.size() == depth_) break;
    ++n;
    // No completion to write and nothing to wait for: the request or answer of an rr flow
    // leaves here, and poll() has only the receive left to do.
    if (send_side && blocking_ && !r.signal && q.size() == 0 && send_now(c, r)) continue;
    slot(id, send_side, q.tail++) = r;
    queued = true;
  }
  if (queued) make_runnable(id);
  return n;
}

}  // namespace mtperf
