#pragma once
// The io_uring engine: kernel TCP/UDP sockets driven through one ring per worker thread.
//
// post() turns each WorkReq into an SQE (no syscall unless the SQ ring is full); flush() is one
// io_uring_submit; poll() reaps CQEs in batches, submitting what is queued and waiting in the
// same io_uring_enter (io_uring_submit_and_wait_timeout, Wait::block) or peeking in a loop
// (Wait::spin). Completion semantics are those of the socket engine (transport.hpp): a TCP send
// completes when the whole buffer is sent (MSG_WAITALL, and the remainder is resubmitted after
// a short send); with zero-copy sends, only once the kernel's notification CQE says the buffer
// is free again.
//
// multishot: a recv is one multishot receive (IORING_RECV_MULTISHOT) into a provided-buffer
// ring (io_uring_register_buf_ring, group 0) of buf_ring_entries buffers of
// EngineConfig::buffer_size bytes. Each CQE becomes a completion with kCompBuffer (and kCompMore
// while the receive stays armed); the worker hands the buffer back with recycle(). A receive
// the kernel ends without IORING_CQE_F_MORE is re-armed here: at once, or, after ENOBUFS, once
// a buffer comes back. Only EOF and errors end it for the worker.
//
// link: a send posted with WorkReq::link and the recv posted next on the same connection are
// one IOSQE_IO_LINK chain; the send carries IOSQE_CQE_SKIP_SUCCESS, and its completion is
// reported from the recv's CQE (one CQE, so one io_uring_enter, per transaction); the recv
// waits for the answer without trying first (IORING_RECVSEND_POLL_FIRST). A chain that is not
// followed by its recv before the next submit is undone (the send stands alone); while
// multishot is on none is begun: a multishot receive is never part of one.
//
// cqe_skip: a send posted with WorkReq::signal = false carries IOSQE_CQE_SKIP_SUCCESS on its own
// (one in a send->recv chain stays as it is, reported from its recv's CQE), so a
// request/response transaction over an armed multishot receive costs one CQE instead of two. The
// kernel still posts a CQE when the send fails, and when a TCP send ends short (MSG_WAITALL makes a
// short send a failure, so the remainder is resubmitted like any other). Such a send keeps its slot
// until the next send posted on its connection, or until close(): by the WorkReq::signal contract
// it is done by then. Every SQE's user_data carries its slot's generation beside the slot index, so
// a CQE of a send let go of early (a UDP request that timed out, a connection closed under it) can
// never be taken for the slot's next operation.
//
// Every table is sized at construction from the EngineConfig; post/poll never allocate.
// Not thread-safe: one engine per worker thread, used only by that thread (SINGLE_ISSUER).
//
// This header does not include liburing; the ring lives behind an opaque pointer.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "transports/api/transport.hpp"
#include "transports/inet/endpoint.hpp"

namespace mtperf {

// The settings one engine is built with (validated by the transport, uring_transport.cpp).
// The member defaults are the plain engine; the transport's defaults are set where it is
// registered (uring_transport.cpp).
struct UringSettings {
  uint32_t ring_size = 256;       // SQ entries (power of two, 8..32768)
  bool single_issuer = true;      // IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN
  bool sqpoll = false;            // IORING_SETUP_SQPOLL: a kernel thread submits (costs a CPU)
  bool fixed_files = false;       // registered file table, IOSQE_FIXED_FILE
  bool fixed_buffers = false;     // registered pool; used by zero-copy sends only
  bool zerocopy = false;          // IORING_OP_SEND_ZC for sends
  bool multishot = false;         // multishot receive into a provided-buffer ring
  uint32_t buf_ring_entries = 0;  // provided buffers (power of two, 1..32768); 0 = sized here
  bool link = false;              // linked send->recv (WorkReq::link), CQE_SKIP_SUCCESS send
  bool ring_fd = false;           // io_uring_register_ring_fd: enter without an fd lookup
  uint32_t cqe_batch = 64;        // completions handed out per poll() at most (1..64)
  bool cqe_skip = false;          // WorkReq::signal = false sends: IOSQE_CQE_SKIP_SUCCESS
};

// What an engine ended up using after the kernel had its say; notes say why a setting fell back.
struct UringEffective {
  bool single_issuer = false;
  bool sqpoll = false;
  bool fixed_files = false;
  bool fixed_buffers = false;
  bool zerocopy = false;
  bool multishot = false;
  uint32_t buf_ring_entries = 0;
  bool link = false;
  bool ring_fd = false;
  bool cqe_skip = false;
  std::vector<std::string> notes;
};

class UringEngine {
 public:
  // Throws std::runtime_error naming the failing call when the ring cannot be set up.
  UringEngine(const EngineConfig& cfg, const UringSettings& settings);
  ~UringEngine();
  UringEngine(const UringEngine&) = delete;
  UringEngine& operator=(const UringEngine&) = delete;

