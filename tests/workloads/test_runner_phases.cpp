// The runner's phases over a scripted transport: warm-up, the measured window, done, in that
// order and never back; the window's counters are what moved while the workers saw the measured
// phase, and nothing of the warm-up; every flow of every worker gets its figures, on the CPU it
// was pinned to. No sockets: each worker only moves its flows' counters, by phase.
#include <algorithm>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/scripted_transport.hpp"
#include "workloads/runner.hpp"

using namespace mtperf;

namespace {

// What one worker saw: the phases in the order it saw them change, and when.
struct Seen {
  std::vector<Phase> phases;
  std::vector<int64_t> at_ns;
};

// Every millisecond each flow of the job counts a message in the warm-up and a byte in the
// measured window, until the clock says done.
class PhasedTransport : public test::NoSetupTransport {
 public:
  explicit PhasedTransport(size_t workers) : seen_(workers) {}
  static void drive(Transport& t, WorkerJob& job) { static_cast<PhasedTransport&>(t).run(job); }
  void run(WorkerJob& job) {
    Seen& seen = seen_[job.index];
    for (;;) {
      const Phase p = job.clock->phase.load();
      if (seen.phases.empty() || seen.phases.back() != p) {
        seen.phases.push_back(p);
        seen.at_ns.push_back(now_ns());
      }
      if (p == Phase::done || job.clock->abort.load()) return;
      for (FlowSlot* f : job.flows)
        FlowCounters::add(p == Phase::warmup ? f->counters.msgs_sent : f->counters.bytes_sent, 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  const std::vector<Seen>& seen() const { return seen_; }

 private:
  std::vector<Seen> seen_;
};

}  // namespace

TEST_CASE("runner: warm-up, window, done; the window counts only what the window saw") {
  TestSpec spec;
  spec.warmup_s = 0.2;
  spec.duration_s = 0.4;
  spec.flows = 4;
  spec.threads = 2;
  spec.measure = false;
  std::vector<std::unique_ptr<FlowSlot>> flows;
  for (uint32_t i = 0; i < 4; ++i) {
    flows.push_back(std::make_unique<FlowSlot>());
    flows.back()->id = i;
  }
  PhasedTransport t(2);
  Runner r(spec, Side::client, t, PhasedTransport::drive, std::move(flows), {0});
  r.start();
  SideResult res = r.join();

  CHECK(res.window_s > 0.39);
  CHECK(res.window_s < 0.8);
  CHECK(res.errors.empty());
  for (const Seen& s : t.seen()) {
    REQUIRE(s.phases.size() == 3);
    CHECK(s.phases[0] == Phase::warmup);
    CHECK(s.phases[1] == Phase::measure);
    CHECK(s.phases[2] == Phase::done);
    // What a worker saw of the window is the window, give or take its 1 ms turn and the
    // wake-ups of a loaded host (the sanitizer stages run tests side by side).
    const double seen_s = double(s.at_ns[2] - s.at_ns[1]) / 1e9;
    CHECK(seen_s > res.window_s - 0.15);
    CHECK(seen_s < res.window_s + 0.15);
  }
  REQUIRE(res.flows.size() == 4);
  for (const FlowResult& f : res.flows) {
    CAPTURE(f.id);
    CHECK(f.cpu == 0);
    // The warm-up's messages are in the total, not in the window (one may slip in: a worker
    // that read "warm-up" just before the window opened).
    CHECK(f.total.msgs_sent > 20);
    CHECK(f.window.msgs_sent <= 1);
    // The window's bytes are the measured phase's: all of them but the ones counted between
    // the window's last reading and the clock saying done (microseconds apart, unless the
    // clock thread is preempted there: at most a few turns of 1 ms).
    CHECK(f.window.bytes_sent > 50);
    CHECK(f.window.bytes_sent <= f.total.bytes_sent);
    CHECK(f.total.bytes_sent - f.window.bytes_sent <= 25);
  }
}
