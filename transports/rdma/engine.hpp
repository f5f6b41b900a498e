#pragma once
// The rdma engine: one per worker thread, over the worker's resources (resources.hpp) — one
// completion queue per device, the pool and the area registered — and the RC queue pairs that
// set-up connected (adopt) or that crr connects and accepts on the data path (open, accept).
//
// Sends. post() queues; flush() (and poll(), first) posts each queue pair's queue as one
// ibv_post_send chain. What a send becomes depends on the verb (settings.hpp): a SEND with
// immediate; an RDMA WRITE into the peer's next landing slot (request/response: right-aligned
// against a trailer whose stamp the peer polls); a WRITE with immediate; nothing for a stream's
// passive sender under read. Sends up to the device's max_inline_data (capped by -O inline) go
// inline. Selective signalling: flow_math.hpp's signal_wr; send-queue completions come in order,
// so one signalled completion completes every earlier request, and the workload still sees one
// completion per send it asked one for. A stream keeps -O tx_depth sends in flight (within the
// send queue the device granted: DeviceRes::sq_cap) and signals one per -O signal, as perftest
// does; when its last sends are left with no signalled request behind them (the test over, a
// paced stream between sends), poll() posts one (a credit word's write) once it has nothing
// else to do.
//
// Receives (Caps::provides_recv_buffers). The engine keeps receives posted (per queue pair, or
// in the worker's shared receive queue); the workload arms a connection once with a recv, and
// every message then completes it with kCompBuffer | kCompMore (data: the slot the bytes are in,
// buf_id: the slot); recycle(buf_id) re-posts the receive. Under read, an armed receive keeps a
// read in flight per landing slot, from the peer's slots into ours, and recycle re-issues it;
// under write, request/response is polled: the armed receive watches the stamp of the slot the
// next message lands in (poll() spins then, whatever the wait mode). Messages that come before
// the connection is armed wait for it.
//
// Credits (flow_math.hpp): a SEND or WRITE with immediate is posted only while the peer has a
// receive for it; the peer's re-posted count comes in the immediate of its own messages or in
// the credit word it writes into our area. Our count goes back the same ways.
//
// End of stream: shutdown_send posts a zero-length SEND (a FIN, from the receive kept back for
// it); the peer's armed receive completes with 0 bytes. Errors: a failed completion ends its
// request and the connection's armed receive with -errno, and error_text(conn) names the verb
// and ibv_wc_status_str; a peer's disconnect or a device's removal (rdma_cm events) likewise,
// and a device's asynchronous event that touches the connection (a queue pair, its CQ or SRQ in
// error, its port down, the device lost), named, seen when rdma_cm's events are.
// The engine's destructor lets outstanding FINs complete (a second at most), then disconnects
// and destroys every queue pair and id it holds. A queue pair on the shared receive queue is
// moved to the error state when closed and destroyed only once IBV_EVENT_QP_LAST_WQE_REACHED
// says it takes no more of the queue's receives (the verbs' rule; destroying it before can lose
// a receive it held), or after kLastWqeWaitNs without (counted: drain_timeouts).
//
// Objects are made and destroyed through the worker's VerbsApi (verbs_api.hpp); posting and
// polling call the verbs directly.
//
// Every table is sized at construction; post, flush, poll and recycle do not allocate (crr's
// connection set-up does, through rdma_cm). Not thread-safe: one engine per worker thread.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "transports/api/endpoint.hpp"
#include "transports/api/transport.hpp"
#include "transports/rdma/resources.hpp"
#include "transports/rdma/setup.hpp"

namespace mtperf::rdma {

// What the transport knows of the test beside the EngineConfig.
struct EngineMode {
  uint32_t read_size = 0;    // read: bytes per RDMA READ (the stream's message size)
  bool memory_poll = false;  // write, request/response: receives poll the landing slots
};

// What the engine did, for the report.
struct EngineCounters {
  uint64_t signalled = 0, unsignaled = 0;  // send-queue requests
  uint64_t chains = 0;                     // ibv_post_send calls
  uint64_t credit_waits = 0;               // sends held back for want of credits
  uint64_t credit_writes = 0;              // credit words written to peers
  uint64_t drained = 0;                    // queue pairs on an SRQ destroyed after closing
  uint64_t drain_timeouts = 0;             //   of them, without IBV_EVENT_QP_LAST_WQE_REACHED
  uint32_t inline_max = 0;                 // bytes
};

class RdmaEngine {
 public:
  RdmaEngine(std::shared_ptr<WorkerRes> res, const EngineMode& mode);
  ~RdmaEngine();
  RdmaEngine(const RdmaEngine&) = delete;
  RdmaEngine& operator=(const RdmaEngine&) = delete;

