#pragma once
// Runs one side of a test: worker threads over the transport, one clock thread that drives the
// phases (warm-up -> measured window -> done) and reads every flow's counters, CPU, interrupt
// and RDMA port counters at the edges of the measured window (and at interval boundaries).
//
// Thread safety: start() and join() from one thread; clock() may be used from any thread
// (its fields are atomics) — the control session sets finish/abort through it.
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "platform/cpu_stat.hpp"
#include "platform/interrupts.hpp"
#include "platform/netdev_stats.hpp"
#include "platform/rdma_devices.hpp"
#include "platform/rusage.hpp"
#include "transports/api/registry.hpp"
#include "workloads/job.hpp"

namespace mtperf {

struct FlowResult {
  uint32_t id = 0;
  Role role = Role::sender;
  CounterValues total;   // the whole test, warm-up included
  CounterValues window;  // the measured window
  FlowStats stats;
  int cpu = -1;  // the worker's CPU, -1 when not pinned
  // TCP: bytes written but not yet handed to the device (SIOCOUTQNSD), at the window's end minus
  // at its start: window.bytes_sent - this is what the device had to carry. 0 when unknown.
  int64_t unsent_change = 0;
  // TCP: bytes arrived but not yet read (SIOCINQ), at the window's end minus at its start:
  // window.bytes_recv + this is what came in over the device in the window. 0 when unknown.
  int64_t unread_change = 0;
};

// Why the measured window ended before its length under --stop-on-error (Runner::
// set_stop_on_error); `none` when it ran its length (or SIGINT ended it: SideResult::interrupted).
enum class StopCause : uint8_t { none, error, verify, check };
std::string_view to_string(StopCause c);

struct EarlyStop {
  StopCause cause = StopCause::none;
  double at_s = 0;  // since the start of the measured window (negative: in the warm-up)
  std::string why;  // "flow 2 counted an error", "throughput>=9G: measured 1.2G in [2.00-3.00 s]"
};

// Sums over all flows for one interim interval.
struct IntervalSample {
  double start_s = 0, end_s = 0;  // since the start of the measured window
  CounterValues sum;
};

struct SideResult {
  Side side = Side::client;
  double window_s = 0;  // measured, not nominal
  std::vector<FlowResult> flows;
  // Every round trip of this side's flows, merged from its workers' histograms, ns.
  Histogram latency;
  // crr clients: every connect's time in the window, ns; absent on other sides and workloads.
  std::optional<Histogram> connect_latency;
  std::vector<IntervalSample> intervals;
  std::optional<CpuUtilization> cpu;         // host CPU over the window
  std::optional<InterruptRates> interrupts;  // host interrupts over the window
  ProcessCpu process;                        // mtperf's own CPU over the window
  // Every RDMA port's counter deltas over the window (counters/ and hw_counters/), the device's
  // witness beside the application's bytes; empty on a host without RDMA devices.
  std::vector<RdmaPortCounters> rdma_ports;
  // The counter deltas over the window of the network devices this side's flows used
  // (Runner::set_netdevs) and the host's TCP counters: the devices' witness beside the
  // application's bytes. Empty devices when none were named.
  NetWitness netdev;
  std::vector<std::string> errors;
  EarlyStop stopped;  // --stop-on-error: what ended the window early, if anything did
  // The longest time in the window with no progress at all on this side (no byte sent or
  // received, no transaction), sampled by the clock thread every 50 ms or sooner, and where it
  // began (s since the window's start): a link that went down shows here.
  double longest_stall_s = 0, longest_stall_start_s = 0;
  // SIGINT/SIGTERM ended the measured window early (platform/interrupt.hpp): the figures are
  // what was measured until then.
  bool interrupted = false;
  // The transport's receivers count nothing of a stream (Caps::one_sided, RDMA WRITE): the
  // report takes the stream's bytes from its sender.
  bool one_sided = false;
  // When this side's workers started, every flow connected (CLOCK_REALTIME, ns): when its data
  // began. Read by the fleet to time pairs' starts across hosts; not sent to the peer.
  int64_t started_realtime_ns = 0;
};

// Called by the clock thread at each interval boundary (interim reports), and once more at the
// window's end for the last, possibly shorter, interval. May be empty. It returns what failed
// in the interval (an interim check), empty when nothing did; with set_stop_on_error(true) a
// failure ends the window at once (StopCause::check), as SIGINT does. It must not block long:
// the clock thread waits for it.
using IntervalCallback = std::function<std::string(const IntervalSample&)>;

class Runner {
 public:
  // `drive` runs each worker over the transport's engine (bindings/workers.hpp); `cpus`: the
  // CPU of each worker (cycled), empty for no pinning.
  Runner(const TestSpec& spec, Side side, Transport& transport, WorkerDriver drive,
         std::vector<std::unique_ptr<FlowSlot>> flows, std::vector<int> cpus = {});
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  void set_interval_callback(IntervalCallback cb) { on_interval_ = std::move(cb); }
  // The network devices whose counters are read at the window's edges; before start().
  void set_netdevs(std::vector<std::string> devices) { netdevs_ = std::move(devices); }
  // The host's adapters and their IRQ numbers (platform/topology.hpp: adapter_irqs), whose
  // interrupt rates the result shows apart; before start().
  void set_adapters(std::vector<std::pair<std::string, std::vector<int>>> adapters) {
    adapters_ = std::move(adapters);
  }
  // --stop-on-error: the clock thread ends the window at the first error a flow counts, the
  // first --verify mismatch, or the first failed interval check; before start().
  void set_stop_on_error(bool on) { stop_on_error_ = on; }
  // Called by the clock thread once the window has ended at its own flows' error or --verify
  // mismatch (not at a check or stop_early): the server tells its client. Before start().
  void set_stop_callback(std::function<void(const EarlyStop&)> cb) { on_stop_ = std::move(cb); }
  // Ends the window now, as --stop-on-error does, for a failure seen elsewhere (the server's
  // STOP); from any thread; ignored once the window has ended or something else stopped it.
  void stop_early(EarlyStop why);
  void start();
  // Waits for the workers and the clock; when it returns no descriptor of a flow is open here.
  SideResult join();
  PhaseClock& clock() { return clock_; }
  void abort();  // from any thread
  // The counts of every flow so far, summed (warm-up included); from any thread while the runner
  // exists. Each flow's figures are read as its worker last wrote them.
  CounterValues totals() const;

