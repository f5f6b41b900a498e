#include "report/summary.hpp"
#include <algorithm>

#include "stats/fairness.hpp"
#include "stats/service_demand.hpp"
#include "workloads/kind.hpp"

namespace mtperf {
namespace {

std::string direction_of(Role client_role) {
  switch (client_role) {
    case Role::sender:
      return "c2s";
    case Role::receiver:
      return "s2c";
    case Role::rr_client:
      return "rr";
    case Role::crr_client:
      return "crr";
    default:
      return "?";
  }
}

const FlowResult* find_flow(const std::optional<SideResult>& side, uint32_t id) {
  if (!side) return nullptr;
  for (auto& f : side->flows) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

FlowTotals totals_of(const FlowResult& r) {
  return {r.total.bytes_sent, r.total.bytes_recv, r.total.transactions};
}

// A request/response flow's transactions, latency, and bytes each way.
void transaction_figures(FlowFigures& f, const FlowResult& c, const FlowResult* s,
                         double window_s) {
  f.transactions = c.window.transactions;
  f.transaction_rate = window_s > 0 ? double(f.transactions) / window_s : 0;
  if (c.stats.latency_count > 0)
    f.latency_mean_us =
        double(static_cast<long double>(c.stats.latency_sum_ns) / c.stats.latency_count / 1e3L);
  if (c.stats.latency && c.stats.latency->count() > 0) {
    f.latency_p50_us = double(c.stats.latency->percentile(50)) / 1e3;
    f.latency_p99_us = double(c.stats.latency->percentile(99)) / 1e3;
  }
  // Requests as the server took them in (the client's sends without the server's result),
  // responses as the client took them in.
  f.bytes_c2s = s ? s->window.bytes_recv : c.window.bytes_sent;
  f.bytes_s2c = c.window.bytes_recv;
  f.bytes = f.bytes_c2s + f.bytes_s2c;
}

// A UDP stream's datagrams, from its sender's and its receiver's counts (either may be absent).
void datagram_figures(FlowFigures& f, const FlowResult* sender, const FlowResult* receiver) {
  if (sender) f.udp_sent = sender->total.msgs_sent;
  if (receiver) {
    f.udp_received = receiver->stats.udp.received;
    f.udp_lost = receiver->stats.udp.lost;
    f.udp_duplicates = receiver->stats.udp.duplicates;
    // With both ends' counts, what was sent and never arrived is the loss, including a tail
    // dropped after the highest sequence the receiver saw; a duplicate arrived twice.
    const uint64_t once = *f.udp_received - std::min(*f.udp_received, *f.udp_duplicates);
    if (f.udp_sent && *f.udp_sent >= once) f.udp_lost = std::max(*f.udp_lost, *f.udp_sent - once);
    f.udp_reordered = receiver->stats.udp.reordered;
    f.udp_jitter_us = receiver->stats.udp.jitter_ns / 1e3;
  }
}

FlowFigures flow_figures(const TestSpec& spec, const FlowResult& c, const FlowResult* s,
                         double window_s, bool one_sided) {
  FlowFigures f;
  f.id = c.id;
  f.client_total = totals_of(c);
  if (s) f.server_total = totals_of(*s);
  f.direction = direction_of(c.role);
  f.client_cpu = c.cpu;
  f.error = !c.stats.error.empty() ? c.stats.error : (s ? s->stats.error : "");
  if (c.stats.verify.enabled || (s && s->stats.verify.enabled)) {
    f.verify = c.stats.verify;
    if (s) f.verify->merge(s->stats.verify);
  }
  bool rr = c.role == Role::rr_client || c.role == Role::crr_client;
  if (rr) {
    transaction_figures(f, c, s, window_s);
  } else {
    const FlowResult* receiver = c.role == Role::receiver ? &c : s;
    f.bytes = receiver ? receiver->window.bytes_recv : c.window.bytes_sent;
    // A one-sided transfer (RDMA WRITE) leaves its receiver nothing to count: the sender's bytes.
    const FlowResult* writer = c.role == Role::sender ? &c : s;
    if (one_sided) f.bytes = writer ? writer->window.bytes_sent : 0;
    (c.role == Role::receiver ? f.bytes_s2c : f.bytes_c2s) = f.bytes;
  }
  f.throughput_bps = window_s > 0 ? double(f.bytes) * 8 / window_s : 0;
  const FlowResult* sender = c.role == Role::sender ? &c : s;
  if (sender && sender->stats.tcp_info_valid) {
    f.retransmits = sender->stats.tcp_retransmits;
    f.rtt_us = sender->stats.tcp_rtt_us;
    f.cwnd = sender->stats.tcp_cwnd;
    f.congestion = sender->stats.congestion;
  }
  if (spec.proto == Proto::udp && !rr) {
    datagram_figures(f, sender, c.role == Role::receiver ? &c : s);
  } else if (spec.proto == Proto::udp) {
    f.udp_lost = c.stats.udp.lost;
    f.udp_duplicates = c.stats.udp.duplicates;  // answers that came after they counted as lost
  }
  return f;
}

std::optional<CpuFigures> cpu_figures(const TestSpec& spec, const std::optional<SideResult>& side,
                                      const Summary& s) {
  if (!side || !side->cpu || !(side->window_s >= kMinCpuWindowS)) return std::nullopt;
  CpuFigures c;
  c.host = *side->cpu;
  bool rr = kind_of(spec.workload).headline == Headline::transactions;
  if (rr) {
    c.service_demand_unit = "us/transaction";
    c.service_demand = service_demand_us_per_unit(c.host.total.util, c.host.cpus, side->window_s,
                                                  double(s.transactions));
  } else {
    c.service_demand_unit = "us/KB";
    c.service_demand = service_demand_us_per_kb(c.host.total.util, c.host.cpus, side->window_s,
                                                s.throughput_bps * s.window_s / 8);
  }
  return c;
}

// Rusage and the window's clock are read a moment apart: a figure this much over the bound is
// that, and is shown as the bound; beyond it the figure is impossible.
constexpr double kProcessCpuSlack = 1.02;

// mtperf's own CPU over a side's window, in % of one CPU, bounded by the CPUs the process may
// use: the host's, and those of its affinity mask (--cpus, taskset, a cpuset). Absent when the
// window is too short to measure or the figure is impossible (negative, or over the bound).
std::optional<double> process_percent(const SideResult& side) {
  if (!(side.window_s >= kMinCpuWindowS)) return std::nullopt;
  double p = process_cpu_percent(side.process, side.window_s);
  int cpus = side.cpu && side.cpu->cpus > 0 ? side.cpu->cpus : 4096;
  if (side.process.allowed_cpus > 0) cpus = std::min(cpus, side.process.allowed_cpus);
  const double most = 100.0 * cpus;
  if (!(p >= 0 && p <= most * kProcessCpuSlack)) return std::nullopt;
  return std::min(p, most);
}

// The client and the server measured the same process (an in-process server): one id, known.
bool one_process(const control::TestOutcome& o) {
  return o.server && o.client.process.instance != 0 &&
         o.server->process.instance == o.client.process.instance;
}

double rate_of_irqs(const InterruptRates& r, const std::vector<int>& irqs) {
  double sum = 0;
  for (int n : irqs) {
    std::string name = std::to_string(n);
    for (const auto& irq : r.irqs)
      if (irq.numbered && irq.name == name) sum += irq.total;
  }
  return sum;
}

// Groups flows by key (adapter or controller name), in order of first appearance.
std::vector<GroupFigures> group_flows(const std::vector<FlowFigures>& flows,
                                      const std::vector<std::string>& key_of_flow) {
  std::vector<GroupFigures> groups;
  std::vector<std::vector<double>> per_flow;
  for (size_t i = 0; i < flows.size(); ++i) {
    const std::string& key = key_of_flow[i];
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const GroupFigures& g) { return g.name == key; });
    if (it == groups.end()) {
      groups.push_back({});
      groups.back().name = key;
      per_flow.emplace_back();
      it = groups.end() - 1;
    }
    size_t g = size_t(it - groups.begin());
    const FlowFigures& f = flows[i];
    it->flows.push_back(f.id);
    it->throughput_bps += f.throughput_bps;
    it->transaction_rate += f.transaction_rate;
    const WorkloadKind* k = find_kind(f.direction);
    const bool rr = k != nullptr && k->request_response;
    per_flow[g].push_back(rr ? f.transaction_rate : f.throughput_bps);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    groups[g].jain_fairness = jain_index(per_flow[g]);
    groups[g].min_max_ratio = min_max_ratio(per_flow[g]);
  }
  return groups;
}

void attribute(Summary& s, const control::TestOutcome& o, const Placement& p) {
  if (p.flows.empty()) return;
  std::vector<std::string> adapter_of, controller_of;
  for (size_t i = 0; i < s.flows.size(); ++i) {
    FlowFigures& f = s.flows[i];
    const FlowPlacement& fp = p.flows[f.id % p.flows.size()];
    f.adapter = fp.adapter;
    if (f.id < o.flow_sources.size()) f.local_address = o.flow_sources[f.id];
    if (f.id < o.flow_servers.size()) f.remote_address = o.flow_servers[f.id];
    adapter_of.push_back(fp.adapter);
    controller_of.push_back(fp.controller.empty() ? "(none)" : fp.controller);
  }
  s.adapters = group_flows(s.flows, adapter_of);
  s.controllers = group_flows(s.flows, controller_of);
  if (!o.client.interrupts) return;
  for (auto& g : s.adapters)
    for (const auto& fp : p.flows)
      if (fp.adapter == g.name) {
        // Adapters without IRQs (veth, emulated) have no rate, rather than a rate of 0.
        if (!fp.irqs.empty()) g.irq_per_s = rate_of_irqs(*o.client.interrupts, fp.irqs);
        break;
      }
}

// Payload bytes each of a side's devices carried out in the side's window. A flow's bytes go to
// the side's one device; with several, to its adapter's (placed tests: the client's devices are
// the adapters; the server's, found from the flows' server addresses in flow order, pair with
// the adapters in order of first use). Flows that cannot be attributed are left out.
std::map<std::string, AppBytes> app_bytes_by_device(const SideResult& side, const Summary& s,
                                                    bool local) {
  std::map<std::string, AppBytes> out;
  const auto& devices = side.netdev.devices;
  std::vector<std::string> adapters;  // in order of first use
  for (const auto& f : s.flows)
    if (!f.adapter.empty() &&
        std::find(adapters.begin(), adapters.end(), f.adapter) == adapters.end())
      adapters.push_back(f.adapter);
  for (const auto& f : side.flows) {
    std::string dev = devices.size() == 1 ? devices[0].device : "";
    auto ff = std::find_if(s.flows.begin(), s.flows.end(),
                           [&](const FlowFigures& x) { return x.id == f.id; });
    if (dev.empty() && ff != s.flows.end() && !ff->adapter.empty()) {
      if (local) {
        dev = ff->adapter;
      } else if (adapters.size() == devices.size()) {
        size_t k =
            size_t(std::find(adapters.begin(), adapters.end(), ff->adapter) - adapters.begin());
        dev = devices[k].device;
      }
    }
    // What the device had to carry: the window's writes, less what still waited to go at its
    // end, plus what waited at its start.
    int64_t carried = int64_t(f.window.bytes_sent) - f.unsent_change;
    if (dev.empty()) continue;
    out[dev].sent += uint64_t(std::max<int64_t>(carried, 0));
    // What came in over it: the window's reads, plus what waited to be read at its end, less
    // at its start.
    int64_t arrived = int64_t(f.window.bytes_recv) + f.unread_change;
    out[dev].received += uint64_t(std::max<int64_t>(arrived, 0));
  }
  return out;
}

}  // namespace

