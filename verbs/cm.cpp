#include "verbs/cm.hpp"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "platform/clock.hpp"

namespace mtperf::rdma {

int64_t monotonic_ns() {
  return now_ns();
}

int ms_until(int64_t deadline_ns) {
  return mtperf::ms_until(deadline_ns);
}

rdma_event_channel* make_channel(VerbsApi& v) {
  rdma_event_channel* ch = v.create_event_channel();
  if (!ch) {
    int err = errno;
    throw std::runtime_error(std::string("rdma_create_event_channel: ") + std::strerror(err) +
                             (err == ENOENT || err == ENODEV
                                  ? " (no /dev/infiniband/rdma_cm: the kernel has no rdma_cm, "
                                    "or its module rdma_ucm is not loaded)"
                                  : ""));
  }
  int fl = fcntl(ch->fd, F_GETFL);
  fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
  return ch;
}

void destroy_id(VerbsApi& v, rdma_cm_id* id) {
  if (!id) return;
  if (id->qp) v.cm_destroy_qp(id);
  v.destroy_id(id);
}

rdma_cm_event* next_event(VerbsApi& v, rdma_event_channel* ch, int64_t deadline_ns) {
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (v.get_cm_event(ch, &ev) == 0) return ev;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return nullptr;
    int ms = ms_until(deadline_ns);
    if (ms <= 0) return nullptr;
    pollfd p{ch->fd, POLLIN, 0};
    ::poll(&p, 1, std::min(ms, 100));
  }
}

std::string event_text(const rdma_cm_event* ev) {
  std::string s = rdma_event_str(ev->event);
  if (ev->status < 0) {
    s += std::string(" (") + std::strerror(-ev->status) + ")";
  } else if (ev->status > 0) {
    s += " (status " + std::to_string(ev->status) + ")";
  }
  return s;
}

rdma_cm_event* expect_event(VerbsApi& v, rdma_event_channel* ch, rdma_cm_event_type want,
                            int64_t deadline_ns, const std::string& what) {
  rdma_cm_event* ev = next_event(v, ch, deadline_ns);
  if (!ev) {
    throw std::runtime_error(what + ": no " + rdma_event_str(want) + " in time");
  }
  if (ev->event == want && ev->status == 0) return ev;
  std::string got = rdma_event_str(ev->event);
  std::string detail = event_text(ev).substr(got.size());
  v.ack_cm_event(ev);
  std::string hint;
  if (got == "RDMA_CM_EVENT_ADDR_ERROR" || got == "RDMA_CM_EVENT_ROUTE_ERROR") {
    hint = "; is the address on an RDMA device (rdma link) and reachable?";
  } else if (got == "RDMA_CM_EVENT_REJECTED" || got == "RDMA_CM_EVENT_UNREACHABLE") {
    hint = "; the server refused or did not answer (is it an mtperf of this version?)";
  }
  throw std::runtime_error(what + ": " + got + " instead of " + rdma_event_str(want) + detail +
                           hint);
}

rdma_conn_param conn_param(ReadDepths depths, const uint8_t* pd) {
  rdma_conn_param p{};
  p.private_data = pd;
  p.private_data_len = uint8_t(kPdBytes);
  p.responder_resources = depths.responder_resources;
  p.initiator_depth = depths.initiator_depth;
  p.flow_control = 1;
  p.retry_count = kTransportRetry;
  p.rnr_retry_count = kRnrRetry;
  return p;
}

ReadDepths local_depths(const DeviceRes& d) {
  return local_read_depths(d.attr.max_qp_rd_atom, d.attr.max_qp_init_rd_atom);
}

ReadDepths accept_depths(const DeviceRes& d, const rdma_conn_param& req) {
  return accept_read_depths(local_depths(d), {req.responder_resources, req.initiator_depth});
}

int set_min_rnr_timer(VerbsApi& v, ibv_qp* qp, ibv_context* ctx) {
  if (!qp || !ctx || ctx->device->transport_type != IBV_TRANSPORT_IB) return 0;
  ibv_qp_attr a{};
  a.min_rnr_timer = kMinRnrTimer;
  return v.modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER);
}

namespace {

std::string set_u8(VerbsApi& v, rdma_cm_id* id, int option, int value, const char* key) {
  if (value == kUnset) return "";
  uint8_t u = uint8_t(value);
  if (v.set_option(id, RDMA_OPTION_ID, option, &u, sizeof u) == 0) return "";
  int err = errno;
  return std::string("-O ") + key + "=" + std::to_string(value) +
         ": rdma_set_option: " + std::strerror(err);
}

}  // namespace

std::string apply_tos(VerbsApi& v, rdma_cm_id* id, const RdmaSettings& s) {
  return set_u8(v, id, RDMA_OPTION_ID_TOS, s.tos, "tos");
}

std::string apply_ack_timeout(VerbsApi& v, rdma_cm_id* id, const RdmaSettings& s) {
  return set_u8(v, id, RDMA_OPTION_ID_ACK_TIMEOUT, s.ack_timeout, "ack_timeout");
}

void resolve(VerbsApi& v, rdma_event_channel* ch, rdma_cm_id* id, const sockaddr* server,
             const sockaddr* source, int64_t deadline_ns, const std::string& what, bool route) {
  int ms = std::clamp(ms_until(deadline_ns), 1, kResolveMs);
  if (v.resolve_addr(id, const_cast<sockaddr*>(source), const_cast<sockaddr*>(server), ms) != 0) {
    throw_errno(what + ": rdma_resolve_addr", errno);
  }
  v.ack_cm_event(expect_event(v, ch, RDMA_CM_EVENT_ADDR_RESOLVED, deadline_ns, what));
  if (!route) return;
  if (v.resolve_route(id, std::clamp(ms_until(deadline_ns), 1, kResolveMs)) != 0) {
    throw_errno(what + ": rdma_resolve_route", errno);
  }
  v.ack_cm_event(expect_event(v, ch, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline_ns, what));
}

}  // namespace mtperf::rdma
