#include "workloads/runner.hpp"

#include <unistd.h>

#include <algorithm>

#include "platform/affinity.hpp"
#include "platform/file_limit.hpp"
#include "platform/interrupt.hpp"
#include "platform/tcp_socket.hpp"
#include "workloads/engine_config.hpp"

namespace mtperf {

CounterValues CounterValues::read(const FlowCounters& c) {
  auto r = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  return {r(c.bytes_sent),   r(c.bytes_recv), r(c.msgs_sent),   r(c.msgs_recv),
          r(c.transactions), r(c.errors),     r(c.bad_receives)};
}

CounterValues CounterValues::operator-(const CounterValues& o) const {
  return {bytes_sent - o.bytes_sent,    bytes_recv - o.bytes_recv,     msgs_sent - o.msgs_sent,
          msgs_recv - o.msgs_recv,      transactions - o.transactions, errors - o.errors,
          bad_receives - o.bad_receives};
}

std::string_view to_string(StopCause c) {
  switch (c) {
    case StopCause::none:
      return "none";
    case StopCause::error:
      return "error";
    case StopCause::verify:
      return "verify";
    case StopCause::check:
      return "check";
  }
  return "none";
}

namespace {

CounterValues sum_of(const std::vector<CounterValues>& v) {
  CounterValues s;
  for (auto& c : v) {
    s.bytes_sent += c.bytes_sent;
    s.bytes_recv += c.bytes_recv;
    s.msgs_sent += c.msgs_sent;
    s.msgs_recv += c.msgs_recv;
    s.transactions += c.transactions;
    s.errors += c.errors;
    s.bad_receives += c.bad_receives;
  }
  return s;
}

template <class T, class F>
std::optional<T> try_read(F f) {
  try {
    return f();
  } catch (const std::exception&) {
    return std::nullopt;  // no /proc here: the figures are reported as absent, not as zero
  }
}

}  // namespace

Runner::Runner(const TestSpec& spec, Side side, Transport& transport, WorkerDriver drive,
               std::vector<std::unique_ptr<FlowSlot>> flows, std::vector<int> cpus)
    : spec_(spec), side_(side), transport_(transport), drive_(drive), flows_(std::move(flows)) {
  uint32_t nthreads = worker_count(spec_, uint32_t(flows_.size()));
  jobs_.resize(nthreads);
  for (uint32_t i = 0; i < nthreads; ++i) {
    jobs_[i].index = i;
    jobs_[i].spec = &spec_;
    jobs_[i].clock = &clock_;
    jobs_[i].cpu = cpus.empty() ? -1 : cpus[i % cpus.size()];
    jobs_[i].flow_buffers = buffers_per_flow(spec_, transport_.caps());
  }
  // TCP_INFO and the unsent bytes are read from a copy of each connection's descriptor, which
  // outlives the engine's; where the file limit has no room for a copy a flow, they are not read
  // (the flows' retransmits, RTT and cwnd show as not measured).
  const bool copies = make_room_for_files(flows_.size());
  for (size_t i = 0; i < flows_.size(); ++i) {
    if (spec_.per_flow_latency && !flows_[i]->stats.latency) flows_[i]->stats.latency.emplace();
    WorkerJob& job = jobs_[i % nthreads];
    job.flows.push_back(flows_[i].get());
    if (flows_[i]->role == Role::crr_client && !job.connect_latency) job.connect_latency.emplace();
    dup_fds_.push_back(copies && flows_[i]->endpoint ? flows_[i]->endpoint->dup_stats_fd() : -1);
  }
}

Runner::~Runner() {
  abort();
  if (clock_thread_.joinable()) clock_thread_.join();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  for (int fd : dup_fds_) {
    if (fd >= 0) ::close(fd);
  }
}

void Runner::abort() {
  clock_.abort.store(true);
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

void Runner::start() {
  started_realtime_ns_ = realtime_ns();
  clock_.start_ns = now_ns();
  double total_s = spec_.warmup_s + spec_.duration_s + kLingerS + 15.0;
  clock_.hard_deadline_ns = clock_.start_ns + int64_t(total_s * 1e9);
  workers_left_ = jobs_.size();
  for (size_t i = 0; i < jobs_.size(); ++i)
    workers_.emplace_back([this, i] { worker_main(i); });
  clock_thread_ = std::thread([this] { clock_main(); });
}

void Runner::worker_main(size_t i) {
  WorkerJob& job = jobs_[i];
  try {
    if (job.cpu >= 0) pin_current_thread(job.cpu);
    drive_(transport_, job);
  } catch (const std::exception& e) {
    job.error = e.what();
    clock_.abort.store(true);
  }
  std::lock_guard lock(mu_);
  --workers_left_;
  cv_.notify_all();
}

bool Runner::sleep_until(int64_t t_ns) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (clock_.abort.load() || workers_left_ == 0) return false;
    // A signal cannot wake the condition variable: look at the interrupt count every 50 ms.
    if (int n = interrupts(); n > 0) {
      interrupted_ = true;  // the first ends the window now; a second one aborts
      if (n > 1) clock_.abort.store(true);
      return false;
    }
    int64_t now = now_ns();
    // The same 50 ms wake-ups sample progress (stalls) and, with --stop-on-error, failures.
    if (clock_.phase.load() == Phase::measure) watch_progress(now);
    if (stopping() || (stop_on_error_ && failure_seen())) return false;
    int64_t left = t_ns - now;
    if (left <= 0) return true;
    cv_.wait_for(lock, std::chrono::nanoseconds(std::min<int64_t>(left, 50'000'000)));
  }
}