  int adopt(Endpoint& ep);
  int open(const Endpoint& ep);
  int listen_adopt(Endpoint& ep);
  int accept(int listen_id);
  void close(int id);
  void shutdown_send(int id);
  int post(int id, std::span<const WorkReq> reqs);
  int flush();
  int poll(std::span<Completion> out, Wait wait, int64_t timeout_ns);
  BufferPool& pool() { return res_->pool(); }
  Caps caps() const;
  void recycle(uint16_t buf_id);
  // Why connection `id` failed (verb, status), or nullptr when it did not.
  const char* error_text(int id) const;
  const EngineCounters& counters() const { return ctr_; }
  // Bytes of the tables an engine of this layout and configuration allocates (the memory
  // budget's figure, workloads/memory.hpp), beside the area and the pool.
  static uint64_t table_bytes(const Layout& l, const EngineConfig& cfg);

 private:
  // draining: closed, its queue pair on the shared receive queue in the error state, destroyed
  // once IBV_EVENT_QP_LAST_WQE_REACHED says it takes no more receives (or kLastWqeWaitNs on)
  enum class St : uint8_t {
    free,
    listener,
    resolving,
    connecting,
    accepting,
    up,
    failed,
    draining
  };
  enum SqKind : uint8_t { kSqSend, kSqQuiet, kSqRead, kSqFin, kSqCredit, kSqFlush };
  struct SqEntry {
    uint64_t cookie = 0;
    int32_t bytes = 0;
    uint8_t kind = kSqSend;
    uint32_t slot = 0;
  };
  struct Pending {
    uint64_t cookie = 0;
    Buf buf;
    uint8_t kind = kSqSend;  // kSqSend, kSqQuiet, kSqRead (buf unused, slot), kSqFin, kSqFlush
    uint32_t slot = 0;
  };
  struct Conn {
    St st = St::free;
    uint16_t gen = 0;
    rdma_cm_id* id = nullptr;  // none under -O connect=oob: qp alone
    ibv_qp* qp = nullptr;
    int oob_fd = -1;   // -O connect=oob: the exchange's TCP connection; its end is the peer's
    uint8_t port = 0;  // -O connect=oob: the QP's port
    DeviceRes* dev = nullptr;
    ConnInfo peer;
    const RdmaEndpoint* target = nullptr;  // crr client: where it connects; listener: its proof
    int listener = -1;                     // crr server: the listener it came from
    // send queue: sequence numbers of the first unretired and the next request
    uint32_t sq_head = 0, sq_tail = 0, unsig_run = 0;
    // just past the last send the workload waits for, and the last signalled request
    // (flow_math.hpp's tail_needs_flush)
    uint32_t want_end = 0, sig_end = 0;
    uint32_t pend_head = 0, pend_tail = 0;  // queued, not posted
    uint32_t sent = 0, peer_reposted = 0;   // credits (flow_math.hpp)
    uint32_t reposted = 0, announced = 0;
    uint64_t writes = 0;                  // messages written into the peer's landing slots
    uint64_t received = 0;                // messages landed in ours (write_imm, memory poll)
    uint32_t arr_head = 0, arr_tail = 0;  // messages waiting for the connection to be armed
    uint64_t recv_cookie = 0;
    bool armed = false, reads_started = false, fin_sent = false, fin_seen = false;
    bool eof_owed = false, error_owed = false, error_told = false;
    bool dirty = false, polled = false, starved = false, tail_listed = false;
    bool last_wqe = false;    // IBV_EVENT_QP_LAST_WQE_REACHED seen for its queue pair
    int64_t drain_until = 0;  // draining: when it is destroyed without it (monotonic ns)
    int32_t error = 0;        // -errno of the failure
    std::string err;
    // listener
    bool accept_armed = false;
    uint64_t accept_cookie = 0;
    std::vector<int> backlog;
  };
  struct Arrival {
    uint32_t slot = 0;
    int32_t bytes = 0;
  };