LatencyFigures latency_of(const Histogram& h) {
  LatencyFigures l;
  l.count = h.count();
  l.mean_us = h.mean() / 1e3;
  l.stddev_us = h.stddev() / 1e3;
  l.min_us = double(h.min()) / 1e3;
  l.p50_us = double(h.percentile(50)) / 1e3;
  l.p90_us = double(h.percentile(90)) / 1e3;
  l.p99_us = double(h.percentile(99)) / 1e3;
  l.p999_us = double(h.percentile(99.9)) / 1e3;
  l.max_us = double(h.max()) / 1e3;
  return l;
}

namespace {

// A flow's figures into the test's sums; returns its headline rate, for the fairness figures.
double add_flow(Summary& s, const FlowFigures& f) {
  s.throughput_bps += f.throughput_bps;
  if (s.window_s > 0) {
    s.throughput_c2s_bps += double(f.bytes_c2s) * 8 / s.window_s;
    s.throughput_s2c_bps += double(f.bytes_s2c) * 8 / s.window_s;
  }
  s.transactions += f.transactions;
  if (f.verify) {
    if (!s.verify) s.verify.emplace();
    s.verify->merge(*f.verify);
  }
  const WorkloadKind* k = find_kind(f.direction);
  const bool rr = k != nullptr && k->request_response;
  return rr ? f.transaction_rate : f.throughput_bps;
}

void latency_figures(Summary& s, const SideResult& client) {
  // The workers' histograms hold every flow's samples: the same percentiles as a merge of
  // per-flow histograms would give.
  s.latency_histogram.merge(client.latency);
  if (client.connect_latency && client.connect_latency->count() > 0) {
    s.connect_histogram = *client.connect_latency;
    s.connect_latency = latency_of(*s.connect_histogram);
  }
  for (const auto& f : client.flows)
    s.connect_failures += f.stats.connect_failures;
  if (s.latency_histogram.count() > 0) s.latency = latency_of(s.latency_histogram);
}

// What each side's host measured beside the flows: CPU, interrupts, RDMA ports, network devices.
void host_figures(Summary& s, const TestSpec& spec, const control::TestOutcome& o) {
  s.local_cpu = cpu_figures(spec, o.client, s);
  if (o.server) s.remote_cpu = cpu_figures(spec, o.server, s);
  s.local_interrupts = o.client.interrupts;
  if (o.server) s.remote_interrupts = o.server->interrupts;
  s.local_rdma_ports = o.client.rdma_ports;
  if (o.server) s.remote_rdma_ports = o.server->rdma_ports;
  s.local_process_cpu_percent = process_percent(o.client);
  s.one_process = one_process(o);
  if (o.server && !s.one_process) s.remote_process_cpu_percent = process_percent(*o.server);
  s.local_netdev = netdev_figures(o.client.netdev, app_bytes_by_device(o.client, s, true));
  s.local_tcp = o.client.netdev.tcp;
  if (o.server) {
    s.remote_netdev = netdev_figures(o.server->netdev, app_bytes_by_device(*o.server, s, false));
    s.remote_tcp = o.server->netdev.tcp;
  }
}

}  // namespace

