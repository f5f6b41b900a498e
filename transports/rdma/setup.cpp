#include "transports/rdma/setup.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "verbs/cm.hpp"

namespace mtperf::rdma {

namespace {

void fail_errno(const std::string& what) {
  int err = errno;
  throw_errno(what, err);
}

sockaddr* sa(const SockAddr& a) {
  return const_cast<sockaddr*>(a.get());
}

// The source address to resolve from: none (rdma_cm's choice) when its family is AF_UNSPEC.
const sockaddr* source_of(const SockAddr& a) {
  return a.family() == AF_UNSPEC ? nullptr : a.get();
}

// The connection's QP and receives, on the worker's resources for id's device.
void prepare(RdmaEndpoint& ep, const FlowSetup& s) {
  ep.res->cm_half(ep.id, flow_name(s), ep.dev, ep.conn);
}

class RdmaListener final : public FlowListener {
 public:
  RdmaListener(const SockAddr& where, const FlowSetup& setup, std::shared_ptr<WorkerRes> res)
      : setup_(setup), res_(std::move(res)), v_(res_->verbs()) {
    std::string what = flow_name(setup) + ": listening on " + where.to_string();
    ch_ = make_channel(v_);
    // A constructor that throws runs no destructor: what it made goes back here.
    try {
      if (v_.create_id(ch_, &id_, nullptr, RDMA_PS_TCP) != 0) {
        fail_errno(what + ": rdma_create_id");
      }
      // The ids of the connections it accepts take its type of service.
      if (std::string why = apply_tos(v_, id_, res_->settings()); !why.empty()) {
        throw std::runtime_error(what + ": " + why);
      }
      if (v_.bind_addr(id_, sa(where)) != 0) fail_errno(what + ": rdma_bind_addr");
      if (v_.listen(id_, setup.per_transaction ? 1024 : 4) != 0) fail_errno(what + ": rdma_listen");
      // Bound to an address of a device: its resources now, before the timed phase.
      if (id_->verbs) res_->device(id_->verbs);
    } catch (...) {
      close();
      throw;
    }
  }
  ~RdmaListener() override { close(); }
  uint16_t port() const override { return ntohs(v_.src_port(id_)); }
  int wait_fd() const override { return ch_->fd; }
  std::unique_ptr<Endpoint> accept(int64_t deadline_ns) override;
  std::unique_ptr<Endpoint> release() override {
    auto ep = std::make_unique<RdmaEndpoint>();
    ep->kind = RdmaEndpoint::Kind::listener;
    ep->res = res_;
    ep->setup = setup_;
    ep->id = id_;
    ep->ch = ch_;
    id_ = nullptr;
    ch_ = nullptr;
    return ep;
  }

 private:
  void establish(RdmaEndpoint& ep, const rdma_conn_param& req, int64_t deadline_ns,
                 const std::string& what);
  void close() {
    destroy_id(v_, id_);
    id_ = nullptr;
    if (ch_) v_.destroy_event_channel(ch_);
    ch_ = nullptr;
  }

  FlowSetup setup_;
  std::shared_ptr<WorkerRes> res_;
  VerbsApi& v_;
  rdma_event_channel* ch_ = nullptr;
  rdma_cm_id* id_ = nullptr;
};

// Answers the connection request with this side's queue pair and what the peer needs of it,
// then waits until the connection is established; the client hears of a failure at once.
void RdmaListener::establish(RdmaEndpoint& ep, const rdma_conn_param& req, int64_t deadline_ns,
                             const std::string& what) {
  rdma_cm_id* cm = ep.id;
  std::array<uint8_t, kPdBytes> mine{};
  try {
    prepare(ep, setup_);
    encode_conn_info(ep.res->local_info(ep.conn, *ep.dev, setup_), mine.data());
    if (std::string why = apply_ack_timeout(v_, cm, res_->settings()); !why.empty()) {
      throw std::runtime_error(what + ": " + why);
    }
  } catch (...) {
    v_.reject(cm, nullptr, 0);  // the client hears now, not at its deadline
    throw;
  }
  rdma_conn_param p = conn_param(accept_depths(*ep.dev, req), mine.data());
  if (v_.accept(cm, &p) != 0) {
    int err = errno;
    v_.reject(cm, nullptr, 0);
    throw_errno(what + ": rdma_accept", err);
  }
  v_.ack_cm_event(expect_event(v_, ep.ch, RDMA_CM_EVENT_ESTABLISHED, deadline_ns, what));
  if (int rc = set_min_rnr_timer(v_, ep.id->qp, ep.id->verbs); rc != 0) {
    throw_errno(what + ": ibv_modify_qp (min_rnr_timer)", rc);
  }
}

std::unique_ptr<Endpoint> RdmaListener::accept(int64_t deadline_ns) {
  rdma_cm_event* ev = nullptr;
  if (v_.get_cm_event(ch_, &ev) != 0) return nullptr;
  if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
    v_.ack_cm_event(ev);
    return nullptr;
  }
  std::array<uint8_t, kPdBytes> pd{};
  size_t len = std::min<size_t>(ev->param.conn.private_data_len, kPdBytes);
  if (ev->param.conn.private_data) std::memcpy(pd.data(), ev->param.conn.private_data, len);
  rdma_conn_param req = ev->param.conn;
  req.private_data = nullptr;  // gone with the event
  rdma_cm_id* cm = ev->id;
  v_.ack_cm_event(ev);
  ConnInfo peer;
  if (!check_peer(pd.data(), len, setup_, res_->settings().verb, peer).empty()) {
    v_.reject(cm, nullptr, 0);
    v_.destroy_id(cm);
    ++rejected_;
    return nullptr;
  }
  auto ep = std::make_unique<RdmaEndpoint>();
  ep->res = res_;
  ep->peer = peer;
  ep->id = cm;
  std::string what = flow_name(setup_) + ": accepting";
  try {
    ep->ch = make_channel(v_);
  } catch (...) {
    v_.reject(cm, nullptr, 0);
    ep->id = nullptr;
    v_.destroy_id(cm);
    throw;
  }
  // Its own channel: its events no longer mix with the listener's.
  if (v_.migrate_id(cm, ep->ch) != 0) {
    int err = errno;
    v_.reject(cm, nullptr, 0);
    throw_errno(what + ": rdma_migrate_id", err);
  }
  establish(*ep, req, deadline_ns, what);
  // One connection per flow: the listener has served its purpose.
  destroy_id(v_, id_);
  id_ = nullptr;
  return ep;
}

}  // namespace

