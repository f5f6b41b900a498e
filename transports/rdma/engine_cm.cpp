// The rdma engine's rdma_cm side: crr's connections made and accepted on the data path, and
// the events that end connections (a peer's disconnect, a device's removal) (engine.hpp).
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "transports/rdma/engine.hpp"
#include "verbs/async_events.hpp"
#include "verbs/cm.hpp"
#include "verbs/completion.hpp"

namespace mtperf::rdma {

namespace {

constexpr int64_t kFinWaitNs = 1'000'000'000;  // how long teardown lets FINs complete
constexpr int64_t kOobCheckNs = 20'000'000;    // how often out-of-band sockets are looked at

}  // namespace

void RdmaEngine::cm_events() {
  rdma_cm_event* ev = nullptr;
  while (vx_.get_cm_event(cm_ch_, &ev) == 0)
    on_cm_event(ev);
  if (oob_conns_ > 0) oob_events();
}

void RdmaEngine::oob_events() {
  // One recv() per connection: every kOobCheckNs, not at each look at rdma_cm's channel, so that
  // a thread of many flows spends no more than a few system calls per ms on it.
  int64_t now = monotonic_ns();
  if (now < next_oob_check_ns_) return;
  next_oob_check_ns_ = now + kOobCheckNs;
  for (size_t i = 0; i < conns_.size(); ++i) {
    Conn& c = conns_[i];
    if (c.oob_fd < 0 || c.st == St::draining) continue;
    char b = 0;
    ssize_t r = ::recv(c.oob_fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);
    if (r > 0) {
      // Nothing is sent on it after the set-up: a peer that does is not ours.
      on_disconnected(int(i), "the peer sent on its out-of-band connection after set-up", EPROTO);
    } else if (r == 0) {
      on_disconnected(int(i), "the peer closed its out-of-band connection", ECONNRESET);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      int err = errno;
      on_disconnected(
          int(i), (std::string("its out-of-band connection failed: ") + std::strerror(err)).c_str(),
          err);
    }
  }
}

int RdmaEngine::owner_of(rdma_cm_event* ev) {
  rdma_cm_id* owner = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ? ev->listen_id : ev->id;
  auto tagv = uint64_t(uintptr_t(owner ? owner->context : nullptr));
  uint32_t id = uint32_t(tagv);
  if (id >= conns_.size() || conns_[id].gen != uint16_t(tagv >> 32) || conns_[id].st == St::free) {
    if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
      rdma_cm_id* cm = ev->id;
      vx_.ack_cm_event(ev);
      vx_.reject(cm, nullptr, 0);
      vx_.destroy_id(cm);
    } else {
      vx_.ack_cm_event(ev);
    }
    return -1;
  }
  return int(id);
}

void RdmaEngine::on_cm_event(rdma_cm_event* ev) {
  const int id = owner_of(ev);
  if (id < 0) return;
  Conn& c = conns_[id];
  if (c.st == St::draining) {  // closed: its events tell nothing now
    vx_.ack_cm_event(ev);
    return;
  }
  switch (ev->event) {
    case RDMA_CM_EVENT_CONNECT_REQUEST:
      on_connect_request(id, ev);
      return;
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      vx_.ack_cm_event(ev);
      if (vx_.resolve_route(c.id, kResolveMs) != 0) {
        fail_conn(id, errno, std::string("rdma_resolve_route: ") + std::strerror(errno));
      }
      return;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
      vx_.ack_cm_event(ev);
      on_route_resolved(id);
      return;
    case RDMA_CM_EVENT_ESTABLISHED:
      on_established(id, ev);
      return;
    case RDMA_CM_EVENT_DISCONNECTED:
      vx_.ack_cm_event(ev);
      on_disconnected(id, "the peer disconnected (RDMA_CM_EVENT_DISCONNECTED)", ECONNRESET);
      return;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      vx_.ack_cm_event(ev);
      on_device_removed(id);
      return;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED: {
      std::string why = "connecting: " + event_text(ev);
      vx_.ack_cm_event(ev);
      fail_conn(id, ECONNREFUSED, why);
      return;
    }
    default:
      vx_.ack_cm_event(ev);
      return;
  }
}

