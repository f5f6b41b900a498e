// RDMA port counter deltas travel in the RESULT frame beside the server's other figures: what
// arrives is what was sent, within the reader's bounds, and a peer that sends none is accepted.
#include <catch2/catch.hpp>

#include "control/side_json.hpp"

using namespace mtperf;

namespace {

std::vector<RdmaPortCounters> two_ports() {
  RdmaPortCounters a{"mlx5_0", 1, {{"port_xmit_data", 250000}, {"out_of_sequence", 2}}};
  RdmaPortCounters b{"rxe0", 1, {{"sent_pkts", uint64_t(1) << 40}}};
  return {a, b};
}

bool same(const std::vector<RdmaPortCounters>& x, const std::vector<RdmaPortCounters>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].device != y[i].device || x[i].port != y[i].port || x[i].counters != y[i].counters)
      return false;
  return true;
}

}  // namespace

TEST_CASE("RDMA port counters survive the trip through a side's JSON", "[side_json]") {
  SideResult r;
  r.side = Side::server;
  r.rdma_ports = two_ports();
  auto j = side_to_json(r);
  CHECK(j["rdma_ports"][0]["device"] == "mlx5_0");
  CHECK(j["rdma_ports"][0]["counters"]["port_xmit_data"] == 250000);
  SideResult back = side_from_json(nlohmann::json::parse(j.dump()));
  CHECK(same(back.rdma_ports, r.rdma_ports));

  j.erase("rdma_ports");  // a peer without RDMA counters in its RESULT
  CHECK(side_from_json(j).rdma_ports.empty());
}

TEST_CASE("RDMA port counters from the network are bounded and typed", "[side_json]") {
  auto ports = rdma_ports_to_json(two_ports());
  CHECK(same(rdma_ports_from_json(ports), two_ports()));

  auto broken = [&](auto change) {
    nlohmann::json j = ports;
    change(j);
    return j;
  };
  CHECK_THROWS_WITH(rdma_ports_from_json(nlohmann::json::object()),
                    Catch::Contains("result.rdma_ports: wrong type"));
  CHECK_THROWS_WITH(rdma_ports_from_json(broken([](auto& j) { j[0]["port"] = 0; })),
                    Catch::Contains("rdma_ports[0].port: out of range"));
  CHECK_THROWS_WITH(rdma_ports_from_json(broken([](auto& j) { j[1]["port"] = -1; })),
                    Catch::Contains("rdma_ports[1].port"));
  CHECK_THROWS_WITH(rdma_ports_from_json(broken([](auto& j) { j[0].erase("device"); })),
                    Catch::Contains("rdma_ports[0].device"));
  CHECK_THROWS_WITH(
      rdma_ports_from_json(broken([](auto& j) { j[0]["device"] = std::string(65, 'd'); })),
      Catch::Contains("too long"));
  CHECK_THROWS_WITH(
      rdma_ports_from_json(broken([](auto& j) { j[0]["counters"]["symbol_error"] = -3; })),
      Catch::Contains("counters.symbol_error: not an unsigned count"));
  CHECK_THROWS_WITH(rdma_ports_from_json(broken([](auto& j) { j[0]["counters"]["x"] = "many"; })),
                    Catch::Contains("counters.x"));
  CHECK_THROWS_WITH(
      rdma_ports_from_json(broken([](auto& j) { j[0]["counters"][std::string(65, 'n')] = 1; })),
      Catch::Contains("a name empty or too long"));
  CHECK_THROWS_WITH(rdma_ports_from_json(broken([](auto& j) {
                      for (size_t i = 0; i <= kMaxRdmaCounters; ++i)
                        j[0]["counters"]["c" + std::to_string(i)] = 1;
                    })),
                    Catch::Contains("more than 128 entries"));
  CHECK_THROWS_WITH(rdma_ports_from_json(broken([](auto& j) {
                      while (j.size() <= kMaxRdmaPorts)
                        j.push_back(j[0]);
                    })),
                    Catch::Contains("more than 64 entries"));
}