Summary summarize(const TestSpec& spec, const control::TestOutcome& o, const Placement* placement) {
  Summary s;
  s.window_s = o.client.window_s;
  s.interrupted = o.client.interrupted;
  if (o.client.stopped.cause != StopCause::none) s.stopped_early = o.client.stopped;
  s.setup_s = o.setup_s;
  s.flows_asked = o.flows_asked;
  s.flows_not_connected = o.not_connected;
  s.longest_stall_s = o.client.longest_stall_s;
  s.longest_stall_start_s = o.client.longest_stall_start_s;
  std::vector<double> per_flow;
  uint64_t udp_sent = 0, udp_lost = 0;
  for (const FlowResult& c : o.client.flows) {
    FlowFigures f =
        flow_figures(spec, c, find_flow(o.server, c.id), s.window_s, o.client.one_sided);
    per_flow.push_back(add_flow(s, f));
    udp_sent += f.udp_sent.value_or(0);
    udp_lost += f.udp_lost.value_or(0);
    s.flows.push_back(std::move(f));
  }
  latency_figures(s, o.client);
  s.transaction_rate = s.window_s > 0 ? double(s.transactions) / s.window_s : 0;
  if (spec.proto == Proto::udp && !kind_of(spec.workload).request_response && udp_sent > 0) {
    s.udp_loss_percent = 100.0 * double(udp_lost) / double(udp_sent);
  }
  s.jain_fairness = jain_index(per_flow);
  s.min_max_ratio = min_max_ratio(per_flow);
  // The flows' adapters first: the devices' figures are split by them.
  if (placement) attribute(s, o, *placement);
  host_figures(s, spec, o);
  s.intervals = o.client.intervals;
  s.transport_settings = o.transport_settings;
  s.errors = o.client.errors;
  if (o.server) {
    for (auto& e : o.server->errors)
      s.errors.push_back("server " + e);
  }
  return s;
}

