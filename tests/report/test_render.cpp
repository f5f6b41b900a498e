// The renderers of one report: the JSON document's shape (docs/json-schema.md), no NaN
// anywhere, and a CSV row that matches its header.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/text.hpp"

#include "report/render.hpp"

using namespace mtperf;

namespace {

control::TestOutcome outcome(Workload w) {
  control::TestOutcome o;
  o.client.window_s = 1.0;
  SideResult server;
  server.side = Side::server;
  server.window_s = 1.0;
  for (uint32_t i = 0; i < 2; ++i) {
    FlowResult c, s;
    c.id = s.id = i;
    if (w == Workload::rr) {
      c.role = Role::rr_client;
      s.role = Role::rr_server;
      c.window.transactions = 1000;
      c.total.transactions = 1200;
      s.total.transactions = 1200;
      for (int k = 0; k < 1000; ++k) {
        o.client.latency.record(25'000 + uint64_t(k));
        c.stats.latency_sum_ns += 25'000 + uint64_t(k);
      }
      c.stats.latency_count = 1000;
    } else {
      c.role = Role::sender;
      s.role = Role::receiver;
      s.window.bytes_recv = 125'000'000;
      c.total.bytes_sent = s.total.bytes_recv = 150'000'000;
      c.stats.tcp_info_valid = true;
      c.stats.tcp_rtt_us = 20;
      c.stats.congestion = "cubic";
    }
    o.client.flows.push_back(c);
    server.flows.push_back(s);
  }
  CpuUtilization cpu;
  cpu.cpus = 2;
  cpu.total.util = 40;
  o.client.cpu = cpu;
  o.server = server;
  return o;
}

Report report_of(Workload w, int iterations = 1) {
  Report r;
  r.spec.workload = w;
  r.spec.flows = 2;
  r.environment = environment_json("test");
  for (int i = 0; i < iterations; ++i)
    r.iterations.push_back(summarize(r.spec, outcome(w)));
  finish_report(r);
  return r;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool all_finite(const nlohmann::json& j) {
  if (j.is_number_float()) return std::isfinite(j.get<double>());
  if (j.is_structured()) {
    for (auto& v : j) {
      if (!all_finite(v)) return false;
    }
  }
  return true;
}

// RFC 4180 fields: a comma inside quotes separates nothing.
size_t fields(const std::string& line) {
  size_t n = 1;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("the JSON document has its schema, test, environment and summary", "[render]") {
  Report r = report_of(Workload::stream);
  nlohmann::json j = report_json(r);
  CHECK(j.at("schema") == 1);
  CHECK(j.at("schema") == kJsonSchema);
  CHECK(j.at("test").at("workload") == "stream");
  CHECK(j.at("test").at("flows") == 2);
  CHECK(j.at("environment").at("mtperf_version") == "test");
  CHECK(j.at("environment").contains("kernel"));
  const nlohmann::json& s = j.at("summary");
  CHECK(s.at("throughput_bps").get<double>() == Approx(2e9));
  CHECK(s.at("transaction_rate").get<double>() == 0);
  CHECK(s.at("latency_us").is_null());
  CHECK(s.at("udp_loss_percent").is_null());
  REQUIRE(s.at("flows").size() == 2);
  const nlohmann::json& f = s.at("flows")[0];
  CHECK(f.at("id") == 0);
  CHECK(f.at("direction") == "c2s");
  CHECK(f.at("bytes") == 125'000'000);
  CHECK(f.at("throughput_bps").get<double>() == Approx(1e9));
  CHECK(f.at("client_bytes_sent") == 150'000'000);
  CHECK(f.at("server_bytes_received") == 150'000'000);
  CHECK(f.at("client_bytes_received") == 0);
  CHECK(f.at("server_transactions") == 0);
  CHECK(f.at("tcp_info").at("rtt_us") == 20);
  CHECK(f.at("error").is_null());
  CHECK(f.at("latency_mean_us").is_null());  // a stream measures no round trip
  CHECK(s.at("local_cpu").at("util_percent") == 40);
  CHECK(s.at("remote_cpu").is_null());
  CHECK(s.at("service_demand").at("local").at("unit") == "us/KB");
  CHECK(j.at("iterations").size() == 1);
  CHECK(j.at("confidence").is_null());
  CHECK(j.at("omni").at("THROUGHPUT").get<double>() == Approx(2000));
}

TEST_CASE("rr reports its rate and latency in the JSON document", "[render]") {
  nlohmann::json j = report_json(report_of(Workload::rr, 2));
  const nlohmann::json& s = j.at("summary");
  CHECK(s.at("transaction_rate").get<double>() == Approx(2000));
  REQUIRE(s.at("latency_us").is_object());
  CHECK(s.at("latency_us").at("mean").get<double>() == Approx(25.5).epsilon(0.01));
  CHECK(s.at("latency_us").at("count") == 4000);
  CHECK(s.at("flows")[1].at("direction") == "rr");
  CHECK(s.at("flows")[1].at("latency_mean_us").get<double>() == Approx(25.5).epsilon(0.01));
  CHECK(s.at("flows")[1].at("client_transactions") == 1200);
  CHECK(s.at("flows")[1].at("server_transactions") == 1200);
  CHECK(s.at("service_demand").at("local").at("unit") == "us/transaction");
  REQUIRE(j.at("confidence").is_object());
  CHECK(j.at("confidence").at("iterations") == 2);
  CHECK(j.at("iterations").size() == 2);
}

TEST_CASE("server figures absent from the result are null, not zero", "[render]") {
  Report r;
  r.spec.workload = Workload::stream;
  control::TestOutcome o = outcome(Workload::stream);
  o.server.reset();
  r.iterations.push_back(summarize(r.spec, o));
  finish_report(r);
  nlohmann::json f = report_json(r).at("summary").at("flows")[0];
  CHECK(f.at("server_bytes_received").is_null());
  CHECK(f.at("server_bytes_sent").is_null());
  CHECK(f.at("server_transactions").is_null());
  CHECK(f.at("client_bytes_sent") == 150'000'000);
}

TEST_CASE("the JSON document never carries NaN or infinity", "[render]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Report r = report_of(Workload::rr, 2);
  r.summary.throughput_bps = nan;
  r.summary.transaction_rate = inf;
  r.summary.jain_fairness = nan;
  r.summary.latency->mean_us = nan;
  r.summary.flows[0].latency_mean_us = nan;
  r.confidence->width_percent_of_mean = inf;
  nlohmann::json j = report_json(r);
  CHECK(j.at("summary").at("throughput_bps").is_null());
  CHECK(j.at("summary").at("transaction_rate").is_null());
  CHECK(j.at("summary").at("latency_us").at("mean").is_null());
  CHECK(j.at("confidence").at("width_percent").is_null());
  std::string text = lower(j.dump());
  CHECK(text.find("nan") == std::string::npos);
  CHECK(all_finite(j));
  // A fresh report (empty histogram, no CPU figures) has none either.
  Report plain = report_of(Workload::stream);
  std::string plain_text = lower(report_json(plain).dump());
  CHECK(plain_text.find("nan") == std::string::npos);
  CHECK(all_finite(report_json(plain)));
}

TEST_CASE("CSV: a header and one row with as many fields", "[render]") {
  for (Workload w : {Workload::stream, Workload::rr}) {
    Report r = report_of(w, 2);
    std::vector<std::string> out = mtperf::test::split_lines(report_csv(r, true));
    REQUIRE(out.size() == 2);
    CHECK(out[0].rfind("WORKLOAD,PROTOCOL,TRANSPORT,", 0) == 0);
    CHECK(fields(out[0]) == fields(out[1]));
    CHECK(out[1].rfind(std::string(to_string(w)) + ",tcp,socket,2,", 0) == 0);
    CHECK(lower(out[1]).find("nan") == std::string::npos);
    std::vector<std::string> row_only = mtperf::test::split_lines(report_csv(r, false));
    REQUIRE(row_only.size() == 1);
    CHECK(row_only[0] == out[1]);
  }
}

TEST_CASE("CSV per flow: a header and a line for each flow, errors quoted", "[render]") {
  Report r = report_of(Workload::rr, 2);
  r.summary.flows.resize(3);
  for (uint32_t i = 0; i < 3; ++i)
    r.summary.flows[i].id = i;
  r.summary.flows[1].latency_mean_us = 12.5;
  r.summary.flows[1].server_total = FlowTotals{7, 9, 1};
  r.summary.flows[2].error = "connect: \"refused\", twice";
  std::vector<std::string> out = mtperf::test::split_lines(report_flows_csv(r));
  REQUIRE(out.size() == 4);
  CHECK(out[0].rfind("FLOW,DIRECTION,ADAPTER,", 0) == 0);
  CHECK(fields(out[1]) == fields(out[0]));
  CHECK(fields(out[2]) == fields(out[0]));
  CHECK(out[1].rfind("0,rr,", 0) == 0);
  CHECK(out[2].rfind("1,", 0) == 0);
  CHECK_THAT(out[2], Catch::Contains(",12.500,"));
  const std::string covers =
      ",\"the last iteration (2 of 2); RETRANSMITS, CLIENT_* and SERVER_*: the connection's whole "
      "life\"";
  CHECK_THAT(out[2], Catch::EndsWith(",7,9," + covers));
  // The error's comma sits inside the quotes, its quotes doubled.
  CHECK_THAT(out[3], Catch::EndsWith(",\"connect: \"\"refused\"\", twice\"" + covers));
}

TEST_CASE("the text report names the test and its figures", "[render]") {
  std::string text = report_text(report_of(Workload::stream));
  CHECK_THAT(text, Catch::Contains("stream"));
  CHECK_FALSE(text.empty());
  std::string rr = report_text(report_of(Workload::rr));
  CHECK_THAT(rr, Catch::Contains("rr"));
}

// Issue 40: the headline of several iterations is their mean, the flow table the last one's;
// the text says which is which, and where a figure covers the connection's whole life.
TEST_CASE("the text report says what each figure covers", "[render]") {
  const std::string one = report_text(report_of(Workload::rr));
  CHECK_THAT(one, !Catch::Contains("iterations") && !Catch::Contains("the last iteration"));
  CHECK_THAT(one, Catch::Contains("(1 byte request, 1 byte response, burst 1)"));
  const std::string rr = report_text(report_of(Workload::rr, 3));
  CHECK_THAT(rr, Catch::Contains("trans/s  (mean of 3 iterations; 1 byte request"));
  CHECK_THAT(rr, Catch::Contains("(all 3 iterations)"));  // latency: every iteration's samples
  CHECK_THAT(rr, Catch::Contains("hosts, the last iteration (3 of 3) alone:"));
  CHECK_THAT(rr, Catch::Contains("per flow, the last iteration (3 of 3) alone; the headline is "
                                 "the mean of all 3:"));
  const std::string stream = report_text(report_of(Workload::stream, 2));
  CHECK_THAT(stream, Catch::Contains("Mbit/s  (mean of 2 iterations; 10^6 bits/s;"));
  CHECK_THAT(stream, Catch::Contains("retrans: the sender's TCP_INFO, the connection's whole life, "
                                     "warm-up included"));
  // The table follows its label.
  CHECK(stream.find("per flow, the last iteration") < stream.find("retrans  "));
}

// Issue 40: the JSON and the CSV say it too, from one table (report/covers.cpp) that names every
// figure of the summary, so a figure added without saying what it covers fails here.
TEST_CASE("the JSON and the CSV say what each figure covers", "[render]") {
  const nlohmann::json j = report_json(report_of(Workload::stream, 3));
  const nlohmann::json& covers = j.at("covers");
  CHECK(covers.at("iterations") == 3);
  const nlohmann::json& figures = covers.at("summary");
  for (auto& [key, value] : j.at("summary").items()) {
    INFO(key);
    CHECK(figures.contains(key));
  }
  const nlohmann::json& flow = j.at("summary").at("flows").at(0);
  for (auto& [key, cover] : figures.items()) {
    INFO(key);
    if (key.rfind("flows[].", 0) == 0) {
      CHECK(flow.contains(key.substr(8)));
      CHECK(cover == "whole_connection");
    } else {
      CHECK(j.at("summary").contains(key));
    }
  }
  CHECK(figures.at("throughput_bps") == "mean_of_iterations");
  CHECK(figures.at("latency_us") == "all_iterations");
  CHECK(figures.at("flows") == "last_iteration");
  CHECK(figures.at("local_cpu") == "last_iteration");

  CHECK_THAT(report_csv(report_of(Workload::rr, 3), false),
             Catch::EndsWith(",\"mean of 3 iterations; latency: all 3; CPU, service demand, UDP "
                             "loss: the last\"\n"));
  CHECK_THAT(report_csv(report_of(Workload::rr, 1), false), Catch::EndsWith(",one iteration\n"));
  CHECK_THAT(report_flows_csv(report_of(Workload::stream, 1)),
             Catch::EndsWith(",\"the measured window; RETRANSMITS, CLIENT_* and SERVER_*: the "
                             "connection's whole life\"\n"));
}

TEST_CASE("a run stopped early and a stall are in the text and the JSON", "[render]") {
  control::TestOutcome o = outcome(Workload::stream);
  o.client.stopped = {StopCause::verify, 1.25, "flow 1 received a byte that failed --verify"};
  o.client.longest_stall_s = 0.62;
  o.client.longest_stall_start_s = 0.4;
  Report r;
  r.spec.flows = 2;
  r.iterations.push_back(summarize(r.spec, o));
  r.iterations.push_back(summarize(r.spec, outcome(Workload::stream)));
  finish_report(r);
  REQUIRE(r.summary.stopped_early);
  CHECK(r.summary.longest_stall_s == Approx(0.62));  // the longest of any iteration
  std::string text = report_text(r);
  CHECK_THAT(text, Catch::Contains("STOPPED EARLY at 1.25 s (--stop-on-error, verify): flow 1"));
  CHECK_THAT(text, Catch::Contains("longest stall 0.62 s from 0.40 s"));
  nlohmann::json j = report_json(r);
  CHECK(j["summary"]["stopped_early"]["cause"] == "verify");
  CHECK(j["summary"]["stopped_early"]["at_s"].get<double>() == Approx(1.25));
  CHECK(j["summary"]["longest_stall_s"].get<double>() == Approx(0.62));
  CHECK(j["iterations"][1]["stopped_early"].is_null());
  // A run that went its length: no such line, null in JSON.
  Report plain = report_of(Workload::stream);
  CHECK_THAT(report_text(plain), !Catch::Contains("STOPPED EARLY"));
  CHECK_THAT(report_text(plain), !Catch::Contains("longest stall"));
  CHECK(report_json(plain)["summary"]["stopped_early"].is_null());
}

TEST_CASE("flows that did not connect: counted and named in the text and the JSON", "[render]") {
  control::TestOutcome o = outcome(Workload::stream);
  o.flows_asked = 14;
  for (uint32_t f = 2; f < 14; ++f)
    o.not_connected.push_back({f, "connect to 127.0.0.1:" + std::to_string(40000 + f) + ": " +
                                      (f == 2 ? "Connection timed out" : "Connection refused")});
  Report r;
  r.spec.flows = 14;
  r.iterations.push_back(summarize(r.spec, o));
  finish_report(r);
  std::string text = report_text(r);
  CHECK_THAT(text, Catch::Contains("  flows not connected 12 of 14: 2 (Connection timed out), 3 "
                                   "(Connection refused), 4 (Connection refused)"));
  CHECK_THAT(text, Catch::Contains("11 (Connection refused), and 2 more\n"));
  nlohmann::json j = report_json(r);
  CHECK(j["summary"]["flows_asked"] == 14);
  REQUIRE(j["summary"]["flows_not_connected"].size() == 12);
  CHECK(j["summary"]["flows_not_connected"][0]["flow"] == 2);
  CHECK(j["summary"]["flows_not_connected"][0]["error"] ==
        "connect to 127.0.0.1:40002: Connection timed out");
  CHECK(j["iterations"][0]["flows_not_connected"].size() == 12);
  // Every flow connected: no line, an empty list.
  Report plain = report_of(Workload::stream);
  CHECK_THAT(report_text(plain), !Catch::Contains("not connected"));
  CHECK(report_json(plain)["summary"]["flows_not_connected"] == nlohmann::json::array());
}

TEST_CASE("many flows read as a distribution in text, every one in JSON", "[render]") {
  Report r;
  r.spec.workload = Workload::stream;
  r.spec.flows = 100;
  r.environment = environment_json("test");
  control::TestOutcome o;
  o.client.window_s = 1.0;
  o.setup_s = 0.25;
  for (uint32_t i = 0; i < 100; ++i) {
    FlowResult c;
    c.id = i;
    c.role = Role::sender;
    // Flow i sends (i + 1) Mbit in the one-second window: 1..100 Mbit/s.
    c.window.bytes_sent = c.total.bytes_sent = (i + 1) * 125'000;
    o.client.flows.push_back(c);
  }
  r.iterations.push_back(summarize(r.spec, o));
  finish_report(r);
  std::string text = report_text(r);
  CAPTURE(text);
  CHECK(text.find("per flow Mbit/s: min 1.0 p1 1.0 p10 10.0 median 50.0 p90 90.0 p99 99.0 max "
                  "100.0") != std::string::npos);
  CHECK(text.find("slowest flows: flow 0 1.0, flow 1 2.0, flow 2 3.0, flow 3 4.0, flow 4 5.0") !=
        std::string::npos);
  CHECK(text.find("set-up             100 flows in 0.250 s") != std::string::npos);
  // No line per flow: flow 57's own row would start with its id and direction.
  CHECK(text.find("     57   c2s") == std::string::npos);
  nlohmann::json j = report_json(r);
  CHECK(j.at("summary").at("flows").size() == 100);
  CHECK(j.at("summary").at("setup_s") == 0.25);
}
