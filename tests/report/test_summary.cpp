// The figures of a test, from hand-made raw results: throughput is what the receiving side took
// in over the measured window, rates are per second of that window, and iterations fold into
// means and a confidence interval.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "report/render.hpp"
#include "report/summary.hpp"

using namespace mtperf;

namespace {

FlowResult flow(uint32_t id, Role role) {
  FlowResult f;
  f.id = id;
  f.role = role;
  return f;
}

CpuUtilization cpu(double util_percent, int cpus) {
  CpuUtilization c;
  c.total.util = util_percent;
  c.total.idle = 100 - util_percent;
  c.cpus = cpus;
  return c;
}

// A stream test of `window_s` whose server received `bytes[i]` on flow i in the window.
control::TestOutcome stream_outcome(const std::vector<uint64_t>& bytes, double window_s) {
  control::TestOutcome o;
  o.client.side = Side::client;
  o.client.window_s = window_s;
  SideResult server;
  server.side = Side::server;
  server.window_s = window_s;
  for (uint32_t i = 0; i < bytes.size(); ++i) {
    FlowResult c = flow(i, Role::sender);
    c.window.bytes_sent = bytes[i] + 1000;  // the sender's count includes what was in flight
    c.total.bytes_sent = bytes[i] + 5000;
    o.client.flows.push_back(c);
    FlowResult s = flow(i, Role::receiver);
    s.window.bytes_recv = bytes[i];
    s.total.bytes_recv = bytes[i] + 5000;
    server.flows.push_back(s);
  }
  o.server = server;
  return o;
}

// An rr test: flow i completed transactions[i] in the window, each round trip `rtt_ns` long.
control::TestOutcome rr_outcome(const std::vector<uint64_t>& transactions, double window_s,
                                uint64_t rtt_ns) {
  control::TestOutcome o;
  o.client.window_s = window_s;
  SideResult server;
  server.side = Side::server;
  server.window_s = window_s;
  for (uint32_t i = 0; i < transactions.size(); ++i) {
    FlowResult c = flow(i, Role::rr_client);
    c.window.transactions = transactions[i];
    c.window.bytes_sent = c.window.bytes_recv = transactions[i];
    // As the runner reports them: the samples in the side's (workers') histogram, the flow's
    // count and sum.
    for (uint64_t k = 0; k < transactions[i]; ++k)
      o.client.latency.record(rtt_ns);
    c.stats.latency_count = transactions[i];
    c.stats.latency_sum_ns = transactions[i] * rtt_ns;
    o.client.flows.push_back(c);
    FlowResult s = flow(i, Role::rr_server);
    s.window.transactions = transactions[i];
    s.window.bytes_recv = transactions[i];
    server.flows.push_back(s);
  }
  o.server = server;
  return o;
}

TestSpec spec_of(Workload w, Proto p = Proto::tcp) {
  TestSpec s;
  s.workload = w;
  s.proto = p;
  return s;
}

}  // namespace

TEST_CASE("throughput is the receiver's window bytes over the window", "[summary]") {
  TestSpec spec = spec_of(Workload::stream);
  Summary s = summarize(spec, stream_outcome({250'000'000}, 2.0));
  CHECK(s.window_s == 2.0);
  REQUIRE(s.flows.size() == 1);
  CHECK(s.flows[0].direction == "c2s");
  CHECK(s.flows[0].bytes == 250'000'000);
  CHECK(s.flows[0].throughput_bps == Approx(1e9));
  CHECK(s.throughput_bps == Approx(1e9));
  CHECK(s.throughput_c2s_bps == Approx(1e9));
  CHECK(s.throughput_s2c_bps == 0);
  CHECK(s.transactions == 0);
  CHECK_FALSE(s.latency.has_value());
  CHECK_FALSE(s.udp_loss_percent.has_value());
  CHECK(s.errors.empty());
}

TEST_CASE("whole-test totals of both sides are kept per flow", "[summary]") {
  Summary s = summarize(spec_of(Workload::stream), stream_outcome({1000, 2000}, 1.0));
  REQUIRE(s.flows.size() == 2);
  CHECK(s.flows[1].client_total.bytes_sent == 7000);
  REQUIRE(s.flows[1].server_total);
  CHECK(s.flows[1].server_total->bytes_received == 7000);

  control::TestOutcome no_server = stream_outcome({1000}, 1.0);
  no_server.server.reset();
  Summary alone = summarize(spec_of(Workload::stream), no_server);
  CHECK_FALSE(alone.flows[0].server_total.has_value());
  // Without the receiver's figures, what the sender counted in the window is all there is.
  CHECK(alone.flows[0].bytes == 2000);
}