double headline(const TestSpec& spec, const Summary& s) {
  bool rr = kind_of(spec.workload).headline == Headline::transactions;
  return rr ? s.transaction_rate : s.throughput_bps;
}

namespace {

double mean_of(const std::vector<Summary>& it, double (*get)(const Summary&)) {
  double sum = 0;
  for (auto& s : it)
    sum += get(s);
  return it.empty() ? 0 : sum / double(it.size());
}

}  // namespace

namespace {

// The flags and extremes of every iteration: one that was interrupted, stopped early or stalled
// marks the whole.
void merge_flags(Summary& m, const std::vector<Summary>& it) {
  for (const Summary& s : it) {
    m.interrupted = m.interrupted || s.interrupted;
    if (s.flows_not_connected.size() > m.flows_not_connected.size())
      m.flows_not_connected = s.flows_not_connected;
    if (!m.stopped_early) m.stopped_early = s.stopped_early;
    if (s.longest_stall_s > m.longest_stall_s) {
      m.longest_stall_s = s.longest_stall_s;
      m.longest_stall_start_s = s.longest_stall_start_s;
    }
  }
}

// Every iteration has the same groups in the same order: average them one by one.
void average_groups(Summary& m, const std::vector<Summary>& it) {
  for (auto groups : {&Summary::adapters, &Summary::controllers}) {
    auto& out = m.*groups;
    for (size_t g = 0; g < out.size(); ++g) {
      double bps = 0, tps = 0, jain = 0;
      for (auto& s : it) {
        const auto& src = s.*groups;
        if (g >= src.size()) continue;
        bps += src[g].throughput_bps;
        tps += src[g].transaction_rate;
        jain += src[g].jain_fairness;
      }
      out[g].throughput_bps = bps / double(it.size());
      out[g].transaction_rate = tps / double(it.size());
      out[g].jain_fairness = jain / double(it.size());
    }
  }
}

// The latency and connect histograms of every iteration, merged, and their figures.
void merge_latency(Summary& m, const std::vector<Summary>& it) {
  m.latency_histogram.reset();
  for (auto& s : it)
    m.latency_histogram.merge(s.latency_histogram);
  m.latency.reset();
  if (m.latency_histogram.count() > 0) m.latency = latency_of(m.latency_histogram);
  m.connect_histogram.reset();
  m.connect_failures = {};
  for (auto& s : it) {
    m.connect_failures += s.connect_failures;
    if (!s.connect_histogram) continue;
    if (!m.connect_histogram) m.connect_histogram.emplace();
    m.connect_histogram->merge(*s.connect_histogram);
  }
  m.connect_latency.reset();
  if (m.connect_histogram) m.connect_latency = latency_of(*m.connect_histogram);
}

}  // namespace