void Runner::stop_early(EarlyStop why) {
  std::lock_guard lock(mu_);
  if (stop_.cause != StopCause::none || clock_.phase.load() == Phase::done) return;
  stop_ = std::move(why);
  cv_.notify_all();
}

bool Runner::stopping() const {
  if (stop_.cause == StopCause::none) return false;
  // After the window the client cuts the linger short, as on SIGINT; the server lingers on, its
  // flows reading until the client's close theirs (closing first would reset the client's
  // sends before it has heard the STOP).
  return side_ == Side::client || clock_.phase.load() != Phase::done;
}

bool Runner::failure_seen() {
  if (clock_.phase.load() == Phase::done) return false;  // the window is over: nothing to stop
  for (auto& f : flows_) {
    bool error = f->counters.errors.load(std::memory_order_relaxed) > 0;
    bool bad = f->counters.bad_receives.load(std::memory_order_relaxed) > 0;
    if (!error && !bad) continue;
    int64_t from =
        window_start_ns_ ? window_start_ns_ : clock_.start_ns + int64_t(spec_.warmup_s * 1e9);
    stop_.cause = error ? StopCause::error : StopCause::verify;
    stop_.at_s = double(now_ns() - from) / 1e9;
    stop_.why = "flow " + std::to_string(f->id) +
                (error ? " counted an error" : " received a byte that failed --verify");
    return true;
  }
  return false;
}

void Runner::watch_progress(int64_t now) {
  uint64_t p = 0;
  for (auto& f : flows_) {
    const FlowCounters& c = f->counters;
    p += c.bytes_sent.load(std::memory_order_relaxed) +
         c.bytes_recv.load(std::memory_order_relaxed) +
         c.transactions.load(std::memory_order_relaxed);
  }
  if (p != progress_ || progress_ns_ == 0) {
    progress_ = p;
    progress_ns_ = now;
  } else if (now - progress_ns_ > longest_stall_ns_) {
    longest_stall_ns_ = now - progress_ns_;
    longest_stall_from_ns_ = progress_ns_;
  }
}

std::vector<CounterValues> Runner::snapshot() const {
  std::vector<CounterValues> v;
  v.reserve(flows_.size());
  for (auto& f : flows_)
    v.push_back(CounterValues::read(f->counters));
  return v;
}

CounterValues Runner::totals() const {
  return sum_of(snapshot());
}

std::vector<std::pair<int64_t, int64_t>> Runner::queued() const {
  std::vector<std::pair<int64_t, int64_t>> v;
  if (!spec_.measure) return v;
  for (int fd : dup_fds_)
    v.emplace_back(unsent_bytes(fd), unread_bytes(fd));
  return v;
}

