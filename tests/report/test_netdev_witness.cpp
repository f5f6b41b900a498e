// The network devices' counter deltas in the report: each side's devices beside the payload that
// side sent over them (corrected by the send queue's change), the carried check and its ratio, in
// JSON and as one text line per device; a placed test attributes flows by adapter.
#include <string>

#include <catch2/catch.hpp>

#include "report/render.hpp"

using namespace mtperf;

namespace {

Report report_with(uint64_t client_tx) {
  control::TestOutcome o;
  o.client.window_s = 1.0;
  FlowResult f;
  f.role = Role::sender;
  f.window.bytes_sent = 1'000'000;
  f.unsent_change = 1'000;  // 1000 bytes more waited at the end than at the start
  o.client.flows.push_back(f);
  o.client.netdev.devices = {{"eth0",
                              {{"tx_bytes", client_tx},
                               {"rx_bytes", 40'000},
                               {"tx_packets", 700},
                               {"rx_packets", 350},
                               {"rx_errors", 0},
                               {"rx_crc_errors", 3}},
                              {{"rx_queue_0_drops", 4}, {"tx_queue_0_bytes", 0}}}};
  o.client.netdev.tcp = {{"RetransSegs", 5}, {"InErrs", 0}};
  SideResult server;
  server.side = Side::server;
  server.window_s = 1.0;
  FlowResult sf;
  sf.role = Role::receiver;
  server.flows.push_back(sf);
  server.netdev.devices = {{"eth1", {{"tx_bytes", 40'000}, {"rx_bytes", client_tx}}, {}}};
  o.server = server;
  Report r;
  r.spec.workload = Workload::stream;
  r.spec.flows = 1;
  r.iterations.push_back(summarize(r.spec, o));
  finish_report(r);
  return r;
}

}  // namespace

TEST_CASE("JSON: each device's deltas, the payload sent over it and the carried check",
          "[render]") {
  nlohmann::json s = report_json(report_with(1'050'000))["summary"];
  REQUIRE(s["local_netdev"].size() == 1);
  const auto& eth0 = s["local_netdev"][0];
  CHECK(eth0["device"] == "eth0");
  CHECK(eth0["tx_bytes"] == 1'050'000);
  CHECK(eth0["app_bytes_sent"] == 999'000);
  CHECK(eth0["carried"] == true);
  CHECK(eth0["wire_payload_ratio"].get<double>() == Approx(1'050'000.0 / 999'000));
  CHECK(eth0["faults"] == nlohmann::json({{"rx_crc_errors", 3}, {"rx_queue_0_drops", 4}}));
  CHECK(eth0["driver"] == nlohmann::json({{"rx_queue_0_drops", 4}}));  // only what moved
  CHECK(s["local_tcp"]["RetransSegs"] == 5);
  const auto& eth1 = s["remote_netdev"][0];
  CHECK(eth1["app_bytes_sent"] == 0);  // the server only received
  CHECK(eth1["carried"].is_null());
  CHECK(eth1["wire_payload_ratio"].is_null());
  CHECK(report_json(Report{})["summary"]["local_netdev"] == nlohmann::json::array());
}

TEST_CASE("a device that carried less than the application sent is flagged", "[render]") {
  Report r = report_with(900'000);
  REQUIRE(r.summary.local_netdev.size() == 1);
  CHECK(r.summary.local_netdev[0].carried == false);
  std::string text = report_text(r);
  CHECK_THAT(text, Catch::Contains("local netdev eth0: tx 900 kB 700 pkts"));
  CHECK_THAT(text, Catch::Contains("device/app bytes 0.901 (LESS than the application sent)"));
  CHECK_THAT(text, Catch::Contains("moved: rx_crc_errors 3, rx_queue_0_drops 4"));
  CHECK_THAT(text, Catch::Contains("local tcp: RetransSegs 5 InErrs 0\n"));
  CHECK_THAT(text, Catch::Contains("remote netdev eth1: tx 40 kB"));
  CHECK_THAT(text, Catch::Contains("no payload sent over it"));
  CHECK_THAT(report_text(Report{}), !Catch::Contains("netdev"));
}

TEST_CASE("a placed test attributes each flow's payload to its adapter", "[render]") {
  control::TestOutcome o;
  o.client.window_s = 1.0;
  for (uint32_t id : {0u, 1u}) {
    FlowResult f;
    f.id = id;
    f.window.bytes_sent = 1000 * (id + 1);
    o.client.flows.push_back(f);
  }
  o.client.netdev.devices = {{"vc0", {{"tx_bytes", 1500}}, {}}, {"vc1", {{"tx_bytes", 1900}}, {}}};
  SideResult server;
  server.side = Side::server;
  server.flows = o.client.flows;  // maerts-like: the server sends too
  server.netdev.devices = {{"vs0", {{"tx_bytes", 1100}}, {}}, {"vs1", {{"tx_bytes", 2100}}, {}}};
  o.server = server;
  Placement p;
  p.adapters = {"vc0", "vc1"};
  for (int i = 0; i < 2; ++i) {
    FlowPlacement fp;
    fp.flow = i;
    fp.adapter = p.adapters[size_t(i)];
    p.flows.push_back(fp);
  }
  TestSpec spec;
  spec.workload = Workload::stream;
  spec.flows = 2;
  Summary s = summarize(spec, o, &p);
  REQUIRE(s.local_netdev.size() == 2);
  CHECK(s.local_netdev[0].app_bytes_sent == 1000);
  CHECK(s.local_netdev[1].app_bytes_sent == 2000);
  CHECK(s.local_netdev[1].carried == false);
  REQUIRE(s.remote_netdev.size() == 2);
  CHECK(s.remote_netdev[0].app_bytes_sent == 1000);  // vs0 pairs with vc0
  CHECK(s.remote_netdev[1].app_bytes_sent == 2000);
  CHECK(s.remote_netdev[1].carried == true);
}

TEST_CASE("on loopback what came in counts beside what went out", "[render]") {
  // rr with small requests and large answers over lo: lo's tx counts both directions.
  control::TestOutcome o;
  o.client.window_s = 1.0;
  FlowResult c;
  c.window.bytes_sent = 1'000;
  c.window.bytes_recv = 8'000'000;
  c.unread_change = -2'000'000;  // 2 MB waited to be read at the start, none at the end
  o.client.flows.push_back(c);
  o.client.netdev.devices = {{"lo", {{"tx_bytes", 6'050'000}}, {}}};
  TestSpec spec;
  spec.workload = Workload::rr;
  spec.flows = 1;
  Summary s = summarize(spec, o);
  REQUIRE(s.local_netdev.size() == 1);
  const NetdevFigures& lo = s.local_netdev[0];
  CHECK(lo.both_directions);
  CHECK(lo.app_bytes_sent == 1'000);
  CHECK(lo.app_bytes_received == 6'000'000);
  CHECK(lo.wire_payload_ratio.value() == Approx(6'050'000.0 / 6'001'000));
  CHECK(lo.carried == true);
  Report r;
  r.spec = spec;
  r.summary = s;
  CHECK_THAT(report_text(r), Catch::Contains("device/app bytes 1.008 (both directions: loopback)"));
  // Any other device carries this side's sends only.
  o.client.netdev.devices = {{"eth0", {{"tx_bytes", 1'100}}, {}}};
  Summary eth = summarize(spec, o);
  CHECK_FALSE(eth.local_netdev[0].both_directions);
  CHECK(eth.local_netdev[0].app_bytes_sent == 1'000);
  CHECK(eth.local_netdev[0].app_bytes_received == 0);
  CHECK(eth.local_netdev[0].wire_payload_ratio.value() == Approx(1.1));
}