void finish_report(Report& r) {
  if (r.iterations.empty()) return;
  Summary m = r.iterations.back();  // flows, CPU split and intervals of the last iteration
  auto& it = r.iterations;
  merge_flags(m, it);
  m.throughput_bps = mean_of(it, [](const Summary& s) { return s.throughput_bps; });
  m.throughput_c2s_bps = mean_of(it, [](const Summary& s) { return s.throughput_c2s_bps; });
  m.throughput_s2c_bps = mean_of(it, [](const Summary& s) { return s.throughput_s2c_bps; });
  m.transaction_rate = mean_of(it, [](const Summary& s) { return s.transaction_rate; });
  m.jain_fairness = mean_of(it, [](const Summary& s) { return s.jain_fairness; });
  m.setup_s = mean_of(it, [](const Summary& s) { return s.setup_s; });
  average_groups(m, it);
  merge_latency(m, it);
  m.errors.clear();
  m.verify.reset();
  for (auto& s : it) {
    m.errors.insert(m.errors.end(), s.errors.begin(), s.errors.end());
    if (s.verify) {  // every byte of every iteration was checked: the counts add up
      if (!m.verify) m.verify.emplace();
      m.verify->merge(*s.verify);
    }
  }
  r.summary = std::move(m);
  std::vector<double> samples;
  for (auto& s : it)
    samples.push_back(headline(r.spec, s));
  if (samples.size() >= 2) {
    r.confidence = confidence_interval(samples, r.rule.level);
    r.confidence_met = confidence_met(*r.confidence, r.rule.width_percent);
  }
}

}  // namespace mtperf
