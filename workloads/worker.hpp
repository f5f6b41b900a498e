#pragma once
// The workload, written once over any engine (a template: no virtual call per operation).
//
// Each flow is a small state machine driven by completions; the cookie of every posted
// operation names the flow, the connection and the kind of operation. Counting happens here,
// never in the transport: bytes, messages and transactions go to the flow's FlowCounters, round
// trips to its histogram (measured window only).
//
// How a flow ends:
//   sender      at the end of the test: TCP half-closes; UDP sends end-of-stream datagrams
//   receiver    TCP: on EOF; UDP: on an end-of-stream datagram, or when told to finish
//   rr_client   stops issuing at the end, half-closes when the last answer is in, ends on EOF
//   rr_server   on EOF (TCP) or an end-of-test datagram (UDP)
//   crr_client  stops opening connections at the end
//   crr_server  when told to finish
// and every flow ends at the hard deadline, recording why.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "transports/api/transport.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/job.hpp"
#include "workloads/udp_header.hpp"

namespace mtperf {

template <EngineType E>
class Worker {
 public:
  Worker(E& engine, WorkerJob& job)
      : e_(engine),
        job_(job),
        spec_(*job.spec),
        clock_(*job.clock),
        provided_(engine.caps().provides_recv_buffers),
        link_(engine.caps().linked_ops && spec_.burst == 1 &&
              (kind_of(spec_.workload).headline == Headline::transactions)),
        quiet_(engine.caps().unsignaled_sends && spec_.burst == 1 &&
               (kind_of(spec_.workload).headline == Headline::transactions)),
        passive_(engine.caps().passive_sender),
        verify_(spec_.verify_seed != 0),
        udp_timeout_ns_(int64_t(spec_.udp_timeout_s * 1e9)) {}

  void run();

 private:
  // kQuiet: a send posted unsignaled (WorkReq::signal = false), counted when it was posted.
  enum Kind : uint8_t { kSend = 1, kRecv = 2, kAccept = 3, kFin = 4, kQuiet = 5 };
  static constexpr int64_t kNoTimer = INT64_MAX;

  struct Flow {
    FlowSlot* slot = nullptr;
    uint32_t idx = 0;
    int conn = -1;
    int listen = -1;
    uint32_t buf0 = 0;   // first pool buffer of this flow
    uint32_t nbufs = 0;  // its buffers: sends in flight + 1 (shared: as many, but only two real)
    uint32_t rbuf = 0;   // the pool buffer it receives into
    uint32_t sends_out = 0;
    uint32_t send_rot = 0;  // rotates over the flow's send buffers
    bool done = false;
    bool shut = false;
    uint64_t acc = 0;       // bytes toward the current request/response
    uint32_t inflight = 0;  // rr transactions outstanding
    uint64_t seq = 0;
    int64_t next_send_ns = 0;
    int64_t interval_ns = 0;
    // Before this, on_timers() has nothing to do for the flow (UDP rr: the earliest request
    // that could time out); 0 for a paced sender, which on_timers() pumps on every turn.
    int64_t timer_due_ns = 0;
    int64_t started_ns = 0;  // crr: transaction start
    int64_t connect_ns = 0;  // crr: the connect of the transaction in flight took this long
    // crr clients: an open waits for its timer (--rate's next slot, or a retry after a failed
    // connect), and since when connects have failed without one succeeding (0: the last one
    // did).
    bool open_due = false;
    int64_t failing_since_ns = 0;
    uint32_t ring_head = 0, ring_tail = 0;  // rr send timestamps (TCP: FIFO), < burst
    // --verify: the patterns of what this flow sends and receives, and the stream positions.
    const Pattern* tx = nullptr;
    const Pattern* rx = nullptr;
    uint64_t tx_off = 0, rx_off = 0;
  };

  static uint64_t cookie(uint32_t flow, int conn, Kind k) {
    return (uint64_t(flow) << 32) | (uint64_t(uint32_t(conn) & 0xffffff) << 8) | k;
  }

  int64_t clock_now() const { return precise_clock_ ? now_ns() : coarse_now_ns(); }
  bool phase_done() const { return clock_.phase.load(std::memory_order_relaxed) == Phase::done; }
  // Samples (latency, connect) are taken in the window the counters measure (PhaseClock).
  bool measuring() const {
    return clock_.phase.load(std::memory_order_relaxed) == Phase::measure &&
           !clock_.window_closed.load();
  }

  void setup();
  void set_timing(Flow& f);  // whether the worker needs a precise clock; the flow's pacing
  bool needs_timers() const;
  void on_finish();
  int64_t run_timers(int64_t now);
  void start(Flow& f, int64_t now);
  void dispatch(const Completion& c, int64_t now);
  void on_send(Flow& f, const Completion& c, Kind k, int64_t now);
  void on_recv(Flow& f, const Completion& c, int conn, int64_t now);
  void on_accept(Flow& f, const Completion& c);
  void on_phase_done(Flow& f, int64_t now);
  void count_sent(Flow& f, uint64_t bytes, uint64_t msgs) {
    FlowCounters::add(f.slot->counters.bytes_sent, bytes);
    FlowCounters::add(f.slot->counters.msgs_sent, msgs);
  }
  // What an unsignaled send of this flow carries: a request (clients) or an answer (servers).
  uint32_t quiet_len(const Flow& f) const {
    Role r = f.slot->role;
    return r == Role::rr_client || r == Role::crr_client ? spec_.req_size : spec_.resp_size;
  }
  int64_t on_timers(Flow& f, int64_t now);
  // The flow's next timer, running on_timers() only when one may be due.
  int64_t next_timer(Flow& f, int64_t now) {
    return now < f.timer_due_ns ? f.timer_due_ns : on_timers(f, now);
  }

