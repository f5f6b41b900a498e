// The suite's JSON document: every case on every usable transport, each result with its status,
// the run's own document where it ran, and why where it did not.
#include <catch2/catch.hpp>

#include "report/render.hpp"
#include "report/suite.hpp"

using namespace mtperf;

namespace {

Report stream_report() {
  control::TestOutcome o;
  o.client.window_s = 1.0;
  FlowResult c;
  c.role = Role::sender;
  c.window.bytes_sent = 125'000'000;
  o.client.flows.push_back(c);
  Report r;
  r.spec.workload = Workload::stream;
  r.environment = environment_json("test");
  r.iterations.push_back(summarize(r.spec, o));
  finish_report(r);
  return r;
}

Suite two_transports() {
  Suite s;
  s.length_s = 2;
  s.transports = {"socket", "rdma"};
  s.unusable = {{"clip", "needs root"}};
  SuiteCase stream{"TCP stream 64K", {"-w", "stream"}, {}};
  stream.results = {{"socket", SuiteStatus::ok, stream_report(), ""},
                    {"rdma", SuiteStatus::failed, std::nullopt, "connection refused"}};
  SuiteCase udp{"UDP rr 1K/2K", {"-w", "rr", "-p", "udp", "-r", "1024,2048"}, {}};
  udp.results = {{"socket", SuiteStatus::interrupted, std::nullopt, ""},
                 {"rdma", SuiteStatus::skipped, std::nullopt, "no UDP"}};
  s.cases = {stream, udp};
  return s;
}

}  // namespace

TEST_CASE("the suite's JSON has every case, transport and status", "[suite]") {
  nlohmann::json j = suite_json(two_transports());
  CHECK(j.at("schema") == kSuiteJsonSchema);
  const auto& s = j.at("suite");
  CHECK(s.at("length_s") == 2.0);
  CHECK(s.at("transports") == nlohmann::json({"socket", "rdma"}));
  CHECK(s.at("unusable")[0].at("transport") == "clip");
  CHECK(s.at("unusable")[0].at("why") == "needs root");
  REQUIRE(s.at("cases").size() == 2);
  const auto& stream = s.at("cases")[0];
  CHECK(stream.at("label") == "TCP stream 64K");
  CHECK(stream.at("args") == nlohmann::json({"-w", "stream"}));
  REQUIRE(stream.at("results").size() == 2);
  const auto& ok = stream.at("results")[0];
  CHECK(ok.at("status") == "ok");
  CHECK(ok.at("message").is_null());
  // The run's own document, as `mtperf run --format json` writes it.
  CHECK(ok.at("report") == report_json(stream_report()));
  CHECK(ok.at("report").at("summary").at("throughput_bps").get<double>() == Approx(1e9));
  const auto& failed = stream.at("results")[1];
  CHECK(failed.at("status") == "failed");
  CHECK(failed.at("report").is_null());
  CHECK(failed.at("message") == "connection refused");
  const auto& udp = s.at("cases")[1].at("results");
  CHECK(udp[0].at("status") == "interrupted");
  CHECK(udp[1].at("status") == "skipped");
  CHECK(udp[1].at("message") == "no UDP");
}