RdmaEndpoint::~RdmaEndpoint() {
  VerbsApi& v = res ? res->verbs() : real_verbs();
  if (id && kind == Kind::conn) v.disconnect(id);
  destroy_id(v, id);
  if (ch) v.destroy_event_channel(ch);
  if (qp) v.destroy_qp(qp);
  if (oob_fd >= 0) ::close(oob_fd);
}

void RdmaEndpoint::release() {
  id = nullptr;
  ch = nullptr;
  qp = nullptr;
  oob_fd = -1;
}

std::unique_ptr<FlowListener> rdma_listen(const SockAddr& where, const FlowSetup& setup,
                                          std::shared_ptr<WorkerRes> res) {
  return std::make_unique<RdmaListener>(where, setup, std::move(res));
}

std::unique_ptr<Endpoint> rdma_connect(const SockAddr& server, const SockAddr& source,
                                       const FlowSetup& setup, std::shared_ptr<WorkerRes> res,
                                       int64_t deadline_ns) {
  auto ep = std::make_unique<RdmaEndpoint>();
  ep->res = std::move(res);
  ep->setup = setup;
  ep->remote = server;
  ep->source = source;
  std::string what = flow_name(setup) + ": connecting to " + server.to_string();
  VerbsApi& v = ep->res->verbs();
  ep->ch = make_channel(v);
  if (v.create_id(ep->ch, &ep->id, nullptr, RDMA_PS_TCP) != 0) {
    fail_errno(what + ": rdma_create_id");
  }
  if (std::string why = apply_tos(v, ep->id, ep->res->settings()); !why.empty()) {
    throw std::runtime_error(what + ": " + why);
  }
  if (setup.per_transaction) {
    // Each transaction connects on the data path; the device's resources are made now, before
    // the timed phase, from where the address resolves.
    ep->kind = RdmaEndpoint::Kind::target;
    resolve(v, ep->ch, ep->id, server.get(), source_of(source), deadline_ns, what, false);
    ep->dev = &ep->res->device(ep->id->verbs);
    destroy_id(v, ep->id);
    ep->id = nullptr;
    v.destroy_event_channel(ep->ch);
    ep->ch = nullptr;
    return ep;
  }
  resolve(v, ep->ch, ep->id, server.get(), source_of(source), deadline_ns, what, true);
  prepare(*ep, setup);
  std::array<uint8_t, kPdBytes> mine{};
  encode_conn_info(ep->res->local_info(ep->conn, *ep->dev, setup), mine.data());
  if (std::string why = apply_ack_timeout(v, ep->id, ep->res->settings()); !why.empty()) {
    throw std::runtime_error(what + ": " + why);
  }
  rdma_conn_param p = conn_param(local_depths(*ep->dev), mine.data());
  if (v.connect(ep->id, &p) != 0) fail_errno(what + ": rdma_connect");
  rdma_cm_event* ev = expect_event(v, ep->ch, RDMA_CM_EVENT_ESTABLISHED, deadline_ns, what);
  std::string why = check_peer(ev->param.conn.private_data, ev->param.conn.private_data_len, setup,
                               ep->res->settings().verb, ep->peer);
  v.ack_cm_event(ev);
  if (!why.empty()) throw std::runtime_error(what + ": the server's answer is not ours: " + why);
  if (int rc = set_min_rnr_timer(v, ep->id->qp, ep->id->verbs); rc != 0) {
    throw_errno(what + ": ibv_modify_qp (min_rnr_timer)", rc);
  }
  return ep;
}

}  // namespace mtperf::rdma