  // engine.cpp
  int take_conn();
  void free_conn(int id);
  void tag(int id);  // id->context and the qp number map
  void arm(int id, uint64_t cookie);
  void deliver(Conn& c, int id, uint32_t slot, int32_t bytes, const std::byte* data);
  void deliver_end(Conn& c, int32_t bytes);
  void fail_conn(int id, int err, const std::string& why);
  bool push_pending(Conn& c, int id, const Pending& p);
  std::byte* slot_ptr(uint32_t slot) const { return res_->slot(slot); }
  // engine_post.cpp
  struct Batch {
    uint32_t n = 0;                     // work requests in wrs_
    uint32_t last_wanted = UINT32_MAX;  // the last whose completion the workload wants
    bool tells = false;                 // one of them carries our receives' count
  };
  Batch gather(int id, uint32_t room);      // queued requests into wrs_, within room and credits
  void link_chain(int id, const Batch& b);  // signalling, wr_ids, the chain's links
  void post_conn(int id);
  SqEntry& sq_entry(int id, uint32_t seq) {
    return sq_[size_t(id) * (sq_mask_ + 1) + (seq & sq_mask_)];
  }
  uint32_t build_wr(int id, const Pending& p, ibv_send_wr& wr, ibv_sge* sge);
  void add_credit_write(int id, ibv_send_wr& wr, ibv_sge& sge);
  void mark_dirty(int id);
  void note_tail(int id);  // lists a stream whose last sends may have nothing to complete them
  bool flush_tails();      // queues a signalled request behind them; whether it queued one
  // engine_reap.cpp
  int reap(DeviceRes& d);
  void on_send_wc(const ibv_wc& wc);
  void on_recv_wc(const ibv_wc& wc);
  void retire(int id, uint32_t upto, int status, const ibv_wc* wc);
  void poll_memory();
  void poll_credit_words();
  bool wait_events(int64_t timeout_ns);
  int drain_ready(std::span<Completion> out);
  void push_ready(const Completion& c);
  // engine_cm.cpp
  void cm_events();
  // The connection an event is for, or -1 (the event acked, a request refused) when it is no
  // live connection's.
  int owner_of(rdma_cm_event* ev);
  void on_cm_event(rdma_cm_event* ev);
  void on_connect_request(int listener, rdma_cm_event* ev);
  void refuse_accept(int id, rdma_cm_id* cm);
  void on_route_resolved(int id);
  void on_established(int id, rdma_cm_event* ev);
  void on_disconnected(int id, const char* why, int err);
  void on_device_removed(int id);  // every connection on the device of connection id
  void finish_fins();
  void settle_drains(bool all);  // destroys the draining queue pairs that may go (all: every one)
  void end_drain(int id);
  void check_faults();       // the devices' asynchronous faults (async_events.hpp)
  void oob_events();         // -O connect=oob: a peer's closed TCP connection is its disconnect
  void disconnect(Conn& c);  // rdma_disconnect, or the QP to ERR and the TCP socket closed
  void destroy_objects(Conn& c);  // the id and its QP, or the QP alone

  std::shared_ptr<WorkerRes> res_;
  VerbsApi& vx_;  // res_'s
  const Layout& lay_;
  EngineMode mode_;
  Verb verb_;
  bool consumes_;  // the verb consumes the peer's receives (send, write_imm)
  uint32_t signal_every_;
  uint32_t tx_depth_;  // streams: sends in flight per flow wanted (-O tx_depth)
  bool stream_;        // streams signal every N (flow_math.hpp's signal_wr); rr batch ends too
  rdma_event_channel* cm_ch_ = nullptr;
  std::vector<Conn> conns_;
  std::vector<int> free_ring_;  // FIFO: a closed entry is the last reused
  uint32_t free_head_ = 0, free_count_ = 0;
  uint32_t sq_mask_, pend_mask_, arr_mask_;  // rings per connection; the send queue's own
                                             // entries: DeviceRes::sq_cap
  std::vector<SqEntry> sq_;
  std::vector<Pending> pend_;
  std::vector<Arrival> arr_;
  std::vector<uint8_t> slot_posted_;       // per-connection receive slots: a receive holds it
  std::vector<uint16_t> slot_owner_;       // shared receive slots: the connection that used it
  std::unordered_map<uint32_t, int> qpn_;  // qp number -> connection (shared receive queue)
  std::vector<int> dirty_, polled_, starved_, tails_, drains_;
  std::vector<Completion> ready_;
  size_t ready_head_ = 0;
  std::vector<ibv_send_wr> wrs_;
  std::vector<ibv_sge> sges_;
  std::vector<ibv_wc> wcs_;
  int64_t next_cm_check_ns_ = 0;
  uint64_t faults_seen_ = 0;  // on the worker's FaultBoard
  uint32_t oob_conns_ = 0;    // connections with an out-of-band TCP socket open
  int64_t next_oob_check_ns_ = 0;
  EngineCounters ctr_;
};

}  // namespace mtperf::rdma