void RdmaEngine::on_route_resolved(int id) {
  Conn& c = conns_[id];
  std::array<uint8_t, kPdBytes> mine{};
  try {
    c.dev = &res_->device(c.id->verbs);
    c.qp = res_->create_qp(c.id, *c.dev);
    encode_conn_info(res_->local_info(uint32_t(id), *c.dev, c.target->setup), mine.data());
  } catch (const std::exception& e) {
    fail_conn(id, EIO, e.what());
    return;
  }
  tag(id);
  int rc = res_->post_receives(*c.dev, c.qp, uint32_t(id), c.gen);
  if (rc != 0) {
    fail_conn(id, rc, std::string("posting receives: ") + std::strerror(rc));
    return;
  }
  if (std::string why = apply_ack_timeout(vx_, c.id, res_->settings()); !why.empty()) {
    fail_conn(id, EINVAL, why);
    return;
  }
  rdma_conn_param p = conn_param(local_depths(*c.dev), mine.data());
  if (vx_.connect(c.id, &p) != 0) {
    fail_conn(id, errno, std::string("rdma_connect: ") + std::strerror(errno));
    return;
  }
  c.st = St::connecting;
}

void RdmaEngine::on_established(int id, rdma_cm_event* ev) {
  Conn& c = conns_[id];
  if (c.st != St::connecting) {  // the passive side: up since rdma_accept
    vx_.ack_cm_event(ev);
    if (c.st != St::up) return;
    if (int rc = set_min_rnr_timer(vx_, c.qp, c.id->verbs); rc != 0) {
      fail_conn(id, rc, std::string("ibv_modify_qp (min_rnr_timer): ") + std::strerror(rc));
    }
    return;
  }
  std::string why = check_peer(ev->param.conn.private_data, ev->param.conn.private_data_len,
                               c.target->setup, verb_, c.peer);
  vx_.ack_cm_event(ev);
  if (!why.empty()) {
    fail_conn(id, EPROTO, "the server's answer is not ours: " + why);
    return;
  }
  if (int rc = set_min_rnr_timer(vx_, c.qp, c.id->verbs); rc != 0) {
    fail_conn(id, rc, std::string("ibv_modify_qp (min_rnr_timer): ") + std::strerror(rc));
    return;
  }
  c.st = St::up;
  mark_dirty(id);
}

// A failed accept tells the client at once (a reject) and leaves nothing behind: the queue pair,
// the id and the entry go, and the entry's generation changes, so that nothing the queue pair
// held is taken for a later connection's.
void RdmaEngine::refuse_accept(int id, rdma_cm_id* cm) {
  Conn& c = conns_[id];
  if (c.qp && lay_.srq) qpn_.erase(c.qp->qp_num);
  vx_.reject(cm, nullptr, 0);
  destroy_id(vx_, cm);
  free_conn(id);
}

void RdmaEngine::on_connect_request(int listener, rdma_cm_event* ev) {
  rdma_cm_id* cm = ev->id;
  std::array<uint8_t, kPdBytes> pd{};
  size_t len = std::min<size_t>(ev->param.conn.private_data_len, kPdBytes);
  if (ev->param.conn.private_data) std::memcpy(pd.data(), ev->param.conn.private_data, len);
  rdma_conn_param req = ev->param.conn;
  req.private_data = nullptr;  // gone with the event
  vx_.ack_cm_event(ev);
  Conn& l = conns_[listener];
  ConnInfo peer;
  int id = -1;
  if (l.st == St::listener && check_peer(pd.data(), len, l.target->setup, verb_, peer).empty()) {
    id = take_conn();
  }
  if (id < 0) {  // a stranger, or no room: refused
    vx_.reject(cm, nullptr, 0);
    vx_.destroy_id(cm);
    return;
  }
  Conn& c = conns_[id];
  c.st = St::accepting;  // taken: a failure below gives the entry back
  c.id = cm;
  c.peer = peer;
  c.listener = listener;
  std::array<uint8_t, kPdBytes> mine{};
  try {
    c.dev = &res_->device(cm->verbs);
    c.qp = res_->create_qp(cm, *c.dev);
    encode_conn_info(res_->local_info(uint32_t(id), *c.dev, l.target->setup), mine.data());
  } catch (const std::exception&) {
    refuse_accept(id, cm);
    return;
  }
  tag(id);
  rdma_conn_param p = conn_param(accept_depths(*c.dev, req), mine.data());
  if (res_->post_receives(*c.dev, c.qp, uint32_t(id), c.gen) != 0 ||
      !apply_ack_timeout(vx_, cm, res_->settings()).empty() || vx_.accept(cm, &p) != 0) {
    refuse_accept(id, cm);
    return;
  }
  // rdma_accept took the queue pair to RTS: it may answer as soon as the request is in.
  c.st = St::up;
  if (l.accept_armed) {
    l.accept_armed = false;
    push_ready({l.accept_cookie, id, 0, 0, nullptr});
  } else {
    l.backlog.push_back(id);
  }
}