TEST_CASE("maerts counts what the client received", "[summary]") {
  control::TestOutcome o;
  o.client.window_s = 4.0;
  FlowResult c = flow(0, Role::receiver);
  c.window.bytes_recv = 500'000'000;
  o.client.flows.push_back(c);
  SideResult server;
  FlowResult s = flow(0, Role::sender);
  s.window.bytes_sent = 600'000'000;
  server.flows.push_back(s);
  o.server = server;
  Summary sum = summarize(spec_of(Workload::maerts), o);
  CHECK(sum.flows[0].direction == "s2c");
  CHECK(sum.throughput_bps == Approx(1e9));
  CHECK(sum.throughput_s2c_bps == Approx(1e9));
  CHECK(sum.throughput_c2s_bps == 0);
}

TEST_CASE("bidir splits throughput by direction", "[summary]") {
  TestSpec spec = spec_of(Workload::bidir);
  control::TestOutcome o;
  o.client.window_s = 1.0;
  SideResult server;
  FlowResult c0 = flow(0, Role::sender), s0 = flow(0, Role::receiver);
  s0.window.bytes_recv = 100'000'000;  // 0.8 Gbit/s up
  FlowResult c1 = flow(1, Role::receiver), s1 = flow(1, Role::sender);
  c1.window.bytes_recv = 200'000'000;  // 1.6 Gbit/s down
  o.client.flows = {c0, c1};
  server.flows = {s0, s1};
  o.server = server;
  Summary s = summarize(spec, o);
  CHECK(s.throughput_c2s_bps == Approx(8e8));
  CHECK(s.throughput_s2c_bps == Approx(1.6e9));
  CHECK(s.throughput_bps == Approx(2.4e9));
}

TEST_CASE("Jain's index is taken over the flows' rates", "[summary]") {
  // Rates 0.8 and 2.4 Gbit/s: (3.2)^2 / (2 * (0.64 + 5.76)) = 0.8.
  Summary s = summarize(spec_of(Workload::stream), stream_outcome({100'000'000, 300'000'000}, 1));
  CHECK(s.jain_fairness == Approx(0.8));
  CHECK(s.min_max_ratio == Approx(1.0 / 3));
  Summary even = summarize(spec_of(Workload::stream), stream_outcome({5000, 5000, 5000}, 1));
  CHECK(even.jain_fairness == Approx(1.0));
  CHECK(even.min_max_ratio == Approx(1.0));
}

