#include "verbs/perftest_run.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "platform/clock.hpp"
#include "platform/interrupt.hpp"
#include "verbs/completion.hpp"
#include "verbs/device_res.hpp"
#include "verbs/oob_qp.hpp"
#include "verbs/tcp_exact.hpp"

namespace mtperf::rdma {

namespace {

using perftest::ClientExchange;
using perftest::Program;
using Step = ClientExchange::Step;

constexpr uint32_t kCycleBuffer = 4096;  // our page, as perftest sends its own
constexpr uint32_t kLatRecvs = 16;       // send_lat: receives kept posted
constexpr uint32_t kLatSends = 64;       // latency programs: send-queue entries
constexpr int kMaxOutReads = 255;        // READs in flight at most: a QP attribute's byte
// perftest's inline defaults for RC (DEF_INLINE_SEND_RC_UC, DEF_INLINE_WRITE).
constexpr uint32_t kInlineSend = 236, kInlineWrite = 220;

bool is_lat(Program p) {
  return p == Program::send_lat || p == Program::write_lat;
}

// What the test made on the device, destroyed in reverse order on every path.
struct Objects {
  VerbsApi& v;
  OobPort port;
  ibv_device_attr attr{};
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  uint8_t* buf = nullptr;
  uint32_t half = 0;  // bytes of each half of buf
  uint32_t max_inline = 0;
  uint32_t send_entries = 0;  // the send queue the device granted
  explicit Objects(VerbsApi& api) : v(api) {}
  Objects(const Objects&) = delete;
  Objects& operator=(const Objects&) = delete;
  ~Objects() {
    if (qp) v.destroy_qp(qp);
    if (mr) v.dereg_mr(mr);
    if (cq) v.destroy_cq(cq);
    if (pd) v.dealloc_pd(pd);
    std::free(buf);
  }
};

uint32_t inline_wanted(const PerftestAsk& a) {
  if (a.program == Program::read_bw) return 0;
  const uint32_t cap = a.settings.inline_cap;
  if (cap == kInlineAuto) {
    return a.program == Program::send_bw || a.program == Program::send_lat ? kInlineSend
                                                                           : kInlineWrite;
  }
  return cap == kInlineDevice ? kInlineSend : cap;
}

// The queue pair: RC, one completion queue for both sides, the send queue deep enough for the
// stream's window; inline as asked where the device grants it, else none.
void make_qp(Objects& o, const PerftestAsk& a) {
  const bool lat = is_lat(a.program);
  ibv_qp_init_attr qa{};
  qa.send_cq = qa.recv_cq = o.cq;
  qa.qp_type = IBV_QPT_RC;
  qa.cap.max_send_wr = lat ? kLatSends : std::max<uint32_t>(a.settings.tx_depth, 2);
  qa.cap.max_recv_wr = kLatRecvs;
  qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
  qa.cap.max_inline_data = inline_wanted(a);
  o.qp = o.v.create_qp(o.pd, &qa);
  if (!o.qp && qa.cap.max_inline_data > 0) {
    qa.cap.max_inline_data = 0;
    o.qp = o.v.create_qp(o.pd, &qa);
  }
  if (!o.qp)
    throw_errno("ibv_create_qp (RC, " + std::to_string(qa.cap.max_send_wr) + " send entries)",
                errno);
  o.max_inline = qa.cap.max_inline_data;
  o.send_entries = qa.cap.max_send_wr;
}

void make_objects(Objects& o, int fd, const std::string& name, const PerftestAsk& a) {
  o.port = oob_port_of_socket(o.v, fd, "the address that reaches " + name, a.settings);
  if (int rc = o.v.query_device(o.port.ctx, &o.attr); rc != 0) throw_errno("ibv_query_device", rc);
  o.pd = o.v.alloc_pd(o.port.ctx);
  if (!o.pd) throw_errno("ibv_alloc_pd", errno);
  const uint32_t cqe = std::max<uint32_t>(a.settings.tx_depth, kLatSends) + kLatRecvs + 8;
  o.cq = o.v.create_cq(o.port.ctx, int(cqe), nullptr, nullptr, 0);
  if (!o.cq) throw_errno("ibv_create_cq", errno);
  o.half = std::max(a.size, kCycleBuffer);
  o.half = (o.half + kCycleBuffer - 1) / kCycleBuffer * kCycleBuffer;
  if (posix_memalign(reinterpret_cast<void**>(&o.buf), kCycleBuffer, 2 * size_t(o.half)) != 0)
    throw std::runtime_error("no memory for perftest's buffer of " +
                             std::to_string(2 * size_t(o.half)) + " bytes");
  std::memset(o.buf, 0, 2 * size_t(o.half));
  o.mr = o.v.reg_mr(o.pd, o.buf, 2 * size_t(o.half),
                    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  if (!o.mr) throw_errno("ibv_reg_mr", errno);
  make_qp(o, a);
  oob_init(o.v, o.qp, o.port);
}

perftest::Keys our_keys(const Objects& o) {
  perftest::Keys k;
  k.lid = o.port.lid;
  // What the device answers at once, as perftest advertises it (128 on soft-RoCE).
  k.out_reads = uint16_t(std::clamp<int>(o.attr.max_qp_rd_atom, 1, kMaxOutReads));
  k.qpn = o.qp->qp_num;
  k.psn = random_psn();
  k.rkey = o.mr->rkey;
  k.vaddr = reinterpret_cast<uintptr_t>(o.buf) + o.half;
  k.gid = o.port.gid;
  return k;
}

// RTR and RTS from the two sides' keys and the MTU agreed.
void bring_up(Objects& o, const ClientExchange& ex, const perftest::Keys& mine,
              const PerftestAsk& a) {
  const perftest::Keys& peer = ex.peer_keys();
  auto qp_of = [&](const perftest::Keys& k, int initiator) {
    OobQp q;
    q.qpn = k.qpn;
    q.psn = k.psn;
    q.lid = k.lid;
    q.link = o.port.link;
    q.mtu = ex.mtu();
    q.depths = {uint8_t(std::clamp<int>(k.out_reads, 1, kMaxOutReads)),
                uint8_t(std::clamp<int>(initiator, 1, kMaxOutReads))};
    q.gid = k.gid;
    return q;
  };
  // READs in flight: as many as perftest answers at once, within what our device issues.
  oob_rtr_rts(o.v, o.qp, o.port, qp_of(mine, o.attr.max_qp_init_rd_atom),
              qp_of(peer, peer.out_reads), a.settings);
}

// One step of the exchange that moves bytes: ours out, perftest's answer in and checked.
void exchange_step(int fd, ClientExchange& ex, const PerftestAsk& a) {
  const std::string what = "perftest's " + std::string(perftest::to_string(ex.step()));
  const int64_t deadline = now_ns() + a.timeout_ns;
  const std::vector<uint8_t>& out = ex.outgoing();
  if (!out.empty()) send_exact(fd, out.data(), out.size(), deadline, what + " (sending ours)");
  const size_t n = ex.answer_bytes();
  if (n == 0) {
    ex.proceed();  // done: written, nothing read
    return;
  }
  std::vector<uint8_t> answer(n);
  std::string err = recv_exact(fd, answer.data(), n, deadline);
  if (!err.empty()) throw std::runtime_error(what + ": " + err);
  ex.take(answer);
}

// Waits with a deadline that moves with progress: nothing completed for the step timeout, or an
// interrupt, ends the data phase.
struct Progress {
  const PerftestAsk& a;
  PerftestRun& r;
  const char* what;  // "SENDs completed"
  int64_t last_ns = now_ns();
  uint32_t spins = 0;
  // After an empty poll: true when interrupted; throws when nothing moved for the timeout.
  bool idle() {
    if (++spins % 1024 != 0) return false;
    if (interrupts() > 0) return r.interrupted = true;
    if (now_ns() - last_ns > a.timeout_ns)
      throw std::runtime_error(
          "perftest's server stopped answering: " + std::to_string(r.completed) + " of " +
          std::to_string(a.iters) + " " + what);
    return false;
  }
  void moved() {
    spins = 0;
    last_ns = now_ns();
  }
};

void check(const ibv_wc& wc) {
  if (wc.status != IBV_WC_SUCCESS)
    throw std::runtime_error(wc_text(wc, "a work request to perftest's server failed"));
}

void post(ibv_qp* qp, ibv_send_wr& wr) {
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp, &wr, &bad); rc != 0) throw_errno("ibv_post_send", rc);
}

void post_recv(Objects& o, const PerftestAsk& a) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(o.buf) + o.half, a.size, o.mr->lkey};
  ibv_recv_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(o.qp, &wr, &bad); rc != 0) throw_errno("ibv_post_recv", rc);
}

