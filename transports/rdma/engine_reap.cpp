// The rdma engine's completion side: the CQ, the polled landing slots, the credit words, and
// waiting (engine.hpp).
#include <arpa/inet.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>

#include "transports/rdma/engine.hpp"
#include "verbs/cm.hpp"
#include "verbs/completion.hpp"
#include "verbs/device_rules.hpp"
#include "verbs/flow_math.hpp"

namespace mtperf::rdma {

namespace {

constexpr int64_t kCmCheckNs = 1'000'000;  // rdma_cm events are looked at this often, spinning
constexpr uint32_t kAckBatch = 64;         // completion events acknowledged together
constexpr uint32_t kSpinsPerClock = 256;
constexpr uint32_t kSpinsPerClockLong = 4096;
constexpr int64_t kLongTimeoutNs = 10'000'000;

template <class T>
T load_acquire(const void* p) {
  return std::atomic_ref<T>(*static_cast<T*>(const_cast<void*>(p))).load(std::memory_order_acquire);
}

}  // namespace

void RdmaEngine::push_ready(const Completion& c) {
  ready_.push_back(c);
}

int RdmaEngine::drain_ready(std::span<Completion> out) {
  size_t n = std::min(out.size(), ready_.size() - ready_head_);
  std::copy_n(ready_.begin() + ptrdiff_t(ready_head_), n, out.begin());
  ready_head_ += n;
  if (ready_head_ == ready_.size()) {
    ready_.clear();
    ready_head_ = 0;
  }
  return int(n);
}

int RdmaEngine::reap(DeviceRes& d) {
  int n = ibv_poll_cq(d.cq, int(wcs_.size()), wcs_.data());
  if (n < 0) {
    for (size_t i = 0; i < conns_.size(); ++i) {
      if (conns_[i].dev == &d) fail_conn(int(i), EIO, "ibv_poll_cq on " + d.name() + " failed");
    }
    return 0;
  }
  for (int i = 0; i < n; ++i) {
    const ibv_wc& wc = wcs_[i];
    wr_recv(wc.wr_id) ? on_recv_wc(wc) : on_send_wc(wc);
  }
  return n;
}

void RdmaEngine::on_send_wc(const ibv_wc& wc) {
  uint32_t id = wr_conn(wc.wr_id);
  if (id >= conns_.size()) return;
  Conn& c = conns_[id];
  if (c.st == St::free || c.st == St::draining || wr_gen(wc.wr_id) != c.gen) return;  // closed
  uint32_t seq = wr_index(wc.wr_id);
  if (seq - c.sq_head >= c.sq_tail - c.sq_head) return;  // retired already
  retire(int(id), seq, wc.status, &wc);
}

void RdmaEngine::retire(int id, uint32_t upto, int status, const ibv_wc* wc) {
  Conn& c = conns_[id];
  while (c.sq_head != upto + 1) {
    SqEntry e = sq_entry(id, c.sq_head);
    bool ok = c.sq_head != upto || status == IBV_WC_SUCCESS;
    ++c.sq_head;
    if (ok) {
      if (e.kind == kSqSend) {
        push_ready({e.cookie, e.bytes, 0, 0, nullptr});
      } else if (e.kind == kSqRead && c.armed && !c.fin_seen) {
        deliver(c, id, e.slot, e.bytes, slot_ptr(e.slot));
      }
      continue;
    }
    static constexpr const char* kWhat[] = {"",
                                            "",
                                            "RDMA READ",
                                            "SEND (end of stream)",
                                            "RDMA WRITE (credits)",
                                            "RDMA WRITE (credits)"};
    const char* what = e.kind > kSqQuiet ? kWhat[e.kind] : verb_name(verb_);
    int err = wc_errno(ibv_wc_status(status));
    if (e.kind == kSqSend || e.kind == kSqQuiet) {
      push_ready({e.cookie, -err, kCompError, 0, nullptr});
    }
    if (c.err.empty()) c.err = wc_text(*wc, what);
    fail_conn(id, err, c.err);
  }
  if (c.pend_head != c.pend_tail) mark_dirty(id);
  note_tail(id);
}

void RdmaEngine::on_recv_wc(const ibv_wc& wc) {
  uint32_t slot = wr_index(wc.wr_id);
  int id = -1;
  if (wr_conn(wc.wr_id) == kSrqConn) {
    auto it = qpn_.find(wc.qp_num);
    if (it != qpn_.end()) id = it->second;
    // A shared receive that completes, in error or not, leaves the queue: it goes back at once
    // unless the workload is handed its slot, or the queue would shrink below the credits
    // granted to the other connections (crr's churn fails some of them).
    bool gone = id < 0 || conns_[id].st == St::free || conns_[id].st == St::draining;
    if (gone || wc.status != IBV_WC_SUCCESS) {
      res_->repost(*res_->devices().front(), nullptr, kSrqConn, 0, slot);
      if (gone) return;
    }
  } else {
    id = int(wr_conn(wc.wr_id));
    if (size_t(id) >= conns_.size() || wr_gen(wc.wr_id) != conns_[id].gen) return;
    if (!slot_posted_.empty()) slot_posted_[slot] = 0;
  }
  Conn& c = conns_[id];
  if (c.st == St::free) return;
  if (wc.status != IBV_WC_SUCCESS) {
    if (c.err.empty()) c.err = wc_text(wc, "RECV");
    fail_conn(id, wc_errno(wc.status), c.err);
    return;
  }
  if (wc.wc_flags & IBV_WC_WITH_IMM) {
    c.peer_reposted = later_count(c.peer_reposted, ntohl(wc.imm_data));
    if (c.starved || c.pend_head != c.pend_tail) {
      c.starved = false;
      mark_dirty(id);
    }
  }
  if (wc.opcode == IBV_WC_RECV && wc.byte_len == 0) {  // the peer's end of stream
    if (lay_.srq) res_->repost(*res_->devices().front(), nullptr, kSrqConn, 0, slot);
    if (c.polled) poll_memory();  // what landed before it is delivered first
    c.fin_seen = true;
    deliver_end(c, 0);
    return;
  }
  uint32_t data_slot = slot;
  if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
    data_slot = lay_.slot_index(uint32_t(id), slot_of(c.received++, lay_.slots_per_conn));
  } else if (!slot_owner_.empty()) {
    slot_owner_[slot] = uint16_t(id);
  }
  deliver(c, id, data_slot, int32_t(wc.byte_len), slot_ptr(data_slot));
}

