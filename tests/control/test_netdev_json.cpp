// Network device counter deltas and the server's unsent-bytes correction travel in the RESULT
// frame: what arrives is what was sent, within the reader's bounds (platform/netdev_stats.hpp),
// and a peer that sends none is accepted.
#include <catch2/catch.hpp>

#include "control/side_json.hpp"

using namespace mtperf;

namespace {

NetWitness witness() {
  NetWitness w;
  w.devices = {{"eth0", {{"tx_bytes", uint64_t(1) << 40}, {"rx_crc_errors", 2}}, {{"rx_q0", 9}}},
               {"lo", {{"tx_bytes", 5}}, {}}};
  w.tcp = {{"RetransSegs", 12}, {"TcpExt.TCPTimeouts", 1}};
  return w;
}

bool same(const NetWitness& x, const NetWitness& y) {
  if (x.devices.size() != y.devices.size() || x.tcp != y.tcp) return false;
  for (size_t i = 0; i < x.devices.size(); ++i)
    if (x.devices[i].device != y.devices[i].device || x.devices[i].stats != y.devices[i].stats ||
        x.devices[i].driver != y.devices[i].driver)
      return false;
  return true;
}

nlohmann::json broken(void (*edit)(nlohmann::json&)) {
  nlohmann::json j = netdev_to_json(witness());
  edit(j);
  return j;
}

}  // namespace

TEST_CASE("device counters survive the trip through a side's JSON", "[side_json]") {
  SideResult r;
  r.side = Side::server;
  r.netdev = witness();
  FlowResult f;
  f.unsent_change = -4096;
  f.unread_change = 8192;
  r.flows.push_back(f);
  nlohmann::json j = side_to_json(r);
  CHECK(j["netdev"]["devices"][0]["device"] == "eth0");
  SideResult back = side_from_json(nlohmann::json::parse(j.dump()));
  CHECK(same(back.netdev, r.netdev));
  CHECK(back.flows.at(0).unsent_change == -4096);
  CHECK(back.flows.at(0).unread_change == 8192);
  j.erase("netdev");  // a peer that predates the witnesses
  CHECK(side_from_json(j).netdev.devices.empty());
}

TEST_CASE("a peer's device counters are checked strictly", "[side_json]") {
  CHECK_THROWS_WITH(netdev_from_json(nlohmann::json::array()),
                    Catch::Contains("result.netdev: wrong type"));
  CHECK_THROWS_WITH(netdev_from_json(broken([](auto& j) { j.erase("devices"); })),
                    Catch::Contains("result.netdev.devices"));
  CHECK_THROWS_WITH(netdev_from_json(broken([](auto& j) { j["devices"][0]["device"] = ""; })),
                    Catch::Contains("devices[0].device"));
  CHECK_THROWS_WITH(
      netdev_from_json(broken([](auto& j) { j["devices"][1]["device"] = std::string(16, 'd'); })),
      Catch::Contains("devices[1].device"));
  CHECK_THROWS_WITH(
      netdev_from_json(broken([](auto& j) { j["devices"][0]["stats"]["tx_bytes"] = -1; })),
      Catch::Contains("stats.tx_bytes: not an unsigned count"));
  CHECK_THROWS_WITH(netdev_from_json(broken(
                        [](auto& j) { j["devices"][0]["driver"][std::string(65, 'n')] = 1; })),
                    Catch::Contains("driver: a name empty or too long"));
  CHECK_THROWS_WITH(netdev_from_json(broken([](auto& j) { j["tcp"] = "many"; })),
                    Catch::Contains("result.netdev.tcp"));
  CHECK_THROWS_WITH(netdev_from_json(broken([](auto& j) {
                      for (int i = 0; i < 65; ++i)
                        j["devices"].push_back(j["devices"][1]);
                    })),
                    Catch::Contains("more than 64"));
  CHECK_THROWS_WITH(netdev_from_json(broken([](auto& j) {
                      for (int i = 0; i < 1025; ++i)
                        j["devices"][0]["stats"]["c" + std::to_string(i)] = 1;
                    })),
                    Catch::Contains("more than 1024"));
  SideResult r;
  nlohmann::json j = side_to_json(r);
  FlowResult f;
  f.unsent_change = 1;
  r.flows.push_back(f);
  j = side_to_json(r);
  j["flows"][0]["unsent_change"] = int64_t(1) << 41;
  CHECK_THROWS_WITH(side_from_json(j), Catch::Contains("unsent_change: out of range"));
  j["flows"][0]["unsent_change"] = 1;
  j["flows"][0]["unread_change"] = -(int64_t(1) << 41);
  CHECK_THROWS_WITH(side_from_json(j), Catch::Contains("unread_change: out of range"));
}