TEST_CASE("transaction rate and latency come from the client's round trips", "[summary]") {
  TestSpec spec = spec_of(Workload::rr);
  Summary s = summarize(spec, rr_outcome({3000, 2000}, 2.0, 40'000));
  CHECK(s.transactions == 5000);
  CHECK(s.transaction_rate == Approx(2500));
  REQUIRE(s.flows.size() == 2);
  CHECK(s.flows[0].direction == "rr");
  CHECK(s.flows[0].transaction_rate == Approx(1500));
  CHECK(s.flows[1].transaction_rate == Approx(1000));
  REQUIRE(s.flows[0].latency_mean_us);
  CHECK(*s.flows[0].latency_mean_us == Approx(40).epsilon(0.01));
  REQUIRE(s.latency);
  CHECK(s.latency->count == 5000);
  CHECK(s.latency->mean_us == Approx(40).epsilon(0.01));
  CHECK(s.latency->p50_us == Approx(40).epsilon(0.01));
  CHECK(s.latency->p99_us == Approx(40).epsilon(0.01));
  // Fairness over transaction rates: 1500 and 1000.
  CHECK(s.jain_fairness == Approx(2500.0 * 2500 / (2 * (1500.0 * 1500 + 1000.0 * 1000))));
  // Bytes both ways: each side's received bytes in the window, (6000 + 4000) * 8 / 2 s.
  CHECK(s.throughput_bps == Approx(40000));
  // Each direction its own: requests the server took in, responses the client took in.
  CHECK(s.flows[0].bytes_c2s == 3000);
  CHECK(s.flows[0].bytes_s2c == 3000);
  CHECK(s.throughput_c2s_bps == Approx(20000));
  CHECK(s.throughput_s2c_bps == Approx(20000));
}

TEST_CASE("rr: requests count client to server, responses server to client", "[summary]") {
  // 100-byte requests, 1000-byte responses: 500 transactions in a 1 s window.
  control::TestOutcome o = rr_outcome({500}, 1.0, 10'000);
  o.client.flows[0].window.bytes_sent = 50'000;
  o.client.flows[0].window.bytes_recv = 500'000;
  o.server->flows[0].window.bytes_recv = 50'000;
  Summary s = summarize(spec_of(Workload::rr), o);
  CHECK(s.throughput_c2s_bps == Approx(400'000));
  CHECK(s.throughput_s2c_bps == Approx(4'000'000));
  CHECK(s.throughput_bps == Approx(4'400'000));
  // Without the server's result, the requests the client sent.
  o.server.reset();
  o.client.flows[0].window.bytes_sent = 60'000;
  Summary alone = summarize(spec_of(Workload::rr), o);
  CHECK(alone.throughput_c2s_bps == Approx(480'000));
  CHECK(alone.throughput_s2c_bps == Approx(4'000'000));
  // Iterations average each direction apart.
  Report r;
  r.spec = spec_of(Workload::rr);
  r.iterations = {s, alone};
  finish_report(r);
  CHECK(r.summary.throughput_c2s_bps == Approx(440'000));
  CHECK(r.summary.throughput_s2c_bps == Approx(4'000'000));
}

TEST_CASE("a flow without round trips has no mean latency", "[summary]") {
  Summary stream = summarize(spec_of(Workload::stream), stream_outcome({1000}, 1.0));
  CHECK_FALSE(stream.flows[0].latency_mean_us.has_value());
  Summary idle = summarize(spec_of(Workload::rr), rr_outcome({0}, 1.0, 10'000));
  CHECK_FALSE(idle.flows[0].latency_mean_us.has_value());
}

TEST_CASE("service demand is CPU time per KB or per transaction", "[summary]") {
  SECTION("stream: us per KB") {
    control::TestOutcome o = stream_outcome({256'000'000}, 2.0);
    o.client.cpu = cpu(50, 2);   // 2 s of CPU over 250,000 KB
    o.server->cpu = cpu(25, 4);  // the same 2 s of CPU on the server
    Summary s = summarize(spec_of(Workload::stream), o);
    REQUIRE(s.local_cpu);
    REQUIRE(s.remote_cpu);
    CHECK(s.local_cpu->service_demand_unit == "us/KB");
    CHECK(s.local_cpu->service_demand == Approx(2e6 / 250'000.0));
    CHECK(s.remote_cpu->service_demand == Approx(2e6 / 250'000.0));
    CHECK(s.local_cpu->host.total.util == 50);
  }
  SECTION("rr: us per transaction") {
    control::TestOutcome o = rr_outcome({5000}, 2.0, 10'000);
    o.client.cpu = cpu(25, 4);  // 2 s of CPU over 5000 transactions
    Summary s = summarize(spec_of(Workload::rr), o);
    REQUIRE(s.local_cpu);
    CHECK(s.local_cpu->service_demand_unit == "us/transaction");
    CHECK(s.local_cpu->service_demand == Approx(400));
    CHECK_FALSE(s.remote_cpu.has_value());  // no server CPU figures, none invented
  }
}

TEST_CASE("UDP loss is lost datagrams over datagrams sent", "[summary]") {
  TestSpec spec = spec_of(Workload::stream, Proto::udp);
  control::TestOutcome o = stream_outcome({1'000'000}, 1.0);
  o.client.flows[0].total.msgs_sent = 1000;
  o.server->flows[0].stats.udp.received = 990;
  o.server->flows[0].stats.udp.lost = 10;
  Summary s = summarize(spec, o);
  REQUIRE(s.udp_loss_percent);
  CHECK(*s.udp_loss_percent == Approx(1.0));
  CHECK(s.flows[0].udp_sent == 1000u);
  CHECK(s.flows[0].udp_received == 990u);
  CHECK(s.flows[0].udp_lost == 10u);

  // A tail dropped after the highest sequence the receiver saw: no gap, but still lost.
  o.server->flows[0].stats.udp.lost = 0;
  CHECK(*summarize(spec, o).udp_loss_percent == Approx(1.0));

  o.server->flows[0].stats.udp.received = 1000;
  CHECK(*summarize(spec, o).udp_loss_percent == 0);
}

TEST_CASE("errors of both sides are reported, the server's marked", "[summary]") {
  control::TestOutcome o = stream_outcome({1000}, 1.0);
  o.client.errors = {"flow 0: reset"};
  o.server->errors = {"flow 0: timeout"};
  Summary s = summarize(spec_of(Workload::stream), o);
  REQUIRE(s.errors.size() == 2);
  CHECK(s.errors[0] == "flow 0: reset");
  CHECK(s.errors[1] == "server flow 0: timeout");
}

TEST_CASE("a zero window gives zero rates, not infinities", "[summary]") {
  Summary s = summarize(spec_of(Workload::rr), rr_outcome({10}, 0.0, 1000));
  CHECK(s.transaction_rate == 0);
  CHECK(s.throughput_bps == 0);
  CHECK(std::isfinite(s.jain_fairness));
}

TEST_CASE("iterations fold into means", "[summary]") {
  Report r;
  r.spec = spec_of(Workload::rr);
  r.iterations.push_back(summarize(r.spec, rr_outcome({1000}, 1.0, 10'000)));
  r.iterations.push_back(summarize(r.spec, rr_outcome({2000}, 1.0, 20'000)));
  r.iterations.push_back(summarize(r.spec, rr_outcome({3000}, 1.0, 30'000)));
  finish_report(r);
  CHECK(r.summary.transaction_rate == Approx(2000));
  REQUIRE(r.summary.latency);
  // Latency over all the round trips of all iterations: (1000*10 + 2000*20 + 3000*30) / 6000.
  CHECK(r.summary.latency->count == 6000);
  CHECK(r.summary.latency->mean_us == Approx(140.0 / 6).epsilon(0.01));
  REQUIRE(r.confidence);
  CHECK(r.confidence->n == 3);
  CHECK(r.confidence->mean == Approx(2000));
}

TEST_CASE("stream iterations average throughput and fairness", "[summary]") {
  Report r;
  r.spec = spec_of(Workload::stream);
  r.iterations.push_back(summarize(r.spec, stream_outcome({100'000'000, 300'000'000}, 1.0)));
  r.iterations.push_back(summarize(r.spec, stream_outcome({200'000'000, 200'000'000}, 1.0)));
  r.iterations[1].errors = {"flow 1: reset"};
  finish_report(r);
  CHECK(r.summary.throughput_bps == Approx(3.2e9));
  CHECK(r.summary.throughput_c2s_bps == Approx(3.2e9));
  CHECK(r.summary.jain_fairness == Approx((0.8 + 1.0) / 2));
  CHECK(r.summary.errors == std::vector<std::string>{"flow 1: reset"});
  CHECK(r.summary.flows.size() == 2);
}

TEST_CASE("the confidence target is met or not", "[summary]") {
  Report r;
  r.spec = spec_of(Workload::stream);
  r.rule.level = 0.95;
  r.rule.width_percent = 5;
  SECTION("close samples: met") {
    // 1.000, 1.001, 0.999 Gbit/s: s = 1 Mbit/s, half width t(0.975, 2) * s / sqrt(3).
    for (uint64_t b : {125'000'000, 125'125'000, 124'875'000}) {
      r.iterations.push_back(summarize(r.spec, stream_outcome({b}, 1.0)));
    }
    finish_report(r);
    REQUIRE(r.confidence);
    CHECK(r.confidence->mean == Approx(1e9));
    CHECK(r.confidence->half_width == Approx(4.302653 * 1e6 / std::sqrt(3.0)).epsilon(1e-4));
    CHECK(r.confidence_met);
  }
  SECTION("spread samples: not met") {
    for (uint64_t b : {125'000'000, 250'000'000, 375'000'000}) {
      r.iterations.push_back(summarize(r.spec, stream_outcome({b}, 1.0)));
    }
    finish_report(r);
    REQUIRE(r.confidence);
    CHECK(r.confidence->mean == Approx(2e9));
    CHECK_FALSE(r.confidence_met);
  }
  SECTION("one iteration: no interval") {
    r.iterations.push_back(summarize(r.spec, stream_outcome({125'000'000}, 1.0)));
    finish_report(r);
    CHECK_FALSE(r.confidence.has_value());
    CHECK_FALSE(r.confidence_met);
    CHECK(r.summary.throughput_bps == Approx(1e9));
  }
}

TEST_CASE("no iterations leave the report empty", "[summary]") {
  Report r;
  finish_report(r);
  CHECK(r.summary.throughput_bps == 0);
  CHECK_FALSE(r.confidence.has_value());
}

TEST_CASE("a window too short to measure gives no CPU figures, never impossible ones",
          "[summary]") {
  // A run that failed at once: the server's window was 16 us, and CPU time brought up to date
  // inside it (a tick's worth) printed "remote 76875.0% of one CPU".
  control::TestOutcome o = rr_outcome({0}, 1.6e-5, 1000);
  o.client.window_s = 1.6e-5;
  o.server->window_s = 1.6e-5;
  o.server->process.user_s = 0.0123;
  o.client.process.sys_s = 0.004;
  o.client.cpu = cpu(90, 4);
  o.server->cpu = cpu(90, 4);
  Summary s = summarize(spec_of(Workload::rr), o);
  CHECK_FALSE(s.remote_process_cpu_percent.has_value());
  CHECK_FALSE(s.local_process_cpu_percent.has_value());
  CHECK_FALSE(s.remote_cpu.has_value());
  CHECK_FALSE(s.local_cpu.has_value());
  Report r;
  r.spec = spec_of(Workload::rr);
  r.iterations = {s};
  r.summary = s;
  CHECK(report_json(r).at("summary").at("remote_process_cpu_percent").is_null());
  CHECK_THAT(report_text(r), Catch::Contains("local n/a remote n/a of one CPU"));
}

TEST_CASE("mtperf's own CPU is a share of the window, and never more than the host has",
          "[summary]") {
  control::TestOutcome o = rr_outcome({100}, 2.0, 1000);
  o.client.process.user_s = 0.5;
  o.client.cpu = cpu(10, 2);
  o.server->process.user_s = 50;  // 2500% of one CPU on a 2-CPU host: impossible
  o.server->cpu = cpu(10, 2);
  Summary s = summarize(spec_of(Workload::rr), o);
  REQUIRE(s.local_process_cpu_percent);
  CHECK(*s.local_process_cpu_percent == Approx(25));
  CHECK_FALSE(s.remote_process_cpu_percent.has_value());
}

TEST_CASE("mtperf's own CPU is bounded by the CPUs in its affinity mask", "[summary]") {
  control::TestOutcome o = rr_outcome({100}, 2.0, 1000);
  o.client.cpu = cpu(10, 8);
  o.client.process.allowed_cpus = 1;  // taskset -c 0 on an 8-CPU host
  o.client.process.user_s = 2.01;     // 100.5%: read a moment apart from the window's edges
  o.server->cpu = cpu(10, 8);
  o.server->process.allowed_cpus = 2;
  o.server->process.user_s = 6;  // 300% with two CPUs allowed: impossible
  Summary s = summarize(spec_of(Workload::rr), o);
  REQUIRE(s.local_process_cpu_percent);
  CHECK(*s.local_process_cpu_percent == Approx(100));
  CHECK_FALSE(s.remote_process_cpu_percent.has_value());
  CHECK_FALSE(s.one_process);
}

TEST_CASE("an in-process server's CPU is the client's process, counted once", "[summary]") {
  control::TestOutcome o = rr_outcome({100}, 2.0, 1000);
  o.client.cpu = cpu(10, 4);
  o.server->cpu = cpu(10, 4);
  // getrusage(RUSAGE_SELF) on both sides of one process: the same CPU time, read twice.
  o.client.process = ProcessCpu{.user_s = 1.0, .sys_s = 0.5, .instance = 42};
  o.server->process = ProcessCpu{.user_s = 1.0, .sys_s = 0.5, .instance = 42};
  Summary s = summarize(spec_of(Workload::rr), o);
  CHECK(s.one_process);
  REQUIRE(s.local_process_cpu_percent);
  CHECK(*s.local_process_cpu_percent == Approx(75));
  CHECK_FALSE(s.remote_process_cpu_percent.has_value());
  Report r;
  r.spec = spec_of(Workload::rr);
  r.iterations = {s};
  r.summary = s;
  const nlohmann::json j = report_json(r).at("summary");
  CHECK(j.at("one_process") == true);
  CHECK(j.at("remote_process_cpu_percent").is_null());
  CHECK_THAT(report_text(r), Catch::Contains("local+remote (one process) 75.0% of one CPU"));

  // Two processes (a server with -H, or an unknown id from an older peer): both figures.
  o.server->process.instance = 7;
  Summary two = summarize(spec_of(Workload::rr), o);
  CHECK_FALSE(two.one_process);
  CHECK(two.remote_process_cpu_percent.has_value());
  o.client.process.instance = 0;
  o.server->process.instance = 0;
  CHECK_FALSE(summarize(spec_of(Workload::rr), o).one_process);
}