// A work request of `size` bytes from the first half of the buffer; to the peer's buffer for
// WRITE and READ.
ibv_send_wr data_wr(Objects& o, const PerftestAsk& a, const perftest::Keys& peer, ibv_sge& sge) {
  sge = {reinterpret_cast<uintptr_t>(o.buf), a.size, o.mr->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  const Program p = a.program;
  wr.opcode = p == Program::send_bw || p == Program::send_lat ? IBV_WR_SEND
              : p == Program::read_bw                         ? IBV_WR_RDMA_READ
                                                              : IBV_WR_RDMA_WRITE;
  if (wr.opcode != IBV_WR_SEND) {
    wr.wr.rdma.remote_addr = peer.vaddr;
    wr.wr.rdma.rkey = peer.rkey;
  }
  return wr;
}

// send_bw, write_bw, read_bw: `iters` work requests, `window` in flight; one in `every`
// signalled, whose wr_id is how many were posted up to it.
void run_bw(Objects& o, const PerftestAsk& a, const perftest::Keys& peer, PerftestRun& r) {
  const uint32_t window = std::max<uint32_t>(1, std::min(a.settings.tx_depth, o.send_entries));
  const uint32_t every = std::clamp<uint32_t>(a.settings.signal_every, 1, std::max(1u, window / 2));
  ibv_sge sge;
  ibv_send_wr wr = data_wr(o, a, peer, sge);
  const unsigned inl =
      a.size <= o.max_inline && wr.opcode != IBV_WR_RDMA_READ ? IBV_SEND_INLINE : 0;
  Progress p{a, r, "work requests completed"};
  uint64_t posted = 0;
  r.first_ns = now_ns();
  while (r.completed < a.iters) {
    for (; posted < a.iters && posted - r.completed < window;) {
      wr.wr_id = ++posted;
      wr.send_flags = inl | (posted % every == 0 || posted == a.iters ? IBV_SEND_SIGNALED : 0);
      post(o.qp, wr);
    }
    ibv_wc wc[16];
    int n = ibv_poll_cq(o.cq, 16, wc);
    if (n < 0) throw std::runtime_error("ibv_poll_cq failed");
    if (n == 0 && p.idle()) return;
    for (int i = 0; i < n; ++i) {
      check(wc[i]);
      r.completed = std::max<uint64_t>(r.completed, wc[i].wr_id);
    }
    if (n > 0) p.moved();
  }
  r.last_ns = now_ns();
}

// Polls the completion queue until a receive completed (true) or the wait ended; counts send
// completions off `sends`.
bool await_recv(Objects& o, Progress& p, uint32_t& sends) {
  for (;;) {
    ibv_wc wc;
    int n = ibv_poll_cq(o.cq, 1, &wc);
    if (n < 0) throw std::runtime_error("ibv_poll_cq failed");
    if (n == 0) {
      if (p.idle()) return false;
      continue;
    }
    check(wc);
    p.moved();
    if (wc.opcode & IBV_WC_RECV) return true;
    --sends;
  }
}

// Reaps send completions without waiting (write_lat: nothing else completes); returns how many.
uint32_t reap_sends(Objects& o) {
  ibv_wc wc[4];
  int n = ibv_poll_cq(o.cq, 4, wc);
  if (n < 0) throw std::runtime_error("ibv_poll_cq failed");
  for (int i = 0; i < n; ++i)
    check(wc[i]);
  return uint32_t(n);
}

// Room in the send queue for one more: a device may acknowledge a round's request after the
// peer's answer came (soft-RoCE coalesces ACKs), so completions are reaped as they come, and
// waited for only when the queue is full. False when the wait ended (an interrupt).
bool make_room(Objects& o, Progress& p, uint32_t& sends) {
  while (sends >= kLatSends - 1) {
    if (uint32_t n = reap_sends(o); n > 0) {
      sends -= n;
      p.moved();
    } else if (p.idle()) {
      return false;
    }
  }
  return true;
}

// send_lat: we send first; each SEND perftest answers with its own.
void run_send_lat(Objects& o, const PerftestAsk& a, PerftestRun& r) {
  ibv_sge sge;
  ibv_send_wr wr = data_wr(o, a, perftest::Keys{}, sge);
  wr.send_flags = IBV_SEND_SIGNALED | (a.size <= o.max_inline ? IBV_SEND_INLINE : 0);
  uint64_t recvs = std::min<uint64_t>(kLatRecvs, a.iters);  // posted before RTR
  uint32_t sends = 0;
  Progress p{a, r, "round trips"};
  r.first_ns = now_ns();
  while (r.completed < a.iters) {
    // A SEND's completion is reaped by the next wait at the latest (await_recv): a few at most.
    if (sends >= kLatSends - 1) throw std::runtime_error("SENDs to perftest are not completing");
    const int64_t t0 = now_ns();
    post(o.qp, wr);
    ++sends;
    if (!await_recv(o, p, sends)) return;
    r.rtt.record(uint64_t(now_ns() - t0));
    ++r.completed;
    if (recvs < a.iters) {
      post_recv(o, a);
      ++recvs;
    }
  }
  r.last_ns = now_ns();
}

// write_lat: perftest writes round 1 first; we answer round i once its byte says i.
void run_write_lat(Objects& o, const PerftestAsk& a, const perftest::Keys& peer, PerftestRun& r) {
  ibv_sge sge;
  ibv_send_wr wr = data_wr(o, a, peer, sge);
  wr.send_flags = IBV_SEND_SIGNALED | (a.size <= o.max_inline ? IBV_SEND_INLINE : 0);
  const volatile uint8_t* seen = o.buf + o.half + a.size - 1;  // where perftest writes
  uint8_t* mine = o.buf + a.size - 1;
  uint32_t sends = 0;
  int64_t sent_at = 0;
  Progress p{a, r, "round trips"};
  r.first_ns = now_ns();
  for (uint64_t i = 1; i <= a.iters; ++i) {
    while (*seen != uint8_t(i)) {
      if (uint32_t n = reap_sends(o); n > 0) sends -= n;
      if (p.idle()) return;
    }
    const int64_t t = now_ns();
    if (i > 1) r.rtt.record(uint64_t(t - sent_at));
    p.moved();
    if (!make_room(o, p, sends)) return;
    *mine = uint8_t(i);
    sent_at = now_ns();
    post(o.qp, wr);
    ++sends;
    r.completed = i;
  }
  while (sends > 0) {  // the last WRITE delivered before the queue pair goes
    if (uint32_t n = reap_sends(o); n > 0) sends -= n;
    if (p.idle()) return;
  }
  r.last_ns = now_ns();
}

void run_data(Objects& o, const PerftestAsk& a, ClientExchange& ex, PerftestRun& r) {
  switch (a.program) {
    case Program::send_lat:
      run_send_lat(o, a, r);
      return;
    case Program::write_lat:
      run_write_lat(o, a, ex.peer_keys(), r);
      return;
    default:
      break;
  }
  run_bw(o, a, ex.peer_keys(), r);
  if (a.program == Program::send_bw) return;
  perftest::BwReport mine;  // perftest's units: MB/s of 2^20 bytes, millions of messages/s
  mine.size = a.size;
  mine.iters = r.completed;
  const double s = double(std::max<int64_t>(r.last_ns - r.first_ns, 1)) / 1e9;
  mine.bw_avg = mine.bw_peak = double(r.completed) * a.size / s / double(1 << 20);
  mine.msg_rate = double(r.completed) / s / 1e6;
  ex.set_report(mine);
}

}  // namespace

