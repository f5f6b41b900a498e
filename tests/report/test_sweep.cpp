// The sweep table: scaling efficiency, the load curve's marks, and the three renderings of each
// axis (adapters, message sizes, flows, MTU).
#include <catch2/catch.hpp>

#include "report/sweep.hpp"

using namespace mtperf;

namespace {

SweepCell cell(int64_t at, std::optional<double> value, std::optional<double> local_cpu,
               std::optional<double> remote_cpu, std::vector<std::string> errors = {}) {
  SweepCell c;
  c.at = at;
  c.value = value;
  c.local_cpu = local_cpu;
  c.remote_cpu = remote_cpu;
  c.errors = std::move(errors);
  return c;
}

Sweep two_rows() {
  Sweep s;
  s.transport = "socket";
  s.hosts = "testbed a -> b (veth, 4 links)";
  s.length_s = 10;
  s.axis_values = {1, 2, 4};
  SweepRow out{"outbound", "TCP outbound", SweepFigure::throughput, {}};
  out.cells = {cell(1, 100e6, 20.0, 30.0), cell(2, 190e6, 40.0, 55.0), cell(4, 300e6, 80.0, 95.5)};
  out.cells[1].jain_fairness = 0.99;
  out.cells[2].jain_fairness = 0.98;
  SweepRow rr{"tcp-rr", "TCP rr 1 byte", SweepFigure::transaction_rate, {}};
  rr.cells = {cell(1, 1000.0, 10.0, 10.0),
              cell(2, std::nullopt, std::nullopt, std::nullopt, {"connect refused"}),
              cell(4, 4400.0, 40.0, 40.0)};
  s.rows = {out, rr};
  return s;
}

// The three direction rows over 8K, 32K, 64K sends, with service demand.
Sweep message_sizes() {
  Sweep s;
  s.transport = "socket";
  s.hosts = "this host -> an in-process server";
  s.length_s = 5;
  s.axis = SweepAxis::message_size;
  s.axis_values = {8192, 32768, 65536};
  for (const char* name : {"outbound", "inbound"}) {
    SweepRow row{name, std::string("TCP ") + name, SweepFigure::throughput, {}};
    for (int64_t at : s.axis_values) {
      SweepCell c = cell(at, 1e9 * double(at / 8192), 50.0, 60.0);
      c.local_sd = 2.0 / double(at / 8192);
      c.remote_sd = 3.0 / double(at / 8192);
      row.cells.push_back(c);
    }
    s.rows.push_back(row);
  }
  return s;
}

// The transaction load curve: the rate rises to a peak at 4 flows, the server's CPU saturates
// at 8, then the rate falls.
Sweep load_curve() {
  Sweep s;
  s.transport = "socket";
  s.hosts = "testbed a -> b (veth, 1 links)";
  s.length_s = 5;
  s.axis = SweepAxis::flows;
  s.axis_values = {1, 2, 4, 8, 16};
  SweepRow rr{"tcp-rr", "TCP rr 1 byte", SweepFigure::transaction_rate, {}};
  const double rate[] = {10000, 18000, 30000, 29000, 25000};
  const double remote[] = {20, 40, 80, 99.2, 100};
  for (size_t i = 0; i < 5; ++i) {
    SweepCell c = cell(s.axis_values[i], rate[i], 15.0, remote[i]);
    c.latency_mean_us = 100.0 * double(i + 1);
    c.latency_p99_us = 250.0 * double(i + 1);
    c.local_sd = 12.5;
    c.remote_sd = 20.0;
    rr.cells.push_back(c);
  }
  s.rows = {rr};
  return s;
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
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
  SweepRow from2{"x", "x", SweepFigure::throughput, {cell(2, 100, {}, {}), cell(4, 150, {}, {})}};
  CHECK(*scaling_efficiency(from2, 1) == Approx(0.75));
}

TEST_CASE("the text table has a column per adapter count and CPU under each figure", "[sweep]") {
  std::string t = sweep_text(two_rows());
  CHECK(has(t, "adapters                             1             2             4"));
  CHECK(has(t, "TCP outbound Mbit/s             100.00        190.00        300.00"));
  CHECK(has(t, "  cpu % local/remote         20.0/30.0     40.0/55.0     80.0/95.5"));
  CHECK(has(t, "failed"));
  CHECK(has(t, "TCP outbound                      100%           95%           75%"));
  CHECK(has(t, "error: TCP rr 1 byte with 2 adapter(s): connect refused"));
  // The adapters table stays as it was: no service demand, latency or marks lines.
  CHECK_FALSE(has(t, "us/KB"));
  CHECK_FALSE(has(t, "marks"));
}

TEST_CASE("JSON and CSV carry every cell with its efficiency", "[sweep]") {
  auto j = sweep_json(two_rows());
  CHECK(j["schema"] == 3);
  CHECK(j["schema"] == kSweepJsonSchema);
  CHECK(j["sweep"]["axis"] == nlohmann::json({{"name", "adapters"}, {"values", {1, 2, 4}}}));
  CHECK_FALSE(j["sweep"].contains("adapters"));
  const auto& rows = j["sweep"]["rows"];
  REQUIRE(rows.size() == 2);
  // JSON is in bit/s, as the run's document; the row names the field that carries its figure.
  CHECK(rows[0]["figure"] == "throughput_bps");
  CHECK(rows[0]["service_demand_unit"] == "us/KB");
  CHECK(rows[0]["cells"][1]["at"] == 2);
  CHECK(rows[0]["cells"][1]["adapters"] == 2);
  CHECK(rows[0]["cells"][1]["throughput_bps"].get<double>() == Approx(190e6));
  CHECK(rows[0]["cells"][1]["transaction_rate"].is_null());
  CHECK(rows[0]["cells"][1]["jain_fairness_adapters"].get<double>() == Approx(0.99));
  CHECK(rows[0]["cells"][1]["local_service_demand"].is_null());
  CHECK_FALSE(rows[0]["cells"][1].contains("latency_mean_us"));
  CHECK_FALSE(rows[0].contains("peak_at"));
  CHECK(rows[1]["figure"] == "transaction_rate");
  CHECK(rows[1]["service_demand_unit"] == "us/transaction");
  CHECK(rows[1]["cells"][0]["transaction_rate"].get<double>() == Approx(1000));
  CHECK(rows[1]["cells"][0]["throughput_bps"].is_null());
  CHECK(rows[1]["cells"][0]["latency_mean_us"].is_null());   // rr cells carry it, null here
  CHECK(rows[1]["cells"][1]["transaction_rate"].is_null());  // failed before measuring
  CHECK_FALSE(rows[0]["cells"][0].contains("value"));
  CHECK(rows[0]["cells"][2]["scaling_efficiency"].get<double>() == Approx(0.75));
  CHECK(rows[1]["cells"][1]["scaling_efficiency"].is_null());
  CHECK(rows[1]["cells"][1]["errors"][0] == "connect refused");
  CHECK(rows[0]["cells"][1]["remote_cpu_percent"].get<double>() == Approx(55.0));
  std::string csv = sweep_csv(two_rows());
  CHECK(csv.find("ROW,ADAPTERS,VALUE,UNITS,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,SCALING_EFFICIENCY,"
                 "ERRORS,LOCAL_SD,REMOTE_SD,SD_UNITS,LATENCY_MEAN_US,LATENCY_P99_US,MARK\n") == 0);
  CHECK(has(csv, "outbound,4,300.000,Mbit/s,80.00,95.50,0.7500,0,,,us/KB,,,\n"));
  CHECK(has(csv, "tcp-rr,2,,trans/s,,,,1,,,us/transaction,,,\n"));
}

TEST_CASE("a message-size sweep heads its columns with sizes and shows service demand", "[sweep]") {
  const Sweep s = message_sizes();
  std::string t = sweep_text(s);
  CHECK(has(t, "message size (-m)                   8K           32K           64K\n"));
  CHECK(has(t, "TCP outbound Mbit/s            1000.00       4000.00       8000.00\n"));
  CHECK(has(t, "  us/KB local/remote         2.00/3.00     0.50/0.75     0.25/0.38\n"));
  CHECK_FALSE(has(t, "scaling efficiency"));
  CHECK_FALSE(has(t, "marks"));
  auto j = sweep_json(s);
  CHECK(j["sweep"]["axis"]["name"] == "message_size");
  CHECK(j["sweep"]["axis"]["values"] == nlohmann::json({8192, 32768, 65536}));
  const auto& c = j["sweep"]["rows"][1]["cells"][2];
  CHECK(c["at"] == 65536);
  CHECK(c["local_service_demand"].get<double>() == Approx(0.25));
  CHECK(c["remote_service_demand"].get<double>() == Approx(0.375));
  for (const char* adapters_only : {"adapters", "scaling_efficiency", "jain_fairness_adapters"})
    CHECK_FALSE(c.contains(adapters_only));
  std::string csv = sweep_csv(s);
  CHECK(csv.rfind("ROW,MESSAGE_SIZE,VALUE,", 0) == 0);
  CHECK(has(csv, "inbound,32768,4000.000,Mbit/s,50.00,60.00,,0,0.5000,0.7500,us/KB,,,\n"));
}

TEST_CASE("the load curve marks its peak and the first column a host's CPU saturates", "[sweep]") {
  const Sweep s = load_curve();
  const SweepRow& row = s.rows[0];
  CHECK(peak_column(row) == 2u);
  CHECK(cpu_saturated_column(row) == 3u);  // 99.2% on the server; 99% is the threshold
  std::string t = sweep_text(s);
  CHECK(has(t,
            "flows (-P)                           1             2             4             8"
            "            16\n"));
  CHECK(has(t, "  latency us mean/p99      100.0/250.0   200.0/500.0   300.0/750.0"));
  CHECK(has(t, "  us/tr local/remote       12.50/20.00"));
  // Under 4 flows and 8 flows, right-aligned in 14-character columns after the 24 of the label.
  CHECK(has(t, "  marks" + std::string(17 + 28 + 10, ' ') + "peak" + std::string(6, ' ') +
                   "cpu>=99%" + std::string(14, ' ') + "\n"));
  auto j = sweep_json(s);
  const auto& r = j["sweep"]["rows"][0];
  CHECK(r["peak_at"] == 4);
  CHECK(r["cpu_saturated_at"] == 8);
  CHECK(r["cells"][4]["latency_p99_us"].get<double>() == Approx(1250));
  CHECK_FALSE(r["cells"][0].contains("adapters"));
  std::string csv = sweep_csv(s);
  CHECK(csv.rfind("ROW,FLOWS,", 0) == 0);
  CHECK(has(csv,
            "tcp-rr,4,30000.000,trans/s,15.00,80.00,,0,12.5000,20.0000,us/transaction,"
            "300.00,750.00,peak\n"));
  CHECK(has(csv, ",cpu>=99%\n"));
}

TEST_CASE("peak and saturation: failed cells, the local host, one column with both", "[sweep]") {
  SweepRow row{"tcp-rr", "TCP rr 1 byte", SweepFigure::transaction_rate, {}};
  CHECK_FALSE(peak_column(row));
  CHECK_FALSE(cpu_saturated_column(row));
  // A failed cell's figure is no peak, even when it is the highest.
  row.cells = {cell(1, 500.0, 99.0, std::nullopt), cell(2, 900.0, 100.0, 10.0, {"timeout"}),
               cell(4, 400.0, 50.0, 50.0)};
  CHECK(peak_column(row) == 0u);
  CHECK(cpu_saturated_column(row) == 0u);  // the client's CPU counts as well
  row.cells[0].local_cpu = 98.9;
  CHECK(cpu_saturated_column(row) == 1u);
  Sweep s;
  s.axis = SweepAxis::flows;
  s.axis_values = {1, 2, 4};
  row.cells[0].local_cpu = 99.0;
  s.rows = {row};
  CHECK(has(sweep_text(s), "peak,cpu>=99%"));
  CHECK(has(sweep_csv(s), ",peak+cpu>=99%\n"));
  CHECK(has(sweep_text(s), "error: TCP rr 1 byte with 2 flow(s): timeout"));
  // Nothing measured: null marks.
  for (auto& c : s.rows[0].cells)
    c = cell(c.at, std::nullopt, std::nullopt, std::nullopt, {"refused"});
  auto j = sweep_json(s);
  CHECK(j["sweep"]["rows"][0]["peak_at"].is_null());
  CHECK(j["sweep"]["rows"][0]["cpu_saturated_at"].is_null());
}

TEST_CASE("axis names, column heads and where a cell failed", "[sweep]") {
  CHECK(to_string(SweepAxis::adapters) == "adapters");
  CHECK(to_string(SweepAxis::message_size) == "message_size");
  CHECK(to_string(SweepAxis::flows) == "flows");
  CHECK(to_string(SweepAxis::mtu) == "mtu");
  CHECK(axis_value_text(SweepAxis::message_size, 8192) == "8K");
  CHECK(axis_value_text(SweepAxis::message_size, 1 << 20) == "1M");
  CHECK(axis_value_text(SweepAxis::message_size, 1472) == "1472");
  CHECK(axis_value_text(SweepAxis::mtu, 9000) == "9000");
  CHECK(axis_cell_phrase(SweepAxis::message_size, 32768) == "at -m 32K");
  CHECK(axis_cell_phrase(SweepAxis::mtu, 9000) == "at MTU 9000");
  Sweep s = two_rows();
  s.axis = SweepAxis::mtu;
  s.axis_values = {1500, 4000, 9000};
  for (auto& row : s.rows)
    for (size_t i = 0; i < row.cells.size(); ++i)
      row.cells[i].at = s.axis_values[i];
  std::string t = sweep_text(s);
  CHECK(has(t, "MTU                               1500          4000          9000\n"));
  CHECK(has(t, "error: TCP rr 1 byte at MTU 4000: connect refused"));
  CHECK_FALSE(has(t, "scaling efficiency"));
  CHECK(sweep_json(s)["sweep"]["axis"]["name"] == "mtu");
  CHECK(sweep_csv(s).rfind("ROW,MTU,", 0) == 0);
}
