// The runner's clock thread over a scripted transport: --stop-on-error ends the window at a
// counted error, a --verify mismatch or a failed interval check; a pause in progress shows as
// the longest stall. No sockets: each flow's worker only moves its counters on a timetable.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include <catch2/catch.hpp>

#include "platform/clock.hpp"
#include "platform/interrupt.hpp"
#include "tests/support/scripted_transport.hpp"
#include "workloads/runner.hpp"

using namespace mtperf;

namespace {

// Each worker adds bytes every millisecond of the measured window, except in [stall_from,
// stall_to) s after the window began; at fault_at s it counts an error or a bad receive.
struct Script {
  double stall_from = -1, stall_to = -1;
  double fault_at = -1;
  bool verify_fault = false;
};

class ScriptedTransport : public test::NoSetupTransport {
 public:
  explicit ScriptedTransport(Script s) : s_(s) {}
  // The worker driver (bindings/workers.hpp in the product): the timetable instead of an engine.
  static void drive(Transport& t, WorkerJob& job) { static_cast<ScriptedTransport&>(t).run(job); }
  void run(WorkerJob& job) {
    int64_t window0 = 0;
    bool faulted = false;
    while (job.clock->phase.load() != Phase::done && !job.clock->abort.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (job.clock->phase.load() != Phase::measure) continue;
      int64_t now = now_ns();
      if (window0 == 0) window0 = now;
      double t = double(now - window0) / 1e9;
      for (FlowSlot* f : job.flows) {
        if (!(t >= s_.stall_from && t < s_.stall_to))
          FlowCounters::add(f->counters.bytes_sent, 1000);
        if (s_.fault_at >= 0 && t >= s_.fault_at && !faulted)
          FlowCounters::add(s_.verify_fault ? f->counters.bad_receives : f->counters.errors, 1);
      }
      faulted = faulted || (s_.fault_at >= 0 && t >= s_.fault_at);
    }
  }

 private:
  Script s_;
};

SideResult run(const Script& script, bool stop_on_error, IntervalCallback cb = {},
               double interval_s = 0) {
  TestSpec spec;
  spec.warmup_s = 0.05;
  spec.duration_s = 1.0;
  spec.interval_s = interval_s;
  spec.measure = false;
  ScriptedTransport t(script);
  std::vector<std::unique_ptr<FlowSlot>> flows;
  for (uint32_t i = 0; i < 2; ++i) {
    flows.push_back(std::make_unique<FlowSlot>());
    flows.back()->id = i;
  }
  Runner r(spec, Side::client, t, ScriptedTransport::drive, std::move(flows));
  r.set_stop_on_error(stop_on_error);
  r.set_interval_callback(std::move(cb));
  r.start();
  return r.join();
}

}  // namespace

TEST_CASE("runner: --stop-on-error ends the window at a flow's first counted error") {
  SideResult r = run({.fault_at = 0.3}, true);
  CHECK(r.stopped.cause == StopCause::error);
  CHECK(r.stopped.at_s > 0.25);
  CHECK(r.stopped.at_s < 0.6);
  CHECK(r.stopped.why.find("counted an error") != std::string::npos);
  CHECK(r.window_s < 0.7);
  CHECK_FALSE(r.interrupted);
}

TEST_CASE("runner: --stop-on-error ends the window at the first --verify mismatch") {
  SideResult r = run({.fault_at = 0.2, .verify_fault = true}, true);
  CHECK(r.stopped.cause == StopCause::verify);
  CHECK(r.window_s < 0.6);
  CHECK(to_string(r.stopped.cause) == "verify");
}

TEST_CASE("runner: without --stop-on-error an error does not end the window") {
  SideResult r = run({.fault_at = 0.2}, false);
  CHECK(r.stopped.cause == StopCause::none);
  CHECK(r.window_s > 0.95);
}

