#pragma once
// test::MemoryRun: both sides of a test over test::MemoryEngine (memory_engine.hpp), for unit
// tests of the workload. Each side's flows are dealt to its worker threads as the runner deals
// them (worker_count/worker_of), and each thread runs Worker<MemoryEngine> over its own engine,
// as Transport::run_worker does. There is no Runner and no clock thread: the test drives the
// one PhaseClock both sides share (warm-up -> measure -> done), so it knows exactly when each
// phase began and ended.
//
// A side may be left unstarted: the test then plays that side itself, through a MemoryEngine
// of its own over the side's endpoints (slot(side, i).endpoint), to close or half-close a
// connection where it chooses.
//
// Thread safety: every call from the test's thread. Counters may be read while the workers run
// (they are atomics); a flow's FlowStats only once its side has been joined.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/memory_engine.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/job.hpp"
#include "workloads/worker.hpp"

namespace mtperf::test {

inline void sleep_s(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

class MemoryRun {
 public:
  // How long a worker may run before it gives up on its own (PhaseClock::hard_deadline_ns): a
  // test that hangs fails with the worker's "deadline" error instead of hitting ctest's timeout.
  static constexpr double kDeadlineS = 60;

  explicit MemoryRun(const TestSpec& spec, uint32_t pipe_bytes = MemoryNetwork::kDefaultPipeBytes)
      : spec_(spec),
        net_(links_for(spec), spec.workload == Workload::crr ? spec.flows_total() : 0, pipe_bytes) {
    const uint32_t n = spec_.flows_total();
    for (Side side : {Side::client, Side::server}) {
      Half& h = half(side);
      h.jobs.resize(worker_count(spec_, n));
      for (uint32_t w = 0; w < h.jobs.size(); ++w) {
        h.jobs[w].index = w;
        h.jobs[w].spec = &spec_;
        h.jobs[w].clock = &clock_;
      }
    }
    for (uint32_t i = 0; i < n; ++i) {
      auto ends = spec_.workload == Workload::crr ? net_.listener_pair() : net_.connect_pair();
      for (Side side : {Side::client, Side::server}) {
        auto s = std::make_unique<FlowSlot>();
        s->id = i;
        s->role = role_of(spec_, i, side);
        s->proto = spec_.proto;
        s->endpoint = std::move(ends[side == Side::client ? 0 : 1]);
        WorkerJob& job = half(side).jobs[worker_of(spec_, n, i)];
        if (s->role == Role::crr_client) {  // as the client and the runner set them up
          s->conn_rate = spec_.conn_rate / spec_.flows;
          if (!job.connect_latency) job.connect_latency.emplace();
        }
        job.flows.push_back(s.get());
        half(side).flows.push_back(std::move(s));
      }
    }
  }
  ~MemoryRun() {
    clock_.abort.store(true);
    for (Half& h : halves_)
      for (std::thread& t : h.threads)
        if (t.joinable()) t.join();
  }
  MemoryRun(const MemoryRun&) = delete;
  MemoryRun& operator=(const MemoryRun&) = delete;

  // Starts the worker threads of one side (the clock starts with the first).
  void start(Side side) {
    if (clock_.start_ns == 0) {
      clock_.start_ns = now_ns();
      clock_.hard_deadline_ns = clock_.start_ns + int64_t(kDeadlineS * 1e9);
    }
    Half& h = half(side);
    h.running.store(int(h.jobs.size()));
    for (WorkerJob& job : h.jobs)
      h.threads.emplace_back([this, &job, &h] {
        run_worker(job);
        h.running.fetch_sub(1);
      });
  }
  void start() {
    start(Side::server);
    start(Side::client);
  }
  // Waits until every flow of the started sides has moved a byte (its worker is set up and
  // running), at most timeout_s; false when some flow has not.
  bool wait_for_progress(double timeout_s = 20) {
    return wait_until(timeout_s, [&] {
      for (Half& h : halves_) {
        if (h.threads.empty()) continue;
        for (auto& f : h.flows)
          if (f->counters.bytes_sent.load() + f->counters.bytes_recv.load() == 0) return false;
      }
      return true;
    });
  }
  // Waits until every worker of the side has returned, at most timeout_s; false when one runs on.
  bool wait_ended(Side side, double timeout_s = 20) {
    return wait_until(timeout_s, [&] { return half(side).running.load() == 0; });
  }
  void join(Side side) {
    for (std::thread& t : half(side).threads)
      t.join();
    half(side).threads.clear();
  }
  // The end of a test, as the runner does it: the window closes, the client's flows end on
  // their own (senders half-close, rr clients once their answers are in), then the responders
  // are told they may finish (crr servers wait for that) and the server side is joined.
  void end() {
    clock_.phase.store(Phase::done);
    join(Side::client);
    clock_.finish.store(true);
    join(Side::server);
  }
  // A whole test: both sides, a warm-up until every flow moves, a measured window of
  // measure_s, the end. False when some flow never moved.
  bool run_for(double measure_s) {
    start();
    bool moving = wait_for_progress();
    clock_.phase.store(Phase::measure);
    sleep_s(measure_s);
    end();
    return moving;
  }

  PhaseClock& clock() { return clock_; }
  MemoryNetwork& network() { return net_; }
  const TestSpec& spec() const { return spec_; }
  FlowSlot& slot(Side side, uint32_t i) { return *half(side).flows.at(i); }
  WorkerJob& job(Side side, uint32_t w) { return half(side).jobs.at(w); }
  CounterValues counters(Side side, uint32_t i) {
    return CounterValues::read(slot(side, i).counters);
  }
  // The side's worker and flow errors (after join), "" when none.
  std::string errors(Side side) {
    std::string all;
    for (WorkerJob& j : half(side).jobs)
      if (!j.error.empty()) all += "worker " + std::to_string(j.index) + ": " + j.error + "\n";
    for (auto& f : half(side).flows)
      if (!f->stats.error.empty())
        all += "flow " + std::to_string(f->id) + ": " + f->stats.error + "\n";
    return all;
  }

 private:
  struct Half {
    std::vector<std::unique_ptr<FlowSlot>> flows;
    std::vector<WorkerJob> jobs;
    std::vector<std::thread> threads;
    std::atomic<int> running{0};
  };

  static uint32_t links_for(const TestSpec& spec) {
    // crr: the connection of the transaction under way and those still closing behind it.
    return spec.flows_total() * (spec.workload == Workload::crr ? 4 : 1);
  }
  Half& half(Side side) { return halves_[side == Side::client ? 0 : 1]; }
  template <class F>
  static bool wait_until(double timeout_s, F done) {
    int64_t until = now_ns() + int64_t(timeout_s * 1e9);
    while (!done()) {
      if (now_ns() > until) return false;
      sleep_s(0.001);
    }
    return true;
  }
  void run_worker(WorkerJob& job) {
    try {
      MemoryEngine engine(net_, engine_config(job, MemoryEngine::memory_caps()));
      Worker<MemoryEngine>(engine, job).run();
    } catch (const std::exception& e) {
      job.error = e.what();
      clock_.abort.store(true);
    }
  }

  TestSpec spec_;
  PhaseClock clock_;
  MemoryNetwork net_;  // before the flows: their endpoints close their ends into it
  std::array<Half, 2> halves_;
};

}  // namespace mtperf::test
