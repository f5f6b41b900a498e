// Fuzz target: what a client does with the body of the server's RESULT frame — side_from_json,
// then the report built from it beside the client's own figures (summarize, finish_report) and
// rendered as JSON, text and CSV, as `mtperf run` does.
//
// Input: the RESULT body (the frame header is the control_test target's). It is read against
// three tests (a TCP stream, a UDP bidir, a TCP rr), each with a fixed client side whose flows
// the server's may match or not.
//
// Findings beyond crashes and sanitizer reports: an exception other than std::invalid_argument
// out of side_from_json, and any exception out of the report.
#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "control/client.hpp"
#include "control/side_json.hpp"
#include "fuzz/fuzz_support.hpp"
#include "report/render.hpp"
#include "report/summary.hpp"

namespace mtperf::fuzz {
namespace {

TestSpec make_spec(Workload w, Proto p, uint32_t flows) {
  TestSpec s;
  s.workload = w;
  s.proto = p;
  s.flows = flows;
  if (w == Workload::rr && p == Proto::udp) s.req_size = s.resp_size = kUdpHeaderBytes;
  validate(s);
  return s;
}

// The client's side of the test, as its runner would report it after a one-second window.
SideResult client_side(const TestSpec& spec) {
  SideResult r;
  r.side = Side::client;
  r.window_s = 1;
  for (uint32_t i = 0; i < spec.flows_total(); ++i) {
    FlowResult f;
    f.id = i;
    f.role = role_of(spec, i, Side::client);
    f.window.bytes_sent = f.window.bytes_recv = 1000000 * (i + 1);
    f.window.msgs_sent = f.window.msgs_recv = f.window.transactions = 1000 * (i + 1);
    f.total = f.window;
    r.latency.record(20000 + 1000 * i);
    f.stats.latency_count = 1;
    f.stats.latency_sum_ns = 20000 + 1000 * i;
    r.flows.push_back(f);
  }
  CpuUtilization cpu;
  cpu.cpus = 2;
  cpu.total.util = 50;
  cpu.total.user = 20;
  cpu.total.sys = 30;
  cpu.total.idle = 50;
  cpu.per_cpu = {{0, cpu.total}, {1, cpu.total}};
  r.cpu = cpu;
  r.process.user_s = 0.2;
  r.process.sys_s = 0.3;
  return r;
}

void report_on(const TestSpec& spec, const SideResult& server) {
  control::TestOutcome outcome;
  outcome.client = client_side(spec);
  outcome.server = server;
  outcome.server_address = "192.0.2.1";
  Report r;
  r.spec = spec;
  r.iterations.push_back(summarize(spec, outcome));
  r.iterations.push_back(r.iterations.back());  // two iterations: the confidence figures too
  finish_report(r);
  (void)report_json(r).dump(2);
  (void)report_text(r);
  (void)report_csv(r, true);
}

void run(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;  // decode() refuses it before side_from_json
  SideResult server;
  try {
    server = side_from_json(j);
  } catch (const std::invalid_argument&) {
    return;  // the client fails the test with "server's RESULT: ..."
  }
  static const TestSpec specs[] = {make_spec(Workload::stream, Proto::tcp, 2),
                                   make_spec(Workload::bidir, Proto::udp, 2),
                                   make_spec(Workload::rr, Proto::tcp, 4)};
  for (const TestSpec& spec : specs)
    report_on(spec, server);
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mtperf::fuzz::run(data, size);
  return 0;
}