TEST_CASE("runner: a pause in progress is the longest stall, at 50 ms resolution") {
  SideResult r = run({.stall_from = 0.3, .stall_to = 0.7}, false, {}, 0.1);
  // The 0.4 s pause, less a 50 ms sample at each edge and the worker's own late look at its
  // script's clock (0.2995 s was seen under TSan on a loaded host).
  CHECK(r.longest_stall_s > 0.25);
  CHECK(r.longest_stall_s < 0.5);
  CHECK(r.longest_stall_start_s > 0.2);
  CHECK(r.longest_stall_start_s < 0.4);
  // The intervals inside the pause are at zero.
  int zero = 0;
  for (const IntervalSample& s : r.intervals)
    zero += s.sum.bytes_sent == 0;
  CHECK(zero >= 2);
  SideResult steady = run({}, false);
  CHECK(steady.longest_stall_s < 0.1);
}

TEST_CASE("runner: a failed interval check ends the window with --stop-on-error only") {
  int calls = 0;
  auto fail_third = [&](const IntervalSample&) -> std::string {
    return ++calls == 3 ? "throughput>=9G: measured 1G" : "";
  };
  SideResult r = run({}, true, fail_third, 0.1);
  CHECK(r.stopped.cause == StopCause::check);
  CHECK(r.stopped.why == "throughput>=9G: measured 1G");
  CHECK(r.intervals.size() == 3);  // the failed interval was the window's last
  CHECK(r.window_s < 0.5);
  calls = 0;
  SideResult go_on = run({}, false, fail_third, 0.1);
  CHECK(go_on.stopped.cause == StopCause::none);
  CHECK(go_on.intervals.size() == 10);
}

namespace {

// A flow's connection as a socket transport leaves it: the stats copy (dup_stats_fd) outlives
// the worker's own descriptor, which the worker closes when it ends, as an engine does.
class PairEndpoint : public Endpoint {
 public:
  explicit PairEndpoint(int fd) : fd_(fd) {}
  int dup_stats_fd() const override { return ::dup(fd_); }
  int fd_;
};

class AbortedTransport : public test::NoSetupTransport {
 public:
  static void drive(Transport&, WorkerJob& job) {
    while (!job.clock->abort.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (FlowSlot* f : job.flows)  // aborted: no half-close, only its own descriptor closed
      ::close(static_cast<PairEndpoint&>(*f->endpoint).fd_);
  }
};

}  // namespace

TEST_CASE("runner: after join an aborted side's connections are closed, so the peer sees the end") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  TestSpec spec;
  spec.warmup_s = 0;
  spec.duration_s = 30;
  spec.measure = false;
  AbortedTransport t;
  std::vector<std::unique_ptr<FlowSlot>> flows;
  flows.push_back(std::make_unique<FlowSlot>());
  flows.back()->endpoint = std::make_unique<PairEndpoint>(sv[0]);
  {
    Runner r(spec, Side::client, t, AbortedTransport::drive, std::move(flows));
    r.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    r.abort();
    r.join();
    // The runner still exists (a client waits for the server's result here): the peer must
    // nevertheless read the end of the stream now, not at the runner's destruction.
    pollfd p{sv[1], POLLIN, 0};
    REQUIRE(::poll(&p, 1, 1000) == 1);
    char c;
    CHECK(::read(sv[1], &c, 1) == 0);
  }
  ::close(sv[1]);
}

namespace {

// A TCP receiver whose peer never half-closes: it ignores `finish` and ends only on abort (or at
// the hard deadline, as a worker does).
class WaitingTransport : public test::NoSetupTransport {
 public:
  static void drive(Transport&, WorkerJob& job) {
    while (!job.clock->abort.load() && now_ns() < job.clock->hard_deadline_ns)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
};

}  // namespace

TEST_CASE("runner: a second interrupt aborts responders still waiting after the linger") {
  reset_interrupts();
  TestSpec spec;
  spec.warmup_s = 0;
  spec.duration_s = 30;
  spec.measure = false;
  WaitingTransport t;
  std::vector<std::unique_ptr<FlowSlot>> flows;
  flows.push_back(std::make_unique<FlowSlot>());
  Runner r(spec, Side::server, t, WaitingTransport::drive, std::move(flows));
  r.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  simulate_interrupt();  // the window ends; the clock sets `finish`, which the worker ignores
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int64_t t0 = now_ns();
  simulate_interrupt();  // the second: everything still running ends
  SideResult res = r.join();
  double took_s = double(now_ns() - t0) / 1e9;
  reset_interrupts();
  CHECK(res.interrupted);
  CHECK(res.window_s < 1);
  CHECK(took_s < 5);  // not the hard deadline, 47 s away
}
