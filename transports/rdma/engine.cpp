// The rdma engine: construction, connections, posting and receive buffers (engine.hpp).
#include "transports/rdma/engine.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

#include "transports/rdma/settings.hpp"
#include "verbs/cm.hpp"
#include "verbs/flow_math.hpp"

namespace mtperf::rdma {

namespace {
constexpr size_t kWcBatch = 32;
constexpr int64_t kLastWqeWaitNs = 100'000'000;  // a draining queue pair's wait for its event
}  // namespace

RdmaEngine::RdmaEngine(std::shared_ptr<WorkerRes> res, const EngineMode& mode)
    : res_(std::move(res)),
      vx_(res_->verbs()),
      lay_(res_->layout()),
      mode_(mode),
      verb_(lay_.verb),
      consumes_(verb_ == Verb::send || verb_ == Verb::write_imm),
      signal_every_(res_->settings().signal_every),
      tx_depth_(res_->settings().tx_depth),
      stream_(!res_->config().request_response) {
  cm_ch_ = make_channel(vx_);
  uint32_t n = lay_.conns;
  conns_.resize(n);
  free_ring_.resize(n);
  for (uint32_t i = res_->setup_conns(); i < n; ++i)
    free_ring_[free_count_++] = int(i);
  uint32_t sq_ring = std::bit_ceil(lay_.sq_depth);  // every device's sq_cap is within it
  sq_mask_ = sq_ring - 1;
  uint32_t pend_ring = std::bit_ceil(2 * (res_->config().queue_depth + lay_.depth) + 8);
  pend_mask_ = pend_ring - 1;
  uint32_t arr_ring = std::bit_ceil(lay_.depth + 2);
  arr_mask_ = arr_ring - 1;
  sq_.resize(size_t(n) * sq_ring);
  pend_.resize(size_t(n) * pend_ring);
  arr_.resize(size_t(n) * arr_ring);
  slot_posted_.assign(lay_.recv_buffers && !lay_.srq ? lay_.slots : 0, 0);
  slot_owner_.assign(lay_.recv_buffers && lay_.srq ? lay_.slots : 0, 0);
  dirty_.reserve(n * 2);
  polled_.reserve(n * 2);
  starved_.reserve(n * 2);
  tails_.reserve(n * 2);
  drains_.reserve(n);
  ready_.reserve(std::min<size_t>(size_t(n) * (sq_ring + arr_ring) + 256, 1u << 20));
  wrs_.resize(sq_ring + 1);
  sges_.resize(2 * (sq_ring + 1));
  wcs_.resize(kWcBatch);
}

RdmaEngine::~RdmaEngine() {
  flush();
  finish_fins();
  for (size_t i = 0; i < conns_.size(); ++i)
    close(int(i));
  while (!drains_.empty() && monotonic_ns() < conns_[drains_.front()].drain_until) {
    check_faults();
    settle_drains(false);
  }
  settle_drains(true);
  vx_.destroy_event_channel(cm_ch_);
}

uint64_t RdmaEngine::table_bytes(const Layout& l, const EngineConfig& cfg) {
  // As the constructor sizes them.
  uint64_t sq_ring = std::bit_ceil(l.sq_depth);
  uint64_t pend_ring = std::bit_ceil(2 * (cfg.queue_depth + l.depth) + 8);
  uint64_t arr_ring = std::bit_ceil(l.depth + 2);
  uint64_t n = l.conns;
  uint64_t ready = std::min<uint64_t>(n * (sq_ring + arr_ring) + 256, 1u << 20);
  return n * (sizeof(Conn) + sq_ring * sizeof(SqEntry) + pend_ring * sizeof(Pending) +
              arr_ring * sizeof(Arrival) + 4 * sizeof(int) + 2 * sizeof(int)) +
         ready * sizeof(Completion) + (sq_ring + 1) * (sizeof(ibv_send_wr) + 2 * sizeof(ibv_sge)) +
         l.slots * (sizeof(uint8_t) + sizeof(uint16_t)) + kWcBatch * sizeof(ibv_wc);
}

Caps RdmaEngine::caps() const {
  Caps c = rdma_caps(res_->settings());
  uint32_t inl = UINT32_MAX;
  for (auto& d : std::as_const(*res_).devices())
    inl = std::min(inl, d->max_inline);
  c.max_inline = inl == UINT32_MAX ? 0 : inl;
  c.max_outstanding = std::max<uint32_t>(c.max_outstanding, 8);
  return c;
}

const char* RdmaEngine::error_text(int id) const {
  if (id < 0 || size_t(id) >= conns_.size() || conns_[id].err.empty()) return nullptr;
  return conns_[id].err.c_str();
}

int RdmaEngine::take_conn() {
  if (free_count_ == 0 && !drains_.empty()) {
    check_faults();
    settle_drains(false);
    if (free_count_ == 0) end_drain(drains_.front());  // the oldest goes without its event
  }
  if (free_count_ == 0) return -ENOSPC;
  int id = free_ring_[free_head_];
  free_head_ = (free_head_ + 1) % uint32_t(free_ring_.size());
  --free_count_;
  return id;
}

void RdmaEngine::free_conn(int id) {
  Conn& c = conns_[id];
  uint16_t gen = uint16_t((c.gen + 1) & 0x7fff);
  std::vector<int> backlog = std::move(c.backlog);
  backlog.clear();
  c = Conn{};
  c.gen = gen;
  c.backlog = std::move(backlog);  // its capacity, for the next listener here
  if (!slot_posted_.empty()) {
    for (uint32_t i = 0; i < lay_.slots_per_conn; ++i)
      slot_posted_[lay_.slot_index(uint32_t(id), i)] = 0;
  }
  free_ring_[(free_head_ + free_count_) % free_ring_.size()] = id;
  ++free_count_;
}

void RdmaEngine::tag(int id) {
  Conn& c = conns_[id];
  if (c.id)
    c.id->context = reinterpret_cast<void*>(uintptr_t(uint64_t(c.gen) << 32 | uint32_t(id)));
  if (lay_.srq && c.qp) qpn_[c.qp->qp_num] = id;
  if (c.qp && !slot_posted_.empty()) {
    for (uint32_t i = 0; i < lay_.recv_per_qp; ++i)
      slot_posted_[lay_.slot_index(uint32_t(id), i)] = 1;
  }
}

int RdmaEngine::adopt(Endpoint& ep) {
  auto& e = static_cast<RdmaEndpoint&>(ep);
  if (e.kind != RdmaEndpoint::Kind::conn || (!e.id && !e.qp) || e.res != res_) return -EINVAL;
  int id = int(e.conn);
  bool landing = verb_ != Verb::send;
  if (landing && (e.peer.slots == 0 || e.peer.slot_size < lay_.slot_size)) return -EPROTO;
  if (!e.id) {  // out of band: no rdma_cm id, its QP in RTS and the TCP connection
    Conn& c = conns_[id];
    c = Conn{};
    c.qp = e.qp;
    c.oob_fd = e.oob_fd;
    c.port = e.port;
    c.dev = e.dev;
    c.peer = e.peer;
    c.st = St::up;
    if (c.oob_fd >= 0) ++oob_conns_;
    e.release();
    tag(id);
    return id;
  }
  rdma_event_channel* old = e.ch;
  if (vx_.migrate_id(e.id, cm_ch_) != 0) return -errno;
  Conn& c = conns_[id];
  c = Conn{};
  c.id = e.id;
  c.qp = e.id->qp;
  c.dev = e.dev;
  c.peer = e.peer;
  c.st = St::up;
  e.release();
  vx_.destroy_event_channel(old);
  tag(id);
  return id;
}

int RdmaEngine::listen_adopt(Endpoint& ep) {
  auto& e = static_cast<RdmaEndpoint&>(ep);
  if (e.kind != RdmaEndpoint::Kind::listener || !e.id) return -EINVAL;
  int id = take_conn();
  if (id < 0) return id;
  rdma_event_channel* old = e.ch;
  if (vx_.migrate_id(e.id, cm_ch_) != 0) {
    int err = errno;
    free_conn(id);
    return -err;
  }
  Conn& c = conns_[id];
  c.id = e.id;
  c.st = St::listener;
  c.target = &e;
  e.release();
  e.id = nullptr;
  vx_.destroy_event_channel(old);
  tag(id);
  // The listener's id went to the engine; the endpoint keeps the proof (setup) for the requests.
  return id;
}

int RdmaEngine::open(const Endpoint& ep) {
  const auto& e = static_cast<const RdmaEndpoint&>(ep);
  if (e.kind != RdmaEndpoint::Kind::target) return -EINVAL;
  int id = take_conn();
  if (id < 0) return id;
  Conn& c = conns_[id];
  c.target = &e;
  c.st = St::resolving;
  if (vx_.create_id(cm_ch_, &c.id, nullptr, RDMA_PS_TCP) != 0) {
    int err = errno;
    free_conn(id);
    return -err;
  }
  tag(id);
  if (!apply_tos(vx_, c.id, res_->settings()).empty()) {
    destroy_id(vx_, c.id);
    free_conn(id);
    return -EINVAL;
  }
  sockaddr* src = e.source.family() == AF_UNSPEC ? nullptr : const_cast<sockaddr*>(e.source.get());
  if (vx_.resolve_addr(c.id, src, const_cast<sockaddr*>(e.remote.get()), kResolveMs) != 0) {
    int err = errno;
    destroy_id(vx_, c.id);
    free_conn(id);
    return -err;
  }
  return id;
}

int RdmaEngine::accept(int listen_id) {
  Conn& l = conns_[listen_id];
  if (l.st != St::listener || l.backlog.empty()) return -EAGAIN;
  int id = l.backlog.front();
  l.backlog.erase(l.backlog.begin());
  return id;
}

void RdmaEngine::close(int id) {
  Conn& c = conns_[id];
  if (c.st == St::free || c.st == St::draining) return;
  if (c.qp && lay_.srq && c.st != St::listener && c.st != St::resolving) {
    // On the shared receive queue: to the error state now, destroyed once it has let go of the
    // queue's receives (settle_drains). Its completions are ignored meanwhile.
    disconnect(c);
    ibv_qp_attr err{};
    err.qp_state = IBV_QPS_ERR;
    vx_.modify_qp(c.qp, &err, IBV_QP_STATE);
    c.st = St::draining;
    c.drain_until = monotonic_ns() + kLastWqeWaitNs;
    drains_.push_back(id);
    return;
  }
  if (c.id || c.qp) {
    if (c.qp && lay_.srq) qpn_.erase(c.qp->qp_num);
    if (c.st != St::listener && c.st != St::resolving) disconnect(c);
    destroy_objects(c);
  }
  free_conn(id);
}

void RdmaEngine::disconnect(Conn& c) {
  if (c.id) {
    vx_.disconnect(c.id);
  } else if (c.qp) {
    // rdma_disconnect's two effects, out of band: what the QP holds completes (flushed), and the
    // peer learns (its TCP connection ends).
    ibv_qp_attr err{};
    err.qp_state = IBV_QPS_ERR;
    vx_.modify_qp(c.qp, &err, IBV_QP_STATE);
  }
  if (c.oob_fd >= 0) {
    ::close(c.oob_fd);
    c.oob_fd = -1;
    --oob_conns_;
  }
}

void RdmaEngine::destroy_objects(Conn& c) {
  if (c.id) {
    destroy_id(vx_, c.id);
  } else if (c.qp) {
    vx_.destroy_qp(c.qp);
  }
  c.id = nullptr;
  c.qp = nullptr;
  if (c.oob_fd >= 0) {
    ::close(c.oob_fd);
    c.oob_fd = -1;
    --oob_conns_;
  }
}

void RdmaEngine::shutdown_send(int id) {
  Conn& c = conns_[id];
  if (c.st == St::free || c.st == St::listener || c.st == St::draining || c.fin_sent) return;
  c.fin_sent = true;
  if (c.st == St::failed) return;
  Pending p;
  p.kind = kSqFin;
  push_pending(c, id, p);
}

bool RdmaEngine::push_pending(Conn& c, int id, const Pending& p) {
  if (c.pend_tail - c.pend_head > pend_mask_) return false;
  pend_[size_t(id) * (pend_mask_ + 1) + (c.pend_tail++ & pend_mask_)] = p;
  mark_dirty(id);
  return true;
}

int RdmaEngine::post(int id, std::span<const WorkReq> reqs) {
  Conn& c = conns_[id];
  if (c.st == St::free || c.st == St::draining) return -EBADF;
  int n = 0;
  for (const WorkReq& r : reqs) {
    if (r.op == Op::recv) {
      arm(id, r.cookie);
    } else if (r.op == Op::accept) {
      if (c.st != St::listener) return n > 0 ? n : -EINVAL;
      if (!c.backlog.empty()) {
        push_ready({r.cookie, accept(id), 0, 0, nullptr});
      } else {
        c.accept_armed = true;
        c.accept_cookie = r.cookie;
      }
    } else if (r.op == Op::send) {
      if (verb_ == Verb::read) return n > 0 ? n : -EOPNOTSUPP;  // a passive sender posts none
      if (c.st == St::failed) {
        push_ready({r.cookie, c.error, kCompError, 0, nullptr});
      } else {
        Pending p;
        p.cookie = r.cookie;
        p.buf = r.buf;
        p.kind = r.signal ? kSqSend : kSqQuiet;
        if (!push_pending(c, id, p)) return n;
      }
    } else {
      return n > 0 ? n : -EOPNOTSUPP;
    }
    ++n;
  }
  return n;
}

void RdmaEngine::arm(int id, uint64_t cookie) {
  Conn& c = conns_[id];
  c.recv_cookie = cookie;
  c.armed = true;
  while (c.arr_head != c.arr_tail && c.armed) {
    Arrival a = arr_[size_t(id) * (arr_mask_ + 1) + (c.arr_head++ & arr_mask_)];
    deliver(c, id, a.slot, a.bytes, slot_ptr(a.slot));
  }
  if (c.eof_owed) {
    deliver_end(c, 0);
  } else if (c.error_owed) {
    deliver_end(c, c.error);
  }
  if (!c.armed) return;
  if (verb_ == Verb::read && !c.reads_started && c.st == St::up) {
    c.reads_started = true;
    for (uint32_t i = 0; i < lay_.slots_per_conn; ++i) {
      Pending p;
      p.kind = kSqRead;
      p.slot = lay_.slot_index(uint32_t(id), i);
      push_pending(c, id, p);
    }
  }
  if (mode_.memory_poll && !c.polled) {
    c.polled = true;
    polled_.push_back(id);
  }
}

void RdmaEngine::deliver(Conn& c, int id, uint32_t slot, int32_t bytes, const std::byte* data) {
  if (c.armed) {
    push_ready({c.recv_cookie, bytes, uint16_t(kCompBuffer | kCompMore), uint16_t(slot), data});
    return;
  }
  if (c.arr_tail - c.arr_head > arr_mask_) return;  // cannot happen: one per posted receive
  arr_[size_t(id) * (arr_mask_ + 1) + (c.arr_tail++ & arr_mask_)] = {slot, bytes};
}

void RdmaEngine::deliver_end(Conn& c, int32_t bytes) {
  if (bytes < 0) c.error_told = true;
  if (!c.armed) {
    (bytes == 0 ? c.eof_owed : c.error_owed) = true;
    return;
  }
  push_ready({c.recv_cookie, bytes, uint16_t(bytes < 0 ? kCompError : 0), 0, nullptr});
  c.armed = false;
  c.polled = false;
  c.eof_owed = c.error_owed = false;
}

void RdmaEngine::fail_conn(int id, int err, const std::string& why) {
  Conn& c = conns_[id];
  if (c.st == St::free || c.st == St::failed || c.st == St::draining) return;
  if (c.err.empty()) c.err = why;
  c.error = -err;
  bool listener = c.st == St::listener;
  c.st = St::failed;
  if (listener) return;
  while (c.pend_head != c.pend_tail) {
    Pending& p = pend_[size_t(id) * (pend_mask_ + 1) + (c.pend_head++ & pend_mask_)];
    if (p.kind == kSqSend || p.kind == kSqQuiet) {
      push_ready({p.cookie, -err, kCompError, 0, nullptr});
    }
  }
  if (!c.error_told && !c.fin_seen) deliver_end(c, -err);
}

void RdmaEngine::recycle(uint16_t buf_id) {
  uint32_t slot = buf_id;
  if (verb_ == Verb::write) return;  // a polled landing slot: nothing to give back
  auto active = [](const Conn& c) { return c.st == St::up || c.st == St::accepting; };
  if (lay_.srq) {
    DeviceRes& d = *res_->devices().front();
    int id = verb_ == Verb::send ? slot_owner_[slot] : int(lay_.conn_of_slot(slot));
    res_->repost(d, nullptr, kSrqConn, 0, verb_ == Verb::send ? slot : 0);
    Conn& c = conns_[id];
    if (active(c)) {
      ++c.reposted;
      if (credit_update_due(c.reposted, c.announced, lay_.granted)) mark_dirty(id);
    }
    return;
  }
  int id = int(lay_.conn_of_slot(slot));
  Conn& c = conns_[id];
  if (verb_ == Verb::read) {
    if (c.armed && c.st == St::up && !c.fin_seen) {
      Pending p;
      p.kind = kSqRead;
      p.slot = slot;
      push_pending(c, id, p);
    }
    return;
  }
  if (!active(c) || !c.qp) return;
  if (!slot_posted_.empty()) {
    if (slot_posted_[slot]) return;  // the slot of a connection closed and opened again
    slot_posted_[slot] = 1;
  }
  if (res_->repost(*c.dev, c.qp, uint32_t(id), c.gen, verb_ == Verb::send ? slot : 0) != 0) {
    return;  // the queue pair is in error: its failure is on its way through the CQ
  }
  ++c.reposted;
  if (credit_update_due(c.reposted, c.announced, lay_.granted)) mark_dirty(id);
}

}  // namespace mtperf::rdma
