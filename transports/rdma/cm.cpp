#include "transports/rdma/cm.hpp"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "platform/clock.hpp"

namespace mtperf::rdma {

namespace {
constexpr uint8_t kReadDepth = 16;  // RDMA READs in flight per queue pair, at most
}

int64_t monotonic_ns() {
  return now_ns();
}

int ms_until(int64_t deadline_ns) {
  return mtperf::ms_until(deadline_ns);
}

rdma_event_channel* make_channel() {
  rdma_event_channel* ch = rdma_create_event_channel();
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

void destroy_id(rdma_cm_id* id) {
  if (!id) return;
  if (id->qp) rdma_destroy_qp(id);
  rdma_destroy_id(id);
}

rdma_cm_event* next_event(rdma_event_channel* ch, int64_t deadline_ns) {
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(ch, &ev) == 0) return ev;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return nullptr;
    int ms = ms_until(deadline_ns);
    if (ms <= 0) return nullptr;
    pollfd p{ch->fd, POLLIN, 0};
    ::poll(&p, 1, std::min(ms, 100));
  }
}

rdma_cm_event* expect_event(rdma_event_channel* ch, rdma_cm_event_type want, int64_t deadline_ns,
                            const std::string& what) {
  rdma_cm_event* ev = next_event(ch, deadline_ns);
  if (!ev) {
    throw std::runtime_error(what + ": no " + rdma_event_str(want) + " in time");
  }
  if (ev->event == want && ev->status == 0) return ev;
  std::string got = rdma_event_str(ev->event);
  int status = ev->status;
  rdma_ack_cm_event(ev);
  std::string detail;
  if (status < 0) {
    detail = std::string(" (") + std::strerror(-status) + ")";
  } else if (status > 0) {
    detail = " (status " + std::to_string(status) + ")";
  }
  std::string hint;
  if (got == "RDMA_CM_EVENT_ADDR_ERROR" || got == "RDMA_CM_EVENT_ROUTE_ERROR") {
    hint = "; is the address on an RDMA device (rdma link) and reachable?";
  } else if (got == "RDMA_CM_EVENT_REJECTED" || got == "RDMA_CM_EVENT_UNREACHABLE") {
    hint = "; the server refused or did not answer (is it an mtperf of this version?)";
  }
  throw std::runtime_error(what + ": " + got + " instead of " + rdma_event_str(want) + detail +
                           hint);
}

rdma_conn_param conn_param(const DeviceRes& d, const uint8_t* pd) {
  rdma_conn_param p{};
  p.private_data = pd;
  p.private_data_len = uint8_t(kPdBytes);
  p.responder_resources = uint8_t(std::clamp(d.attr.max_qp_rd_atom, 1, int(kReadDepth)));
  p.initiator_depth = uint8_t(std::clamp(d.attr.max_qp_init_rd_atom, 1, int(kReadDepth)));
  p.flow_control = 1;
  p.retry_count = 7;
  p.rnr_retry_count = 7;  // RNR NAKs retried without end: a slow receiver only slows us
  return p;
}

std::string check_peer(const void* data, size_t len, const FlowSetup& s, Verb verb, ConnInfo& out) {
  PdError e = decode_conn_info(data, len, out);
  if (e != PdError::ok) return std::string(to_string(e));
  if (out.cookie != s.cookie) return "not this test's cookie";
  if (out.flow != s.flow) {
    return "flow " + std::to_string(out.flow) + " where " + std::to_string(s.flow) +
           " was expected";
  }
  if (out.verb != uint8_t(verb)) return "the peer uses another verb";
  return "";
}

}  // namespace mtperf::rdma
