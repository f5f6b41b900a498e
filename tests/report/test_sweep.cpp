// The scalability table: scaling efficiency and its three renderings.
#include <catch2/catch.hpp>

#include "report/sweep.hpp"

using namespace mtperf;

namespace {

Sweep two_rows() {
  Sweep s;
  s.transport = "socket";
  s.hosts = "testbed a -> b (veth, 4 links)";
  s.length_s = 10;
  s.adapter_counts = {1, 2, 4};
  SweepRow out{"outbound", "TCP outbound", SweepFigure::throughput, {}};
  out.cells = {{1, 100e6, 20.0, 30.0, std::nullopt, {}},
               {2, 190e6, 40.0, 55.0, 0.99, {}},
               {4, 300e6, 80.0, 95.5, 0.98, {}}};
  SweepRow rr{"tcp-rr", "TCP rr 1 byte", SweepFigure::transaction_rate, {}};
  rr.cells = {{1, 1000.0, 10.0, 10.0, std::nullopt, {}},
              {2, std::nullopt, std::nullopt, std::nullopt, std::nullopt, {"connect refused"}},
              {4, 4400.0, 40.0, 40.0, 1.0, {}}};
  s.rows = {out, rr};
  return s;
}

}  // namespace

TEST_CASE("scaling efficiency is the figure at N over N times the figure at 1", "[sweep]") {
  Sweep s = two_rows();
  CHECK(*scaling_efficiency(s.rows[0], 0) == Approx(1.0));
  CHECK(*scaling_efficiency(s.rows[0], 1) == Approx(0.95));
  CHECK(*scaling_efficiency(s.rows[0], 2) == Approx(0.75));
  CHECK_FALSE(scaling_efficiency(s.rows[1], 1));  // a failed cell has none
  CHECK(*scaling_efficiency(s.rows[1], 2) == Approx(1.1));
  CHECK_FALSE(scaling_efficiency(s.rows[0], 3));
  // Counts that do not start at 1 scale from the first one.
  SweepRow from2{
      "x", "x", SweepFigure::throughput, {{2, 100, {}, {}, {}, {}}, {4, 150, {}, {}, {}, {}}}};
  CHECK(*scaling_efficiency(from2, 1) == Approx(0.75));
}

TEST_CASE("the text table has a column per adapter count and CPU under each figure", "[sweep]") {
  std::string t = sweep_text(two_rows());
  CHECK(t.find("adapters                             1             2             4") !=
        std::string::npos);
  CHECK(t.find("TCP outbound Mbit/s             100.00        190.00        300.00") !=
        std::string::npos);
  CHECK(t.find("  cpu % local/remote         20.0/30.0     40.0/55.0     80.0/95.5") !=
        std::string::npos);
  CHECK(t.find("failed") != std::string::npos);
  CHECK(t.find("TCP outbound                      100%           95%           75%") !=
        std::string::npos);
  CHECK(t.find("error: TCP rr 1 byte with 2 adapter(s): connect refused") != std::string::npos);
}

TEST_CASE("JSON and CSV carry every cell with its efficiency", "[sweep]") {
  auto j = sweep_json(two_rows());
  CHECK(j["schema"] == 2);
  CHECK(j["schema"] == kSweepJsonSchema);
  const auto& rows = j["sweep"]["rows"];
  REQUIRE(rows.size() == 2);
  // JSON is in bit/s, as the run's document; the row names the field that carries its figure.
  CHECK(rows[0]["figure"] == "throughput_bps");
  CHECK(rows[0]["cells"][1]["throughput_bps"].get<double>() == Approx(190e6));
  CHECK(rows[0]["cells"][1]["transaction_rate"].is_null());
  CHECK(rows[1]["figure"] == "transaction_rate");
  CHECK(rows[1]["cells"][0]["transaction_rate"].get<double>() == Approx(1000));
  CHECK(rows[1]["cells"][0]["throughput_bps"].is_null());
  CHECK(rows[1]["cells"][1]["transaction_rate"].is_null());  // failed before measuring
  CHECK_FALSE(rows[0]["cells"][0].contains("value"));
  CHECK(rows[0]["cells"][2]["scaling_efficiency"].get<double>() == Approx(0.75));
  CHECK(rows[1]["cells"][1]["scaling_efficiency"].is_null());
  CHECK(rows[1]["cells"][1]["errors"][0] == "connect refused");
  CHECK(rows[0]["cells"][1]["remote_cpu_percent"].get<double>() == Approx(55.0));
  std::string csv = sweep_csv(two_rows());
  CHECK(csv.find("ROW,ADAPTERS,VALUE,UNITS") == 0);
  CHECK(csv.find("outbound,4,300.000,Mbit/s,80.00,95.50,0.7500,0\n") != std::string::npos);
  CHECK(csv.find("tcp-rr,2,,trans/s,,,,1\n") != std::string::npos);
}
