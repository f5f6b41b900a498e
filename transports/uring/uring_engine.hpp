#pragma once
// The io_uring engine: kernel TCP/UDP sockets driven through one ring per worker thread.
//
// post() turns each WorkReq into an SQE (no syscall unless the SQ ring is full); flush() is one
// io_uring_submit; poll() reaps CQEs in batches, waiting in io_uring_submit_and_wait_timeout
// (Wait::block) or peeking in a loop (Wait::spin). Completion semantics are those of the socket
// engine (transport.hpp): a TCP send completes when the whole buffer is sent (MSG_WAITALL, and
// the remainder is resubmitted after a short send); with zero-copy sends, only once the kernel's
// notification CQE says the buffer is free again.
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

namespace mtperf {

// The settings one engine is built with (validated by the transport, uring_transport.cpp).
struct UringSettings {
  uint32_t ring_size = 256;    // SQ entries (power of two, 8..32768)
  bool single_issuer = true;   // IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN
  bool sqpoll = false;         // IORING_SETUP_SQPOLL: a kernel thread submits (costs a CPU)
  bool fixed_files = false;    // registered file table, IOSQE_FIXED_FILE
  bool fixed_buffers = false;  // registered pool; used by zero-copy sends only
  bool zerocopy = false;       // IORING_OP_SEND_ZC for sends
};

// What an engine ended up using after the kernel had its say; notes say why a setting fell back.
struct UringEffective {
  bool single_issuer = false;
  bool sqpoll = false;
  bool fixed_files = false;
  bool fixed_buffers = false;
  bool zerocopy = false;
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
  int open(const ConnectSpec& spec);
  int listen_adopt(int fd);
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

  const UringEffective& effective() const { return eff_; }
  // Operations submitted and not yet completed on a connection (tests, close bookkeeping).
  uint32_t outstanding(int id) const { return conns_[id].outstanding; }

 private:
  struct Ring;  // struct io_uring, hidden from includers
  struct Conn {
    int fd = -1;
    Proto proto = Proto::tcp;
    bool listener = false;
    bool closing = false;           // closed by the user; waiting for its operations to end
    uint32_t sends = 0, recvs = 0;  // operations in flight, per direction
    uint32_t outstanding = 0;
  };
  struct OpSlot {
    int conn = -1;
    Op op = Op::send;
    bool dropped = false;
    bool sent_all = false;  // zero-copy: the data part is done, notifications may be pending
    uint32_t notifs = 0;    // zero-copy notifications still to come
    uint32_t off = 0;       // bytes of a TCP send already sent
    int32_t result = 0;
    Buf buf;
    uint64_t cookie = 0;
  };

  void setup_ring(const UringSettings& s);
  int register_fd(int fd, Proto proto, bool listener);
  void finalize_close(int id);
  bool issue(uint32_t op_index);  // prepares the SQE of an op; false when no SQE is free
  void* get_sqe();
  // Handles one CQE; returns true and fills `out` when the user sees a completion.
  bool handle(uint64_t user_data, int32_t res, uint32_t flags, Completion& out);
  void release(uint32_t op_index);
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
  std::vector<void*> cqes_;  // io_uring_cqe* batch
  bool defer_taskrun_ = false;
  BufferPool pool_;
};

}  // namespace mtperf
