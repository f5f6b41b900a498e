// The rdma_cm parameters the transport sends and answers with (cm.hpp), from fixture device
// attributes and a request as rdma_cm delivers it: no device is opened.
#include <catch2/catch.hpp>

#include <array>

#include "verbs/cm.hpp"

using namespace mtperf::rdma;

namespace {

// A device's attributes only: no context, nothing to release.
void set_depths(DeviceRes& d, int rd_atom, int init_rd_atom) {
  d.attr.max_qp_rd_atom = rd_atom;
  d.attr.max_qp_init_rd_atom = init_rd_atom;
}

}  // namespace

TEST_CASE("cm: the connecting side offers its device's READ depths") {
  DeviceRes client;
  set_depths(client, 4, 8);
  std::array<uint8_t, kPdBytes> pd{};
  rdma_conn_param p = conn_param(local_depths(client), pd.data());
  CHECK(p.responder_resources == 4);
  CHECK(p.initiator_depth == 8);
  CHECK(p.private_data == pd.data());
  CHECK(p.private_data_len == kPdBytes);
}

TEST_CASE("cm: the accepting side answers from the event's fields, as rdma_cm gives them") {
  DeviceRes server;
  set_depths(server, 16, 16);
  // The client answers 4 READs and issues 8; its CONNECT_REQUEST reaches the server with the
  // fields from the server's point of view.
  rdma_conn_param ev{};
  ev.responder_resources = 8;  // the client's initiator_depth
  ev.initiator_depth = 4;      // the client's responder_resources
  ReadDepths a = accept_depths(server, ev);
  CHECK(a.responder_resources == 8);
  CHECK(a.initiator_depth == 4);
  // A smaller server than the client keeps to its own device.
  DeviceRes small;
  set_depths(small, 2, 1);
  ev.responder_resources = 16;
  ev.initiator_depth = 16;
  CHECK(accept_depths(small, ev) == ReadDepths{2, 1});
}

TEST_CASE("cm: RNR retries are finite, transport retries bounded") {
  std::array<uint8_t, kPdBytes> pd{};
  rdma_conn_param p = conn_param(ReadDepths{1, 1}, pd.data());
  CHECK(p.rnr_retry_count == kRnrRetry);
  CHECK(p.rnr_retry_count < 7);  // 7: without end
  CHECK(p.retry_count == kTransportRetry);
  CHECK(p.flow_control == 1);
}