void RdmaEngine::on_disconnected(int id, const char* why, int err) {
  Conn& c = conns_[id];
  if (c.st == St::free || c.st == St::listener) return;
  // The peer's FIN completed before it disconnected, but the event channel may be read before
  // the completion queue: whatever the queue holds goes first.
  if (err == ECONNRESET) {
    for (size_t i = 0; i < res_->devices().size(); ++i)
      while (reap(*res_->devices()[i]) > 0) {
      }
  }
  if (c.st == St::free) return;
  // The queue pair goes to the error state (rdma_cm leaves it as it was): what it holds
  // completes with a flush error, so nothing waits on a connection that is gone.
  disconnect(c);
  if (c.fin_seen && err == ECONNRESET) return;  // the end of the stream came first: normal
  fail_conn(id, err, std::string(verb_name(verb_)) + ": " + why);
}

void RdmaEngine::on_device_removed(int id) {
  DeviceRes* dev = conns_[id].dev;
  for (size_t i = 0; i < conns_.size(); ++i) {
    if ((dev && conns_[i].dev == dev) || i == size_t(id)) {
      on_disconnected(int(i), "the RDMA device was removed (RDMA_CM_EVENT_DEVICE_REMOVAL)", ENODEV);
    }
  }
}

void RdmaEngine::check_faults() {
  const FaultBoard* board = res_->faults();
  if (!board || board->head() == faults_seen_) return;
  board->read_since(faults_seen_, [this](const Fault& f) {
    if (f.scope == FaultScope::last_wqe) {
      // A queue pair on our shared receive queue has let go of its receives: if it is one of
      // ours (draining, or not closed yet), it may be destroyed without waiting.
      auto it = qpn_.find(uint32_t(f.id));
      if (it == qpn_.end()) return;
      Conn& c = conns_[it->second];
      if (c.dev && uint64_t(uintptr_t(c.dev->ctx)) == f.ctx) c.last_wqe = true;
      return;
    }
    for (size_t i = 0; i < conns_.size(); ++i) {
      const Conn& c = conns_[i];
      if (c.st == St::free || c.st == St::listener || c.st == St::draining || !c.dev) continue;
      uint32_t qpn = c.qp ? c.qp->qp_num : UINT32_MAX;
      uint32_t port = c.id ? c.id->port_num : c.port;
      if (fault_hits(f, uint64_t(uintptr_t(c.dev->ctx)), qpn, port, uint64_t(uintptr_t(c.dev->cq)),
                     uint64_t(uintptr_t(c.dev->srq)))) {
        fail_conn(int(i), EIO, std::string(verb_name(verb_)) + ": " + fault_text(f));
      }
    }
  });
}

void RdmaEngine::settle_drains(bool all) {
  if (drains_.empty()) return;
  int64_t now = monotonic_ns();
  size_t keep = 0;
  for (size_t i = 0; i < drains_.size(); ++i) {
    int id = drains_[i];
    const Conn& c = conns_[id];
    if (c.st != St::draining) continue;  // ended already (end_drain)
    if (all || c.last_wqe || now >= c.drain_until) {
      end_drain(id);
    } else {
      drains_[keep++] = id;
    }
  }
  drains_.resize(keep);
}

void RdmaEngine::end_drain(int id) {
  Conn& c = conns_[id];
  if (c.st != St::draining) return;
  ++ctr_.drained;
  if (!c.last_wqe) ++ctr_.drain_timeouts;
  if (c.qp) qpn_.erase(c.qp->qp_num);  // what it still completes is reposted as a stranger's
  destroy_objects(c);
  free_conn(id);
}

void RdmaEngine::finish_fins() {
  int64_t until = monotonic_ns() + kFinWaitNs;
  auto pending = [this] {
    for (const Conn& c : conns_) {
      if (c.st == St::up && c.fin_sent && c.sq_head != c.sq_tail) return true;
    }
    return false;
  };
  while (pending() && monotonic_ns() < until) {
    for (size_t i = 0; i < res_->devices().size(); ++i)
      reap(*res_->devices()[i]);
    cm_events();
    ready_.clear();
    ready_head_ = 0;
  }
}

}  // namespace mtperf::rdma
