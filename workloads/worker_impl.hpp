#pragma once
// Definitions of Worker<E> (included by worker.hpp only).
#include <algorithm>

namespace mtperf {

inline constexpr int64_t kMaxPollNs = 100'000'000;      // the loop looks at the clock this often
inline constexpr int64_t kPacingCreditNs = 10'000'000;  // catch-up allowed after a late wake-up
inline constexpr int kUdpFinCopies = 3;

template <EngineType E>
void Worker<E>::setup() {
  uint32_t n = uint32_t(job_.flows.size());
  flows_.resize(n);
  ring_.assign(size_t(n) * spec_.burst, 0);
  seqs_.assign(size_t(n) * spec_.burst, 0);
  uint32_t per = n ? e_.pool().count() / n : 0;
  // Shared buffers (engine_config.hpp): every flow sends from buffer 0 and receives into 1.
  const bool shared = shares_buffers(spec_, e_.caps()) && e_.pool().count() == kSharedBuffers;
  if (shared) per = job_.flow_buffers ? job_.flow_buffers : buffers_per_flow(spec_, e_.caps());
  for (uint32_t i = 0; i < n; ++i) {
    Flow& f = flows_[i];
    f.slot = job_.flows[i];
    f.idx = i;
    f.buf0 = shared ? 0 : i * per;
    f.nbufs = per;
    f.rbuf = shared ? 1 : f.buf0 + per - 1;
    ++live_;
    if (per < 2) {
      fail(f, "buffer pool too small", ENOMEM);
      continue;
    }
    FlowSlot& s = *f.slot;
    if (!s.endpoint) {
      fail(f, "no connection from set-up", ENOTCONN);
      continue;
    }
    if (s.role == Role::crr_server) {
      f.listen = e_.listen_adopt(*s.endpoint);
      if (f.listen < 0) fail(f, "adopting the listener", -f.listen);
    } else if (s.role != Role::crr_client) {
      f.conn = e_.adopt(*s.endpoint);
      if (f.conn < 0) fail(f, "adopting the connection", -f.conn);
    }
    set_timing(f);
  }
  if (verify_) setup_verify();
}

template <EngineType E>
void Worker<E>::set_timing(Flow& f) {
  const FlowSlot& s = *f.slot;
  // The roles that time something: latency (rr and crr clients), pacing, UDP's send stamps
  // and jitter. A worker of other roles alone (rr and crr servers, TCP receivers, unpaced TCP
  // senders) reads the clock only for its deadlines, and a coarse clock does for those.
  bool udp = s.proto == Proto::udp;
  bool paced_sender = s.role == Role::sender && s.rate_bps > 0 && !passive_;
  if (s.role == Role::rr_client || s.role == Role::crr_client || paced_sender ||
      (udp && (s.role == Role::sender || s.role == Role::receiver))) {
    precise_clock_ = true;
  }
  if (paced_sender) {
    f.interval_ns = int64_t(double(spec_.stream_msg_size()) * 8 * 1e9 / s.rate_bps);
    f.interval_ns = std::max<int64_t>(f.interval_ns, 1);
  }
  if (s.role == Role::crr_client && s.conn_rate > 0)
    f.interval_ns = std::max<int64_t>(int64_t(1e9 / s.conn_rate), 1);
}

template <EngineType E>
void Worker<E>::setup_verify() {
  // Direction 0 is what the flow's client side sends (a stream's data, whichever end sends it:
  // both ends know the flow by the same id), 1 what its server side answers.
  patterns_.reserve(2 * flows_.size());
  for (Flow& f : flows_) {
    const uint32_t id = f.slot->id;
    patterns_.emplace_back(verify_key(spec_.verify_seed, id, 0));
    patterns_.emplace_back(verify_key(spec_.verify_seed, id, 1));
    const Pattern* d0 = &patterns_[patterns_.size() - 2];
    const Pattern* d1 = &patterns_.back();
    bool client = f.slot->role == Role::rr_client || f.slot->role == Role::crr_client;
    bool server = f.slot->role == Role::rr_server || f.slot->role == Role::crr_server;
    f.tx = server ? d1 : d0;
    f.rx = client ? d1 : d0;
    f.slot->stats.verify.enabled = true;
    // The receiver reads the sender's memory itself (RDMA READ): no send carries the pattern.
    if (passive_ && !f.done)
      fail(f, "--verify: this transport's receiver reads the sender's buffers directly",
           EOPNOTSUPP);
  }
}

template <EngineType E>
void Worker<E>::start(Flow& f, int64_t now) {
  if (f.done) return;
  f.next_send_ns = now;
  switch (f.slot->role) {
    case Role::sender:
      pump_sender(f, now);
      break;
    case Role::receiver:
    case Role::rr_server:
      post_recv(f, f.conn);
      break;
    case Role::rr_client:
      for (uint32_t i = 0; i < spec_.burst && !f.done; ++i)
        rr_send_request(f, now);
      post_recv(f, f.conn);
      break;
    case Role::crr_client:
      crr_open(f);
      break;
    case Role::crr_server:
      post(f, f.listen, Op::accept, Buf{}, kAccept);
      break;
  }
}

template <EngineType E>
bool Worker<E>::needs_timers() const {
  bool timers = false;
  for (const Flow& f : flows_) {
    timers |= f.interval_ns > 0 || f.slot->role == Role::crr_client ||
              (f.slot->role == Role::rr_client && f.slot->proto == Proto::udp);
  }
  return timers;
}

// At the clock's finish, the flows whose peer never says it has ended: crr servers, and UDP's
// receivers and rr servers.
template <EngineType E>
void Worker<E>::on_finish() {
  for (Flow& f : flows_) {
    Role r = f.slot->role;
    bool udp = f.slot->proto == Proto::udp;
    if (r == Role::crr_server || (udp && (r == Role::receiver || r == Role::rr_server))) {
      finish(f);
    }
  }
}

// Runs the timers that are due; returns the soonest one still to come (kNoTimer: none).
template <EngineType E>
inline int64_t Worker<E>::run_timers(int64_t now) {
  int64_t next = kNoTimer;
  for (Flow& f : flows_)
    next = std::min(next, next_timer(f, now));
  return next;
}

template <EngineType E>
void Worker<E>::run() {
  setup();
  int64_t now = now_ns();
  for (Flow& f : flows_)
    start(f, now);
  const bool timers = needs_timers();
  std::array<Completion, 64> comps;
  bool saw_done = false, saw_finish = false;
  bool fresh = false;  // `now` was read after the last poll: one clock read per turn is enough
  while (live_ > 0) {
    if (!fresh) now = clock_now();
    fresh = false;
    if (!saw_done && phase_done()) {
      saw_done = true;
      for (Flow& f : flows_)
        on_phase_done(f, now);
    }
    if (!saw_finish && clock_.finish.load(std::memory_order_relaxed)) {
      saw_finish = true;
      on_finish();
    }
    if (clock_.abort.load(std::memory_order_relaxed)) break;
    if (now > clock_.hard_deadline_ns) {
      for (Flow& f : flows_) {
        if (!f.done) fail(f, "no end of test from the peer before the deadline", ETIMEDOUT);
      }
      break;
    }
    const int64_t next = timers ? run_timers(now) : kNoTimer;
    if (live_ == 0) break;
    int64_t timeout =
        next == kNoTimer ? kMaxPollNs : std::clamp<int64_t>(next - now, 0, kMaxPollNs);
    int n = e_.poll(std::span<Completion>(comps), spec_.wait, timeout);
    if (n < 0) {
      for (Flow& f : flows_)
        fail(f, "engine poll", -n);
      break;
    }
    if (n > 0) {
      now = clock_now();
      fresh = true;
    }
    for (int i = 0; i < n; ++i)
      dispatch(comps[i], now);
  }
}

template <EngineType E>
void Worker<E>::dispatch(const Completion& c, int64_t now) {
  Flow& f = flows_[c.cookie >> 32];
  int conn = int((c.cookie >> 8) & 0xffffff);
  Kind k = Kind(c.cookie & 0xff);
  if (k == kSend || k == kFin || k == kQuiet) {
    on_send(f, c, k, now);
  } else if (!f.done) {
    if (k == kAccept) {
      on_accept(f, c);
    } else {
      armed_conn_ = (c.flags & kCompMore) ? conn : -1;
      on_recv(f, c, conn, now);
      armed_conn_ = -1;
    }
  }
  if constexpr (requires { e_.recycle(c.buf_id); }) {
    if (provided_ && (c.flags & kCompBuffer)) e_.recycle(c.buf_id);
  }
}

template <EngineType E>
void Worker<E>::on_send(Flow& f, const Completion& c, Kind k, int64_t now) {
  if (k == kQuiet) {
    // Counted when posted. Only a failure is news (an engine may report a success anyway: a
    // linked send is reported from its receive); what failed was not sent after all.
    if (c.bytes >= 0 || f.done) return;
    count_sent(f, 0 - uint64_t(quiet_len(f)), 0 - uint64_t(1));
  } else {
    --f.sends_out;
  }
  if (f.done) return;
  FlowCounters& ctr = f.slot->counters;
  if (c.bytes < 0) {
    int err = -c.bytes;
    bool udp = f.slot->proto == Proto::udp;
    if (phase_done() && (err == EPIPE || err == ECONNRESET || err == ECONNREFUSED)) {
      finish(f);
      return;
    }
    if (!(udp && (err == ENOBUFS || err == EAGAIN || err == ECONNREFUSED))) {
      fail(f, "send", err);
      return;
    }
    FlowCounters::add(ctr.errors, 1);  // a datagram the kernel did not take
  } else if (k == kSend) {
    count_sent(f, uint64_t(c.bytes), 1);
  }
  if (k == kFin) {
    if (f.sends_out == 0) finish(f);
    return;
  }
  if (f.slot->role == Role::sender) pump_sender(f, now);
}

template <EngineType E>
void Worker<E>::on_recv(Flow& f, const Completion& c, int conn, int64_t now) {
  if (c.bytes < 0 && f.slot->role != Role::crr_server) {
    int err = -c.bytes;
    if (phase_done() && (err == ECONNRESET || err == ECONNREFUSED)) {
      finish(f);
    } else if (f.slot->proto == Proto::udp && err == ECONNREFUSED) {
      FlowCounters::add(f.slot->counters.errors, 1);  // ICMP from a peer not yet listening
      post_recv(f, conn);
    } else {
      fail(f, "receive", err);
    }
    return;
  }
  bool udp = f.slot->proto == Proto::udp;
  switch (f.slot->role) {
    case Role::receiver:
      if (udp) {
        udp_receiver_recv(f, c, now);
      } else if (c.bytes == 0) {
        e_.shutdown_send(f.conn);
        finish(f);
      } else {
        FlowCounters::add(f.slot->counters.bytes_recv, uint64_t(c.bytes));
        FlowCounters::add(f.slot->counters.msgs_recv, 1);
        check_stream(f, c);
        post_recv(f, f.conn);
      }
      break;
    case Role::rr_client:
      udp ? udp_rr_client_recv(f, c, now) : rr_client_recv(f, c, now);
      break;
    case Role::rr_server:
      rr_server_recv(f, c);
      break;
    case Role::crr_client:
      crr_client_recv(f, c, conn, now);
      break;
    case Role::crr_server:
      crr_server_recv(f, c, conn);
      break;
    case Role::sender:
      break;
  }
}

template <EngineType E>
void Worker<E>::on_phase_done(Flow& f, int64_t now) {
  if (f.done) return;
  switch (f.slot->role) {
    case Role::sender:
      pump_sender(f, now);
      break;
    case Role::rr_client:
      if (f.inflight == 0 && !f.shut) {
        f.shut = true;
        if (f.slot->proto == Proto::tcp) {
          e_.shutdown_send(f.conn);
        } else {
          for (int i = 0; i < kUdpFinCopies; ++i) {
            Buf b = send_buf(f, spec_.req_size);
            write_udp_header(b.data, kFinSeq, now);
            post(f, f.conn, Op::send, b, kFin);
          }
        }
      }
      break;
    case Role::crr_client:
      if (f.conn < 0) finish(f);
      break;
    default:
      break;
  }
}

template <EngineType E>
int64_t Worker<E>::on_timers(Flow& f, int64_t now) {
  if (f.done) return kNoTimer;
  if (f.slot->role == Role::crr_client) {
    f.timer_due_ns = kNoTimer;
    if (f.open_due) {  // crr_open() may set the timer again
      f.open_due = false;
      if (phase_done()) {
        finish(f);
      } else {
        crr_open(f);
      }
    }
    return f.done ? kNoTimer : f.timer_due_ns;
  }
  if (f.slot->role == Role::sender && f.interval_ns > 0 && !f.shut) {
    pump_sender(f, now);
    return f.sends_out < f.nbufs - 1 ? f.next_send_ns : kNoTimer;
  }
  if (f.slot->role != Role::rr_client || f.slot->proto != Proto::udp) {
    f.timer_due_ns = kNoTimer;
    return kNoTimer;
  }
  int64_t next = kNoTimer;
  size_t base = size_t(f.idx) * spec_.burst;
  for (uint32_t j = 0; j < spec_.burst; ++j) {
    if (seqs_[base + j] == 0) continue;
    if (now - ring_[base + j] < udp_timeout_ns_) {
      next = std::min(next, ring_[base + j] + udp_timeout_ns_);
      continue;
    }
    seqs_[base + j] = 0;  // lost: the flow goes on
    --f.inflight;
    ++f.slot->stats.udp.lost;
    if (!phase_done()) rr_send_request(f, now);
  }
  if (phase_done()) on_phase_done(f, now);
  f.timer_due_ns = next;  // rr_send_request() brings it forward for a newer request
  return next;
}

}  // namespace mtperf

#include "workloads/worker_roles.hpp"
