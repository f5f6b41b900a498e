// A one-sided transport (RDMA WRITE) leaves a stream's receiver nothing to count: the summary
// takes the stream's bytes from its sender, in either direction; otherwise from the receiver.
#include <catch2/catch.hpp>

#include "report/summary.hpp"

using namespace mtperf;

namespace {

FlowResult flow(uint32_t id, Role role, uint64_t sent, uint64_t received) {
  FlowResult f;
  f.id = id;
  f.role = role;
  f.window.bytes_sent = sent;
  f.window.bytes_recv = received;
  return f;
}

// Flow 0 goes client -> server, flow 1 server -> client (bidir); the receivers counted
// `received` bytes each, the senders 1,000,000.
control::TestOutcome bidir(bool one_sided, uint64_t received) {
  control::TestOutcome o;
  o.client.side = Side::client;
  o.client.window_s = 1;
  o.client.one_sided = one_sided;
  o.client.flows = {flow(0, Role::sender, 1'000'000, 0), flow(1, Role::receiver, 0, received)};
  SideResult server;
  server.side = Side::server;
  server.window_s = 1;
  server.one_sided = one_sided;
  server.flows = {flow(0, Role::receiver, 0, received), flow(1, Role::sender, 1'000'000, 0)};
  o.server = server;
  return o;
}

}  // namespace

TEST_CASE("one-sided: a stream's bytes are its sender's, both ways") {
  TestSpec spec;
  spec.workload = Workload::bidir;
  Summary s = summarize(spec, bidir(true, 0), nullptr);
  CHECK(s.throughput_c2s_bps == Approx(8e6));
  CHECK(s.throughput_s2c_bps == Approx(8e6));
}

TEST_CASE("two-sided: a stream's bytes are its receiver's") {
  TestSpec spec;
  spec.workload = Workload::bidir;
  Summary s = summarize(spec, bidir(false, 500'000), nullptr);
  CHECK(s.throughput_c2s_bps == Approx(4e6));
  CHECK(s.throughput_s2c_bps == Approx(4e6));
}