  void pump_sender(Flow& f, int64_t now);
  void finish_sender(Flow& f);
  void rr_send_request(Flow& f, int64_t now);
  void rr_client_recv(Flow& f, const Completion& c, int64_t now);
  void rr_server_recv(Flow& f, const Completion& c);
  void udp_rr_client_recv(Flow& f, const Completion& c, int64_t now);
  void udp_receiver_recv(Flow& f, const Completion& c, int64_t now);
  void peer_datagram_recv(Flow& f, const Completion& c, int64_t now);
  // A datagram too short to carry our header is not one of ours: counted as an error, and the
  // receive posted again. True when it was one.
  bool drop_short_datagram(Flow& f, const Completion& c) {
    if (c.bytes >= int32_t(kUdpHeaderBytes)) return false;
    FlowCounters::add(f.slot->counters.errors, 1);
    post_recv(f, f.conn);
    return true;
  }
  void crr_open(Flow& f);
  void crr_next(Flow& f, int64_t now);
  void crr_connect_failed(Flow& f, int err, int64_t now);
  void open_at(Flow& f, int64_t when) {
    f.open_due = true;
    f.timer_due_ns = when;
  }
  void crr_client_recv(Flow& f, const Completion& c, int conn, int64_t now);
  void crr_server_recv(Flow& f, const Completion& c, int conn);

  // The worker writes a send's bytes only for --verify and for UDP's header: otherwise nothing
  // changes a send buffer after set-up, and every send in flight comes from the flow's first
  // one, which then stays in cache.
  Buf send_buf(Flow& f, uint32_t len) {
    bool written = verify_ || f.slot->proto == Proto::udp;
    uint32_t i = 0;
    if (written) {
      i = f.send_rot;
      f.send_rot = i + 1 == f.nbufs - 1 ? 0 : i + 1;  // a compare, not a division per send
    }
    Buf b = e_.pool().get(f.buf0 + i);
    b.len = len;
    return b;
  }
  Buf recv_buf(Flow& f) { return e_.pool().get(f.rbuf); }
  // Where a receive's bytes are: in the flow's buffer, or in one the engine provided.
  const std::byte* recv_data(Flow& f, const Completion& c) {
    return (c.flags & kCompBuffer) ? c.data : recv_buf(f).data;
  }
  // --verify. A TCP send's payload continues the flow's stream (or, for crr, a connection's,
  // from `at`); a datagram's is drawn from its sequence number, after the header.
  void fill(Flow& f, Buf& b, bool udp, uint64_t seq) {
    if (!verify_) return;
    if (udp) {
      f.tx->fill(b.data + kUdpHeaderBytes, seq * b.len + kUdpHeaderBytes, b.len - kUdpHeaderBytes);
    } else {
      f.tx->fill(b.data, f.tx_off, b.len);
      f.tx_off += b.len;
    }
  }
  // A stream datagram's header, in the flow's wire format (iperf3's sequence starts at 1).
  void write_header(Flow& f, Buf& b, int64_t now) {
    switch (f.slot->udp_wire) {
      case UdpWire::mtperf:
        write_udp_header(b.data, f.seq, now);
        return;
      case UdpWire::iperf3:
      case UdpWire::iperf3_64:
        write_iperf3_udp_header(b.data, f.seq + 1, now, f.slot->udp_wire == UdpWire::iperf3_64);
        return;
    }
  }
  void fill_at(Flow& f, Buf& b, uint64_t at) {
    if (verify_) f.tx->fill(b.data, at, b.len);
  }
  void check(Flow& f, const Completion& c, uint64_t at) {
    if (!verify_) return;
    VerifyStats& v = f.slot->stats.verify;
    uint64_t bad = v.bad_receives;
    v.check(*f.rx, recv_data(f, c), size_t(c.bytes), at);
    if (v.bad_receives != bad) [[unlikely]]
      FlowCounters::add(f.slot->counters.bad_receives, 1);
  }
  void check_stream(Flow& f, const Completion& c) {
    if (!verify_) return;
    check(f, c, f.rx_off);
    f.rx_off += uint64_t(c.bytes);
  }
  // A datagram of `size` bytes as sent (its sequence's place in the stream), as received.
  void check_datagram(Flow& f, const Completion& c, uint64_t seq, uint32_t size) {
    if (!verify_ || c.bytes <= int32_t(kUdpHeaderBytes)) return;
    VerifyStats& v = f.slot->stats.verify;
    uint64_t bad = v.bad_receives;
    v.check(*f.rx, recv_data(f, c) + kUdpHeaderBytes, size_t(c.bytes) - kUdpHeaderBytes,
            kUdpHeaderBytes, seq * size, seq);
    if (v.bad_receives != bad) [[unlikely]]
      FlowCounters::add(f.slot->counters.bad_receives, 1);
  }
  void setup_verify();
  void post(Flow& f, int conn, Op op, Buf b, Kind k);
  void post_recv(Flow& f, int conn) {
    if (conn == armed_conn_) return;  // a multishot receive is still armed there
    post(f, conn, Op::recv, recv_buf(f), kRecv);
  }
  void close_conn(int conn) {
    if (conn == armed_conn_) armed_conn_ = -1;
    e_.close(conn);
  }
  void fail(Flow& f, const char* what, int err);
  void finish(Flow& f);
  void record_latency(Flow& f, int64_t rtt_ns) {
    if (!measuring() || !spec_.measure) return;
    sample_latency(f, rtt_ns);
  }
  void sample_latency(Flow& f, int64_t rtt_ns) {
    const uint64_t v = uint64_t(std::max<int64_t>(rtt_ns, 0));
    job_.latency.record(v);
    FlowStats& s = f.slot->stats;
    ++s.latency_count;
    s.latency_sum_ns += v;
    if (s.latency) s.latency->record(v);
  }
  void sample_connect(int64_t ns) {
    if (job_.connect_latency) job_.connect_latency->record(uint64_t(std::max<int64_t>(ns, 0)));
  }

