// FOR UNIT TESTS ONLY: the rdma_cm half of the in-memory RDMA device of fake_verbs.hpp.
#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

#include "tests/transports/rdma/fake_verbs.hpp"

namespace mtperf::rdma::test {

namespace {

// An rdma_cm event and the private data it points at, freed together when acknowledged.
struct Event {
  rdma_cm_event ev;
  std::array<uint8_t, 256> pd;
};
static_assert(std::is_standard_layout_v<Event>);  // ev's address is the Event's

}  // namespace

// ---- librdmacm ---------------------------------------------------------------------------------

rdma_event_channel* FakeVerbs::create_event_channel() {
  if (int err = fault(Call::create_event_channel)) return null_with<rdma_event_channel>(err);
  auto* ch = make<rdma_event_channel>(Obj::event_channel);
  ch->fd = quiet_fd();
  return ch;
}

void FakeVerbs::destroy_event_channel(rdma_event_channel* ch) {
  int fd = ch->fd;
  if (!drop(Obj::event_channel, ch)) return;
  close(fd);
  // Events never read go with their channel.
  for (rdma_cm_event* ev : events_[ch])
    drop(Obj::cm_event, ev);
  events_.erase(ch);
}

void FakeVerbs::queue_event(rdma_event_channel* ch, rdma_cm_event_type type, rdma_cm_id* id,
                            rdma_cm_id* listen_id, const void* pd, size_t len) {
  auto* e = make<Event>(Obj::cm_event);
  e->ev.event = type;
  e->ev.id = id;
  e->ev.listen_id = listen_id;
  len = std::min(len, e->pd.size());
  if (len > 0) {
    std::memcpy(e->pd.data(), pd, len);
    e->ev.param.conn.private_data = e->pd.data();
    e->ev.param.conn.private_data_len = uint8_t(len);
  }
  events_[ch].push_back(&e->ev);
}

int FakeVerbs::get_cm_event(rdma_event_channel* ch, rdma_cm_event** ev) {
  auto& q = events_[ch];
  if (q.empty()) return fail_with(EAGAIN);
  *ev = q.front();
  q.pop_front();
  return 0;
}

int FakeVerbs::ack_cm_event(rdma_cm_event* ev) {
  return drop(Obj::cm_event, ev) ? 0 : fail_with(EINVAL);
}

int FakeVerbs::create_id(rdma_event_channel* ch, rdma_cm_id** id, void* context,
                         rdma_port_space ps) {
  if (int err = fault(Call::create_id)) return fail_with(err);
  auto* cm = make<rdma_cm_id>(Obj::cm_id);
  cm->channel = ch;
  cm->context = context;
  cm->ps = ps;
  *id = cm;
  return 0;
}

int FakeVerbs::destroy_id(rdma_cm_id* id) {
  // As librdmacm: the id's queue pair is the caller's to destroy first; one left is leaked.
  return drop(Obj::cm_id, id) ? 0 : fail_with(EINVAL);
}

int FakeVerbs::migrate_id(rdma_cm_id* id, rdma_event_channel* ch) {
  if (int err = fault(Call::migrate_id)) return fail_with(err);
  id->channel = ch;
  return 0;
}

int FakeVerbs::set_option(rdma_cm_id*, int, int, void*, size_t) {
  return 0;
}

int FakeVerbs::bind_addr(rdma_cm_id* id, sockaddr* addr) {
  if (int err = fault(Call::bind_addr)) return fail_with(err);
  id->verbs = context();
  id->port_num = 1;
  std::memcpy(&id->route.addr.src_storage, addr,
              addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
  auto* in = reinterpret_cast<sockaddr_in*>(&id->route.addr.src_storage);
  if (in->sin_port == 0) in->sin_port = htons(next_port_++);  // same place in sockaddr_in6
  return 0;
}

int FakeVerbs::listen(rdma_cm_id* id, int) {
  if (int err = fault(Call::listen)) return fail_with(err);
  last_listener = id;
  return 0;
}

uint16_t FakeVerbs::src_port(rdma_cm_id* id) {
  return reinterpret_cast<const sockaddr_in*>(&id->route.addr.src_storage)->sin_port;
}

int FakeVerbs::resolve_addr(rdma_cm_id* id, sockaddr*, sockaddr*, int) {
  if (int err = fault(Call::resolve_addr)) return fail_with(err);
  id->verbs = context();
  id->port_num = 1;
  queue_event(id->channel, RDMA_CM_EVENT_ADDR_RESOLVED, id, nullptr, nullptr, 0);
  return 0;
}

int FakeVerbs::resolve_route(rdma_cm_id* id, int) {
  if (int err = fault(Call::resolve_route)) return fail_with(err);
  queue_event(id->channel, RDMA_CM_EVENT_ROUTE_RESOLVED, id, nullptr, nullptr, 0);
  return 0;
}

int FakeVerbs::cm_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* a) {
  if (int err = fault(Call::cm_create_qp)) return fail_with(err);
  if (id->qp) return fail_with(EINVAL);
  // Not a create_qp call as far as failures go: the test names the one it means.
  int n = calls_[size_t(Call::create_qp)];
  Fault f = faults_[size_t(Call::create_qp)];
  faults_[size_t(Call::create_qp)] = {};
  ibv_qp* qp = create_qp(pd, a);
  calls_[size_t(Call::create_qp)] = n;
  faults_[size_t(Call::create_qp)] = f;
  id->qp = qp;
  return 0;
}

void FakeVerbs::cm_destroy_qp(rdma_cm_id* id) {
  if (id->qp) destroy_qp(id->qp);
  id->qp = nullptr;
}

int FakeVerbs::connect(rdma_cm_id* id, rdma_conn_param*) {
  if (int err = fault(Call::connect)) return fail_with(err);
  if (reply_pd.empty()) {
    queue_event(id->channel, RDMA_CM_EVENT_REJECTED, id, nullptr, nullptr, 0);
  } else {
    queue_event(id->channel, RDMA_CM_EVENT_ESTABLISHED, id, nullptr, reply_pd.data(),
                reply_pd.size());
  }
  return 0;
}

int FakeVerbs::accept(rdma_cm_id* id, rdma_conn_param*) {
  if (int err = fault(Call::accept)) return fail_with(err);
  ++accepts;
  queue_event(id->channel, RDMA_CM_EVENT_ESTABLISHED, id, nullptr, nullptr, 0);
  return 0;
}

int FakeVerbs::reject(rdma_cm_id*, const void*, uint8_t) {
  ++rejects;
  return 0;
}

int FakeVerbs::disconnect(rdma_cm_id* id) {
  ++disconnects;
  // rdma_cm moves the queue pair to the error state.
  if (id->qp) {
    id->qp->state = IBV_QPS_ERR;
    qp_states_[id->qp->qp_num] = IBV_QPS_ERR;
    to_error(id->qp);
  }
  return 0;
}

rdma_cm_id* FakeVerbs::connect_request(rdma_cm_id* listener, const void* pd, size_t len,
                                       uint8_t responder_resources, uint8_t initiator_depth) {
  auto* id = make<rdma_cm_id>(Obj::cm_id);
  id->channel = listener->channel;
  id->verbs = context();
  id->port_num = 1;
  id->ps = listener->ps;
  queue_event(listener->channel, RDMA_CM_EVENT_CONNECT_REQUEST, id, listener, pd, len);
  rdma_cm_event* ev = events_[listener->channel].back();
  ev->param.conn.responder_resources = responder_resources;
  ev->param.conn.initiator_depth = initiator_depth;
  return id;
}

}  // namespace mtperf::rdma::test