void Runner::read_edge(Edge& e) const {
  e.cpu = try_read<CpuSnapshot>([] { return read_cpu_snapshot(); });
  e.irq = try_read<InterruptSnapshot>([] { return read_interrupt_snapshot(); });
  e.proc = try_read<ProcessCpu>([] { return read_process_cpu(); }).value_or(ProcessCpu{});
  e.rdma = read_rdma_counters();  // one listing when the host has no RDMA device
  e.net = read_net_witness(netdevs_);
}

// One interval's sample, from the counters at its two ends; a failed check of it stops the test
// (--stop-on-error).
void Runner::record_interval(const std::vector<CounterValues>& prev, int64_t prev_t,
                             const std::vector<CounterValues>& cur, int64_t now) {
  std::vector<CounterValues> diff(cur.size());
  for (size_t i = 0; i < cur.size(); ++i)
    diff[i] = cur[i] - prev[i];
  IntervalSample s{(prev_t - window_start_ns_) / 1e9, (now - window_start_ns_) / 1e9, sum_of(diff)};
  intervals_.push_back(s);
  std::string failed = on_interval_ ? on_interval_(s) : std::string();
  std::lock_guard lock(mu_);
  if (!failed.empty() && stop_on_error_ && stop_.cause == StopCause::none)
    stop_ = {StopCause::check, s.end_s, std::move(failed)};
}

bool Runner::sample_intervals(int64_t end, std::vector<CounterValues>& prev, int64_t& prev_t) {
  bool ok = true;
  int64_t step = int64_t(spec_.interval_s * 1e9);
  // A remainder under a tenth of a step joins the last interval rather than standing alone.
  for (int64_t t = window_start_ns_ + step; t < end - step / 10 && ok; t += step) {
    ok = sleep_until(t);
    if (!ok) break;  // the window ends now: the interval ends with it, in clock_main
    auto cur = snapshot();
    int64_t now = now_ns();
    record_interval(prev, prev_t, cur, now);
    prev = std::move(cur);
    prev_t = now;
    ok = stopped().cause == StopCause::none;  // a failed interval check ends the window here
  }
  return ok;
}

void Runner::clock_main() {
  bool ok = sleep_until(clock_.start_ns + int64_t(spec_.warmup_s * 1e9));
  if (spec_.measure) read_edge(edge0_);
  // The queues before the counters at the start, after them at the end: a send or a read
  // that completes between the two readings then makes the window's carried bytes smaller,
  // never larger, so the devices' witness stays a lower bound.
  queued0_ = queued();
  at_start_ = snapshot();
  window_start_ns_ = now_ns();
  clock_.phase.store(Phase::measure);
  int64_t end = window_start_ns_ + int64_t(spec_.duration_s * 1e9);
  const bool intervals = ok && spec_.interval_s > 0;
  auto prev = at_start_;
  int64_t prev_t = window_start_ns_;
  if (intervals) ok = sample_intervals(end, prev, prev_t);
  if (ok) sleep_until(end);
  clock_.window_closed.store(true);
  at_end_ = snapshot();
  queued1_ = queued();
  window_end_ns_ = now_ns();
  watch_progress(window_end_ns_);  // a stall that lasts to the end counts to the end
  // The last interval, full or partial, ends with the window (also one cut short by Ctrl-C);
  // not after a failed interval check, whose interval was the window's last.
  const EarlyStop stop = stopped();
  if (intervals && window_end_ns_ > prev_t && stop.cause != StopCause::check)
    record_interval(prev, prev_t, at_end_, window_end_ns_);
  if (on_stop_ && (stop.cause == StopCause::error || stop.cause == StopCause::verify))
    on_stop_(stop);
  if (spec_.measure) read_edge(edge1_);
  clock_.phase.store(Phase::done);
  sleep_until(window_end_ns_ + int64_t(kLingerS * 1e9));
  clock_.finish.store(true);
  watch_to_end();
}