  E& e_;
  WorkerJob& job_;
  const TestSpec& spec_;
  PhaseClock& clock_;
  std::vector<Flow> flows_;
  std::vector<int64_t> ring_;   // rr: burst send timestamps per flow
  std::vector<uint64_t> seqs_;  // UDP rr: sequence of each slot (0 = free)
  uint32_t live_ = 0;
  const bool provided_;  // the engine provides receive buffers: recycle them after use
  // rr/crr with one transaction in flight: a request's send and the next receive are linked
  // (WorkReq::link); the peer reads the whole request before it answers, so this cannot stall.
  const bool link_;
  // rr/crr with one transaction in flight: a request's or answer's send is unsignaled
  // (WorkReq::signal = false), so with a multishot receive armed a transaction costs one CQE
  // per side. Why it is safe: a flow at burst 1 has one send buffer (buffers_per_flow) and posts
  // its next send on a connection only after the answer to the previous one has arrived
  // completely (client: the response; server: the next request, which the client sends only
  // after the whole previous response). The peer answers only after reading all it was sent,
  // so by then the kernel had copied the previous send out of the buffer and it had succeeded:
  // neither the buffer's reuse nor the engine's release of the send (at the next send, or at
  // close) comes early. A UDP request given up on after udp_timeout_s is rewritten as it would be
  // with signaled sends. A failed send still completes, with kQuiet.
  const bool quiet_;
  // Stream senders post nothing: the receiver pulls the data (Caps::passive_sender). A sender
  // waits for the end of the phase, then half-closes.
  const bool passive_;
  const bool verify_;
  const int64_t udp_timeout_ns_;   // a UDP rr request unanswered this long is lost
  std::vector<Pattern> patterns_;  // --verify: two per flow, made before the timed phase
  int armed_conn_ = -1;  // while dispatching a receive that stays armed (kCompMore): its conn
  bool precise_clock_ = false;  // a flow times something (setup()); else the coarse clock does
};

template <EngineType E>
void Worker<E>::fail(Flow& f, const char* what, int err) {
  FlowCounters::add(f.slot->counters.errors, 1);
  if (f.slot->stats.error.empty()) {
    f.slot->stats.error = std::string(what) + ": " + std::strerror(err);
    // An engine that knows more than an errno (the verb and the completion's status) says it.
    if constexpr (requires { e_.error_text(f.conn); }) {
      const char* text = f.conn >= 0 ? e_.error_text(f.conn) : nullptr;
      if (text) f.slot->stats.error = std::string(what) + ": " + text;
    }
  }
  finish(f);
}

template <EngineType E>
void Worker<E>::finish(Flow& f) {
  if (f.done) return;
  f.done = true;
  --live_;
}

// Inlined: at each call site `op` and `k` are constants, and what depends on them folds away.
template <EngineType E>
[[gnu::always_inline]] inline void Worker<E>::post(Flow& f, int conn, Op op, Buf b, Kind k) {
  WorkReq r;
  r.op = op;
  r.buf = b;
  bool quiet = quiet_ && k == kSend;
  r.cookie = cookie(f.idx, conn, quiet ? kQuiet : k);
  r.signal = !quiet;
  r.link = link_ && k == kSend;
  if (e_.post(conn, std::span<const WorkReq>(&r, 1)) != 1) {
    fail(f, "queueing an operation", ENOSPC);
    return;
  }
  if (quiet) {
    count_sent(f, b.len, 1);  // no completion will say so
  } else if (op == Op::send) {
    ++f.sends_out;
  }
}

}  // namespace mtperf

#include "workloads/kind.hpp"
#include "workloads/worker_impl.hpp"