  int adopt(int fd, Proto proto);
  int open(const inet::ConnectSpec& spec);
  int listen_adopt(int fd);
  // The engine contract over set-up's endpoints (inet/endpoint.hpp).
  int adopt(Endpoint& ep) { return inet::adopt_endpoint(*this, ep); }
  int listen_adopt(Endpoint& ep) { return inet::listen_endpoint(*this, ep); }
  int open(const Endpoint& ep) { return inet::open_endpoint(*this, ep); }
  int accept(int listen_id);
  // Shuts the socket down at once (the peer sees the end), cancels the connection's operations
  // and closes the descriptor once no operation refers to it; their completions are dropped.
  void close(int id);
  void shutdown_send(int id);
  int post(int id, std::span<const WorkReq> reqs);
  int flush();
  int poll(std::span<Completion> out, Wait wait, int64_t timeout_ns);
  BufferPool& pool() { return pool_; }
  Caps caps() const;
  // Bytes an engine built from cfg and s holds beyond its pool: connection and operation tables,
  // the SQ and CQ rings, the provided-buffer ring and its buffers (multishot). For the memory
  // budget, before anything is allocated; the constructor sizes everything the same way.
  static uint64_t overhead_bytes(const EngineConfig& cfg, const UringSettings& s);
  // Provided buffers of the multishot ring (power of two).
  static uint32_t provided_buffers(const EngineConfig& cfg, const UringSettings& s);
  // multishot: a provided receive buffer goes back to the ring (see kCompBuffer).
  void recycle(uint16_t buf_id);

  const UringEffective& effective() const { return eff_; }
  // Operations submitted and not yet completed on a connection (tests, close bookkeeping).
  uint32_t outstanding(int id) const { return conns_[id].outstanding; }
  // Provided buffers the worker holds (delivered, not yet recycled) and re-arms done (tests).
  uint32_t buffers_held() const { return pbuf_held_; }
  uint64_t rearms() const { return rearms_; }
  // CQEs reaped since construction, internal ones (cancels) included (tests).
  uint64_t cqes() const { return cqes_seen_; }

 private:
  struct Ring;  // struct io_uring, hidden from includers
  struct Conn {
    int fd = -1;
    Proto proto = Proto::tcp;
    bool listener = false;
    bool closing = false;           // closed by the user; waiting for its operations to end
    uint32_t sends = 0, recvs = 0;  // operations in flight, per direction
    uint32_t outstanding = 0;
    int32_t quiet = -1;  // the last unsignaled send (cqe_skip), held until the next send
    // TCP: one send in the kernel at a time (tx_issued), the others queued in order (tx_head
    // .. tx_tail, through OpSlot::tx_next). Two sends in flight on one stream socket can
    // interleave their bytes: one cut short waits for room, the other goes first.
    int32_t tx_issued = -1, tx_head = -1, tx_tail = -1;
  };
  struct OpSlot {
    int conn = -1;
    Op op = Op::send;
    bool dropped = false;
    bool sent_all = false;   // zero-copy: the data part is done, notifications may be pending
    uint32_t notifs = 0;     // zero-copy notifications still to come
    uint32_t off = 0;        // bytes of a TCP send already sent
    bool skip = false;       // linked send with CQE_SKIP_SUCCESS: reported by its recv
    bool quiet = false;      // unsignaled send (cqe_skip): no completion unless it fails
    uint32_t gen = 0;        // bumped each time the slot is taken; the high half of user_data
    int32_t link_peer = -1;  // the other op of a send->recv chain (send: its recv; recv: send)
    int32_t tx_next = -1;    // the next queued TCP send of its connection
    int32_t result = 0;
    Buf buf;
    uint64_t cookie = 0;
  };

  void setup_ring(const UringSettings& s);
  void register_features(const UringSettings& s);
  void setup_buf_ring();
  int register_fd(int fd, Proto proto, bool listener);
  void finalize_close(int id);
  void release_unsubmitted(int id);  // close(): what never reached the kernel
  // Prepares the SQE of an op; false when no SQE is free. `link`: the next recv on its
  // connection joins it in a chain; `follows`: this op is that recv (the chain stays open).
  bool issue(uint32_t op_index, bool link = false, bool follows = false);
  void* get_sqe();
  void unlink();         // an open chain whose recv did not come: the send stands alone
  void kick_tx(int id);  // issues a TCP connection's next queued send once none is in flight
  int submit();
  // Handles one CQE; writes 0..2 completions to `out` (a linked send, then its recv).
  int handle(uint64_t user_data, int32_t res, uint32_t flags, Completion* out);
  int handle_recv(uint32_t index, int32_t res, uint32_t flags, Completion* out);
  bool op_ended(uint32_t index, int32_t& res, uint32_t flags);  // handle(): a send or accept
  void rearm_or_starve(uint32_t index);
  void rearm_starved();
  void give_back(uint16_t buf_id);
  void release(uint32_t op_index);
  void retire_quiet(Conn& c);  // the connection's unsignaled send is done: free its slot
  int reap(std::span<Completion> out);
  bool needs_enter() const;

  EngineConfig cfg_;
  UringSettings set_;
  UringEffective eff_;
  std::unique_ptr<Ring> ring_;
  uint32_t depth_;
  std::vector<Conn> conns_;
  std::vector<int> free_conns_;
  std::vector<OpSlot> ops_;
  std::vector<uint32_t> free_ops_;
  std::vector<void*> cqes_;          // io_uring_cqe* batch
  std::vector<Completion> backlog_;  // completions made when `out` was full
  size_t backlog_head_ = 0;
  bool defer_taskrun_ = false;
  BufferPool pool_;
  // link
  int32_t open_link_ = -1;  // send op whose SQE waits for its recv
  void* open_link_sqe_ = nullptr;
  // multishot
  void* buf_ring_ = nullptr;  // io_uring_buf_ring*, mmap'ed
  size_t buf_ring_bytes_ = 0;
  uint32_t buf_ring_mask_ = 0;
  uint32_t pbuf_held_ = 0;
  uint64_t rearms_ = 0;
  uint64_t cqes_seen_ = 0;
  std::vector<uint32_t> starved_;  // multishot receives ended by ENOBUFS, waiting for a buffer
  BufferPool pbufs_;
};

}  // namespace mtperf