  // How long after the measured window the responders keep going before finishing on their own.
  static constexpr double kLingerS = 2.0;

 private:
  void clock_main();
  // clock_main's intervals: each but the window's last, sampled (false: the window ended early).
  bool sample_intervals(int64_t end, std::vector<CounterValues>& prev, int64_t& prev_t);
  void record_interval(const std::vector<CounterValues>& prev, int64_t prev_t,
                       const std::vector<CounterValues>& cur, int64_t now);
  // join's parts: a flow's result (its stats moved out of the slot), the workers' latency and
  // errors, the host's figures over the window.
  FlowResult flow_result(size_t i);
  void add_workers(SideResult& r) const;
  void add_host(SideResult& r) const;
  void worker_main(size_t i);
  bool sleep_until(int64_t t_ns);  // false when aborted or all workers are gone
  void watch_to_end();             // after the linger, until the workers end
  std::vector<CounterValues> snapshot() const;
  bool stopping() const;  // under mu_: stop_ ends the wait
  bool failure_seen();
  EarlyStop stopped() {
    std::lock_guard lock(mu_);
    return stop_;
  }  // --stop-on-error: fills stop_ at the first error or verify mismatch
  void watch_progress(int64_t now);
  // Per flow, its TCP socket's unsent_bytes() and unread_bytes() (-1: unknown).
  std::vector<std::pair<int64_t, int64_t>> queued() const;

  TestSpec spec_;
  Side side_;
  Transport& transport_;
  WorkerDriver drive_;
  std::vector<std::unique_ptr<FlowSlot>> flows_;
  // Kept to read TCP_INFO after the workers close theirs; join() closes them.
  std::vector<int> dup_fds_;
  std::vector<WorkerJob> jobs_;
  std::vector<std::thread> workers_;
  std::thread clock_thread_;
  PhaseClock clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t workers_left_ = 0;
  IntervalCallback on_interval_;

  // Filled by the clock thread, read after join.
  std::vector<CounterValues> at_start_, at_end_;
  std::vector<std::pair<int64_t, int64_t>> queued0_, queued1_;  // per flow, at the window's edges
  std::vector<IntervalSample> intervals_;
  int64_t window_start_ns_ = 0, window_end_ns_ = 0;
  int64_t started_realtime_ns_ = 0;
  bool interrupted_ = false;  // written by the clock thread, read after join
  bool stop_on_error_ = false;
  EarlyStop stop_;  // under mu_: the clock thread and stop_early write it
  std::function<void(const EarlyStop&)> on_stop_;
  // Progress (bytes and transactions of every flow) as the clock thread last saw it changing.
  uint64_t progress_ = 0;
  int64_t progress_ns_ = 0, longest_stall_ns_ = 0, longest_stall_from_ns_ = 0;
  // What the clock thread reads of the host at each edge of the window.
  struct Edge {
    std::optional<CpuSnapshot> cpu;
    std::optional<InterruptSnapshot> irq;
    ProcessCpu proc;
    std::vector<RdmaPortCounters> rdma;
    NetWitness net;
  };
  void read_edge(Edge& e) const;
  Edge edge0_, edge1_;
  std::vector<std::string> netdevs_;
  std::vector<std::pair<std::string, std::vector<int>>> adapters_;
};

}  // namespace mtperf