void Runner::watch_to_end() {
  // A responder may still wait for its peer's end of stream (TCP receivers end only there): a
  // second SIGINT/SIGTERM arriving now still aborts it, whenever the first one came.
  std::unique_lock lock(mu_);
  while (!clock_.abort.load() && workers_left_ > 0) {
    if (interrupts() > 1) {
      interrupted_ = true;
      clock_.abort.store(true);
      return;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

FlowResult Runner::flow_result(size_t i) {
  FlowSlot& f = *flows_[i];
  FlowResult fr;
  fr.id = f.id;
  fr.role = f.role;
  fr.total = CounterValues::read(f.counters);
  if (i < at_start_.size() && i < at_end_.size()) fr.window = at_end_[i] - at_start_[i];
  fr.stats = std::move(f.stats);
  fr.cpu = jobs_[i % jobs_.size()].cpu;  // flows are dealt to workers round-robin
  if (i < queued0_.size() && i < queued1_.size()) {
    const auto [unsent0, unread0] = queued0_[i];
    const auto [unsent1, unread1] = queued1_[i];
    if (unsent0 >= 0 && unsent1 >= 0) fr.unsent_change = unsent1 - unsent0;
    if (unread0 >= 0 && unread1 >= 0) fr.unread_change = unread1 - unread0;
  }
  if (dup_fds_[i] >= 0 && spec_.measure) {
    auto t = tcp_stats(dup_fds_[i]);
    fr.stats.tcp_info_valid = t.valid;
    fr.stats.tcp_retransmits = t.retransmits;
    fr.stats.tcp_rtt_us = t.rtt_us;
    fr.stats.tcp_cwnd = t.snd_cwnd;
    fr.stats.congestion = congestion_of(dup_fds_[i]);
  }
  UdpStats& u = fr.stats.udp;
  if (f.proto == Proto::udp && f.role == Role::receiver && u.any) {
    u.lost = u.missing();
  }
  return fr;
}

void Runner::add_workers(SideResult& r) const {
  for (size_t j = 0; j < jobs_.size(); ++j) {
    r.latency.merge(jobs_[j].latency);
    if (jobs_[j].connect_latency) {
      if (!r.connect_latency) r.connect_latency.emplace();
      r.connect_latency->merge(*jobs_[j].connect_latency);
    }
    if (!jobs_[j].error.empty())
      r.errors.push_back("worker " + std::to_string(j) + ": " + jobs_[j].error);
  }
  for (auto& fr : r.flows) {
    if (!fr.stats.error.empty())
      r.errors.push_back("flow " + std::to_string(fr.id) + ": " + fr.stats.error);
  }
}

void Runner::add_host(SideResult& r) const {
  if (edge0_.cpu && edge1_.cpu) r.cpu = cpu_utilization(*edge0_.cpu, *edge1_.cpu);
  if (edge0_.irq && edge1_.irq && r.window_s > 0) {
    r.interrupts =
        try_read<InterruptRates>([&] { return rates(*edge0_.irq, *edge1_.irq, r.window_s); });
    if (r.interrupts) add_adapter_rates(*r.interrupts, adapters_);
  }
  r.process = process_cpu_delta(edge0_.proc, edge1_.proc);
  r.rdma_ports = rdma_counter_deltas(edge0_.rdma, edge1_.rdma);
  if (spec_.measure) r.netdev = net_witness_delta(edge0_.net, edge1_.net);
}

SideResult Runner::join() {
  for (auto& t : workers_)
    t.join();
  workers_.clear();
  {
    std::lock_guard lock(mu_);
    cv_.notify_all();
  }
  if (clock_thread_.joinable()) clock_thread_.join();
  SideResult r;
  r.side = side_;
  r.one_sided = transport_.caps().one_sided;
  r.started_realtime_ns = started_realtime_ns_;
  r.window_s = std::max<double>(0, double(window_end_ns_ - window_start_ns_) / 1e9);
  r.interrupted = interrupted_;
  {
    std::lock_guard lock(mu_);
    r.stopped = stop_;
  }
  r.longest_stall_s = double(longest_stall_ns_) / 1e9;
  if (longest_stall_ns_ > 0)
    r.longest_stall_start_s = double(longest_stall_from_ns_ - window_start_ns_) / 1e9;
  r.intervals = intervals_;
  for (size_t i = 0; i < flows_.size(); ++i)
    r.flows.push_back(flow_result(i));
  // The copies kept for TCP_INFO were the connections' last descriptors: close them now, so
  // the peer sees the end at once even when this side aborted without half-closing (a second
  // Ctrl-C), rather than when this runner is destroyed, after the peer's result it then waits
  // for.
  for (int& fd : dup_fds_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  add_workers(r);
  add_host(r);
  return r;
}

}  // namespace mtperf