void RdmaEngine::poll_memory() {
  const uint32_t per = lay_.slots_per_conn;
  size_t keep = 0;
  for (size_t i = 0; i < polled_.size(); ++i) {
    int id = polled_[i];
    Conn& c = conns_[id];
    if (!c.polled) continue;
    if (!c.armed) {
      c.polled = false;
      continue;
    }
    polled_[keep++] = id;
    for (uint32_t k = 0; k < per && c.armed; ++k) {
      uint32_t s = slot_of(c.received, per);
      const std::byte* t = res_->conn_slot(uint32_t(id), s) + lay_.slot_size - kTrailerBytes;
      if (load_acquire<uint8_t>(t + 7) != slot_stamp(c.received, per)) break;
      uint32_t len = trailer_length(reinterpret_cast<const uint8_t*>(t));
      if (len > lay_.slot_size - kTrailerBytes) {
        fail_conn(id, EPROTO,
                  "RDMA WRITE: a landing slot's trailer gives " + std::to_string(len) +
                      " bytes, more than the slot holds");
        break;
      }
      ++c.received;
      deliver(c, id, lay_.slot_index(uint32_t(id), s), int32_t(len), t - len);
    }
  }
  polled_.resize(keep);
}

void RdmaEngine::poll_credit_words() {
  size_t keep = 0;
  for (size_t i = 0; i < starved_.size(); ++i) {
    int id = starved_[i];
    Conn& c = conns_[id];
    if (!c.starved) continue;
    if (c.st != St::up) {
      c.starved = false;
      continue;
    }
    uint32_t word = ntohl(load_acquire<uint32_t>(res_->ctrl(uint32_t(id))));
    c.peer_reposted = later_count(c.peer_reposted, word);
    if (credits_left(c.peer.credits, c.sent, c.peer_reposted) > 0) {
      c.starved = false;
      mark_dirty(id);
    } else {
      starved_[keep++] = id;
    }
  }
  starved_.resize(keep);
}

