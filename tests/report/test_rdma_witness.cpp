// The RDMA ports' counter deltas in the report: carried from each side into the summary, and
// rendered in JSON (bytes from 4-byte words, packets, errors) and as one text line per port.
#include <string>

#include <catch2/catch.hpp>

#include "report/render.hpp"

using namespace mtperf;

namespace {

Report report_with_ports() {
  control::TestOutcome o;
  o.client.window_s = 2.0;
  FlowResult f;
  f.role = Role::sender;
  f.window.bytes_sent = 1'000'000;
  o.client.flows.push_back(f);
  // A RoCE port that moved (with an error), one that did not, and soft-RoCE's packet counters.
  o.client.rdma_ports = {{"mlx5_0",
                          1,
                          {{"port_xmit_data", 262'500},
                           {"port_rcv_data", 5'000},
                           {"port_xmit_packets", 250},
                           {"port_rcv_packets", 125},
                           {"out_of_sequence", 2},
                           {"symbol_error", 0}}},
                         {"mlx5_0", 2, {{"port_xmit_data", 0}, {"port_rcv_data", 0}}}};
  SideResult server;
  server.side = Side::server;
  server.window_s = 2.0;
  server.rdma_ports = {{"rxe0", 1, {{"sent_pkts", 125}, {"rcvd_pkts", 250}, {"rcvd_seq_err", 0}}}};
  o.server = server;
  Report r;
  r.spec.workload = Workload::stream;
  r.spec.flows = 1;
  r.iterations.push_back(summarize(r.spec, o));
  finish_report(r);
  return r;
}

}  // namespace

TEST_CASE("the summary keeps each side's RDMA port deltas", "[render]") {
  Report r = report_with_ports();
  REQUIRE(r.summary.local_rdma_ports.size() == 2);
  REQUIRE(r.summary.remote_rdma_ports.size() == 1);
  CHECK(r.summary.remote_rdma_ports[0].device == "rxe0");
}

TEST_CASE("JSON: each side's RDMA ports in plain units beside the raw counters", "[render]") {
  nlohmann::json s = report_json(report_with_ports())["summary"];
  const auto& mlx = s["local_rdma_ports"][0];
  CHECK(mlx["device"] == "mlx5_0");
  CHECK(mlx["port"] == 1);
  CHECK(mlx["bytes_sent"] == 1'050'000);  // 4-byte words
  CHECK(mlx["bytes_received"] == 20'000);
  CHECK(mlx["packets_sent"] == 250);
  CHECK(mlx["packets_received"] == 125);
  CHECK(mlx["errors"] == nlohmann::json({{"out_of_sequence", 2}}));
  CHECK(mlx["counters"]["symbol_error"] == 0);
  const auto& rxe = s["remote_rdma_ports"][0];
  CHECK(rxe["bytes_sent"].is_null());  // rxe counts no bytes
  CHECK(rxe["packets_sent"] == 125);
  CHECK(rxe["errors"].empty());
  CHECK(report_json(Report{})["summary"]["local_rdma_ports"] == nlohmann::json::array());
}

TEST_CASE("text: one line per RDMA port that counted, idle ports summed up", "[render]") {
  std::string text = report_text(report_with_ports());
  CHECK_THAT(text, Catch::Contains("local rdma         mlx5_0/1: sent 1050000 bytes (4.20 Mbit/s) "
                                   "250 packets, received 20000 bytes (0.08 Mbit/s) 125 packets; "
                                   "errors out_of_sequence 2\n"));
  CHECK_THAT(text, Catch::Contains("local rdma         1 port(s) counted nothing in the window\n"));
  CHECK_THAT(text, Catch::Contains("remote rdma        rxe0/1: sent 125 packets, received 250 "
                                   "packets\n"));
  CHECK_THAT(report_text(Report{}), !Catch::Contains("rdma"));
}