PerftestRun run_perftest(VerbsApi& v, int fd, const std::string& name, const PerftestAsk& a) {
  Objects o(v);
  make_objects(o, fd, name, a);
  ClientExchange::Config c;
  c.program = a.program;
  c.cycle_buffer = int32_t(kCycleBuffer);
  c.mtu = o.port.mtu;
  c.keys = our_keys(o);
  c.with_gid = o.port.link != kLinkIb;
  ClientExchange ex(c);
  PerftestRun r;
  r.device = std::string(v.device_name(o.port.ctx)) + " port " + std::to_string(o.port.port);
  r.gid_index = o.port.gid_index;
  if (a.program == Program::send_lat) {  // before RTR: perftest answers at once
    for (uint64_t i = 0; i < std::min<uint64_t>(kLatRecvs, a.iters); ++i)
      post_recv(o, a);
  }
  while (!ex.finished()) {
    if (ex.step() == Step::rts) {
      bring_up(o, ex, c.keys, a);
      r.peer_version = ex.peer_version_text();
      r.path_mtu = 128u << ex.mtu();
      ex.proceed();
    } else if (ex.step() == Step::data) {
      run_data(o, a, ex, r);
      if (r.interrupted) return r;  // perftest is left to its own timeout; ours are gone
      ex.proceed();
    } else {
      exchange_step(fd, ex, a);
    }
  }
  return r;
}

}  // namespace mtperf::rdma