bool RdmaEngine::wait_events(int64_t timeout_ns) {
  auto& devs = res_->devices();
  std::array<pollfd, 9> fds{};
  if (devs.size() + 1 > fds.size()) return false;  // that many devices: spin instead
  for (auto& d : devs)
    ibv_req_notify_cq(d->cq, 0);
  // A completion that came between the last look and the arming raises no event.
  int got = 0;
  for (auto& d : devs)
    got += reap(*d);
  if (got > 0) return true;
  size_t n = 0;
  for (auto& d : devs)
    fds[n++] = {d->channel->fd, POLLIN, 0};
  fds[n++] = {cm_ch_->fd, POLLIN, 0};
  timespec ts{time_t(timeout_ns / 1'000'000'000), long(timeout_ns % 1'000'000'000)};
  if (ppoll(fds.data(), n, &ts, nullptr) <= 0) return true;
  for (size_t i = 0; i < devs.size(); ++i) {
    if (!(fds[i].revents & POLLIN)) continue;
    DeviceRes& d = *devs[i];
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    while (vx_.get_cq_event(d.channel, &cq, &ctx) == 0)
      ++d.cq_events;
    if (d.cq_events >= kAckBatch) {
      vx_.ack_cq_events(d.cq, d.cq_events);
      d.cq_events = 0;
    }
  }
  if (fds[n - 1].revents & POLLIN) cm_events();
  return true;
}

int RdmaEngine::poll(std::span<Completion> out, Wait wait, int64_t timeout_ns) {
  int64_t deadline = 0;
  uint32_t spins = 0;
  const uint32_t spins_per_clock =
      timeout_ns >= kLongTimeoutNs ? kSpinsPerClockLong : kSpinsPerClock;
  for (;;) {
    flush();
    if (int n = drain_ready(out)) return n;
    auto& devs = res_->devices();
    for (size_t i = 0; i < devs.size(); ++i)
      reap(*devs[i]);
    if (!polled_.empty()) poll_memory();
    if (!starved_.empty()) poll_credit_words();
    if (int n = drain_ready(out)) return n;
    if (!dirty_.empty()) continue;  // credits or send-queue room came: post, then look again
    // Nothing else to do: a stream's last sends that nothing would complete get a signalled
    // request behind them (a stream keeps its window out otherwise, and never comes here so).
    if (!tails_.empty() && flush_tails()) continue;
    if (wait == Wait::none) return 0;
    // Spinning reads the clock (and rdma_cm's events) once per many turns only: where the clock
    // is no vDSO call (an HPET clocksource) a read costs more than a turn. A long timeout (the
    // workload's usual 100 ms) needs no precision: once per kSpinsPerClockLong turns.
    if (wait != Wait::block || !polled_.empty() || !starved_.empty()) {
      if (++spins % spins_per_clock != 0) continue;
    }
    int64_t now = monotonic_ns();
    if (deadline == 0) deadline = now + timeout_ns;
    if (now >= next_cm_check_ns_) {
      next_cm_check_ns_ = now + kCmCheckNs;
      cm_events();
      check_faults();
      settle_drains(false);
      if (!ready_.empty() || !dirty_.empty()) continue;
    }
    if (now >= deadline) return 0;
    if (wait == Wait::block && polled_.empty() && starved_.empty()) wait_events(deadline - now);
  }
}

}  // namespace mtperf::rdma
