#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "report/render.hpp"
#include "workloads/kind.hpp"

namespace mtperf {
namespace {

// A stall shorter than two of the clock thread's 50 ms samples is left out of the text report.
constexpr double kStallShownS = 0.1;
// Up to this many flows the text lists each; beyond, it shows their distribution (JSON keeps
// every flow).
constexpr size_t kFlowsListed = 16;
// The slowest flows named under the distribution.
constexpr size_t kSlowestShown = 5;

// "1 byte", "64 bytes".
std::string bytes_text(uint64_t n) {
  return fmt::format("{} byte{}", n, n == 1 ? "" : "s");
}

// What a figure merged over every iteration says after it; nothing for one iteration.
std::string all_iterations(const Report& r) {
  return r.iterations.size() > 1 ? fmt::format(" (all {} iterations)", r.iterations.size()) : "";
}

std::string cpu_cell(const std::optional<CpuFigures>& c) {
  if (!c) return "n/a";
  const CpuUsage& u = c->host.total;
  return fmt::format("{:5.1f}% (usr {:.1f} sys {:.1f} irq {:.1f} sirq {:.1f})", u.util,
                     u.user + u.nice, u.sys, u.irq, u.softirq);
}

std::string irq_cell(const std::optional<InterruptRates>& r) {
  if (!r) return "n/a";
  double device = 0;
  std::string per;
  for (size_t i = 0; i < r->cpu_ids.size() && i < r->per_cpu_device.size(); ++i) {
    device += r->per_cpu_device[i];
    if (i < 8) per += fmt::format(" cpu{} {:.0f}", r->cpu_ids[i], r->per_cpu_device[i]);
  }
  double rx = 0;
  for (auto& s : r->softirqs) {
    if (s.kind == "NET_RX") rx = s.total;
  }
  std::string adapters;
  for (const auto& a : r->adapters)
    adapters +=
        fmt::format("{} {} {:.0f}/s", adapters.empty() ? "; adapters:" : ",", a.adapter, a.total);
  return fmt::format("{:.0f}/s device IRQs ({} ), NET_RX softirq {:.0f}/s{}", device, per, rx,
                     adapters);
}

std::string sd_cell(const std::optional<CpuFigures>& c) {
  if (!c) return "n/a";
  return fmt::format("{:.3f} {}", c->service_demand, c->service_demand_unit);
}

// One line per RDMA port that counted anything in the window: bytes (the counters count 4-byte
// words) with their rate, packets, and the error counters that moved.
std::string rdma_lines(const char* label, const std::vector<RdmaPortCounters>& ports,
                       double window_s) {
  std::string out;
  size_t idle = 0;
  auto direction = [&](const char* what, const std::optional<uint64_t>& bytes,
                       const std::optional<uint64_t>& packets) {
    std::string s = what;
    if (bytes) {
      s += fmt::format(" {} bytes", *bytes);
      if (window_s > 0) s += fmt::format(" ({:.2f} Mbit/s)", double(*bytes) * 8 / window_s / 1e6);
    }
    if (packets) s += fmt::format(" {} packets", *packets);
    return s;
  };
  for (const auto& p : ports) {
    bool moved = false;
    for (const auto& [name, value] : p.counters)
      moved |= value != 0;
    if (!moved) {
      ++idle;
      continue;
    }
    RdmaTraffic t = rdma_traffic(p);
    std::string errors;
    for (const auto& [name, value] : t.errors)
      errors += fmt::format("{} {} {}", errors.empty() ? "; errors" : ",", name, value);
    out += fmt::format("  {:<18} {}/{}: {}, {}{}\n", label, p.device, p.port,
                       direction("sent", t.bytes_sent, t.packets_sent),
                       direction("received", t.bytes_received, t.packets_received), errors);
  }
  if (idle > 0)
    out += fmt::format("  {:<18} {} port(s) counted nothing in the window\n", label, idle);
  return out;
}

// 1234567 -> "1.23M": bytes (10^3 steps) and packets, to three figures.
std::string scaled(uint64_t v, const char* const units[4]) {
  double x = double(v);
  int k = 0;
  while (x >= 1000 && k < 3) {
    x /= 1000;
    ++k;
  }
  return k == 0 ? fmt::format("{}{}", v, units[0]) : fmt::format("{:.3g}{}", x, units[k]);
}

// One line per network device: its deltas over the window, the faults that moved, and the
// device's bytes beside the payload this side sent over it; then the host's TCP counters.
std::string netdev_lines(const char* side, const std::vector<NetdevFigures>& devices,
                         const std::map<std::string, uint64_t>& tcp) {
  static const char* const kBytes[4] = {" B", " kB", " MB", " GB"};
  static const char* const kPkts[4] = {"", "k", "M", "G"};
  std::string out;
  for (const auto& d : devices) {
    std::string faults;
    for (const auto& [name, value] : d.faults)
      faults += fmt::format("{} {} {}", faults.empty() ? "; moved:" : ",", name, value);
    std::string ratio = "no payload sent over it";
    if (d.wire_payload_ratio)
      ratio = fmt::format("device/app bytes {:.3f}{}{}", *d.wire_payload_ratio,
                          d.both_directions ? " (both directions: loopback)" : "",
                          d.carried == false ? " (LESS than the application sent)" : "");
    out += fmt::format("  {} netdev {}: tx {} {} pkts, rx {} {} pkts, errors {} drops {}; {}{}\n",
                       side, d.device, scaled(d.tx_bytes, kBytes), scaled(d.tx_packets, kPkts),
                       scaled(d.rx_bytes, kBytes), scaled(d.rx_packets, kPkts), d.errors, d.drops,
                       ratio, faults);
  }
  if (!devices.empty() && !tcp.empty()) {
    std::string line;
    for (const char* name : {"RetransSegs", "InErrs", "OutRsts", "InCsumErrors"})
      if (auto it = tcp.find(name); it != tcp.end())
        line += fmt::format(" {} {}", name, it->second);
    // A connection storm's marks, where they moved: SYNs or connections dropped at a full
    // accept queue, and TIME_WAIT sockets the kernel could not keep.
    for (const char* name :
         {"TcpExt.ListenOverflows", "TcpExt.ListenDrops", "TcpExt.TCPTimeWaitOverflow"})
      if (auto it = tcp.find(name); it != tcp.end() && it->second != 0)
        line += fmt::format(" {} {}", name + 7, it->second);
    out += fmt::format("  {} tcp:{}\n", side, line);
  }
  return out;
}

// Nearest rank of `sorted` (ascending, not empty), p in [0, 100].
double rank_of(const std::vector<double>& sorted, double p) {
  size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size()) - 1e-9));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

// Many flows: the distribution of their figure, the slowest of them, and those with errors.
void flows_distribution(std::string& out, bool rr, const Summary& s) {
  std::vector<std::pair<double, uint32_t>> by;  // (figure, flow id)
  for (auto& f : s.flows)
    by.emplace_back(rr ? f.transaction_rate : f.throughput_bps / 1e6, f.id);
  std::sort(by.begin(), by.end());
  std::vector<double> v;
  for (auto& [x, id] : by)
    v.push_back(x);
  out += fmt::format(
      "  per flow {}: min {:.1f} p1 {:.1f} p10 {:.1f} median {:.1f} p90 {:.1f} p99 {:.1f} max "
      "{:.1f}; Jain {:.4f} over {} flows\n",
      rr ? "trans/s" : "Mbit/s", v.front(), rank_of(v, 1), rank_of(v, 10), rank_of(v, 50),
      rank_of(v, 90), rank_of(v, 99), v.back(), s.jain_fairness, v.size());
  std::string slow;
  for (size_t i = 0; i < std::min(kSlowestShown, by.size()); ++i)
    slow += fmt::format("{}flow {} {:.1f}", i ? ", " : "", by[i].second, by[i].first);
  out += fmt::format("  slowest flows: {} (every flow: --format json)\n", slow);
  for (auto& f : s.flows) {
    if (!f.error.empty()) out += fmt::format("  flow {} ERROR: {}\n", f.id, f.error);
  }
}

void flows_table(std::string& out, const TestSpec& spec, const Summary& s) {
  bool rr = kind_of(spec.workload).headline == Headline::transactions;
  if (s.flows.size() > kFlowsListed) {
    flows_distribution(out, rr, s);
    return;
  }
  out += rr ? fmt::format("  {:>5} {:>5} {:>14} {:>12} {:>10} {:>5}\n", "flow", "dir",
                          "transactions", "trans/s", "mean us", "cpu")
            : fmt::format("  {:>5} {:>5} {:>16} {:>12} {:>8} {:>5}\n", "flow", "dir", "bytes",
                          "Mbit/s", "retrans", "cpu");
  for (auto& f : s.flows) {
    std::string cpu = f.client_cpu >= 0 ? std::to_string(f.client_cpu) : "-";
    if (rr) {
      std::string mean = f.latency_mean_us ? fmt::format("{:.2f}", *f.latency_mean_us) : "-";
      out += fmt::format("  {:>5} {:>5} {:>14} {:>12.1f} {:>10} {:>5}", f.id, f.direction,
                         f.transactions, f.transaction_rate, mean, cpu);
    } else {
      std::string re = f.retransmits ? std::to_string(*f.retransmits) : "-";
      out += fmt::format("  {:>5} {:>5} {:>16} {:>12.2f} {:>8} {:>5}", f.id, f.direction, f.bytes,
                         f.throughput_bps / 1e6, re, cpu);
    }
    if (f.udp_lost) {
      out += fmt::format("  udp lost {} reord {} dup {} jitter {:.1f} us", *f.udp_lost,
                         f.udp_reordered.value_or(0), f.udp_duplicates.value_or(0),
                         f.udp_jitter_us.value_or(0));
    }
    if (!f.error.empty()) out += "  ERROR: " + f.error;
    out += "\n";
  }
  // TCP_INFO counts over the connection's life; the hosts' tcp: lines over the window.
  const bool any_retrans = std::any_of(s.flows.begin(), s.flows.end(), [](const FlowFigures& f) {
    return f.retransmits.has_value();
  });
  if (!rr && any_retrans)
    out += "  (retrans: the sender's TCP_INFO, the connection's whole life, warm-up included)\n";
}

// --verify: the bytes checked on both ends and, when any was wrong, where, per flow.
std::string verify_lines(const VerifyStats& v, const std::vector<FlowFigures>& flows) {
  if (v.bad_receives == 0) {
    return fmt::format("  verify             {} bytes checked, all as sent\n", v.bytes_checked);
  }
  std::string out = fmt::format(
      "  verify             {} bytes checked: {} receive(s) CORRUPTED, {} wrong byte(s)\n",
      v.bytes_checked, v.bad_receives, v.bad_bytes);
  for (const auto& f : flows) {
    if (!f.verify || f.verify->bad_receives == 0) continue;
    out += fmt::format("    flow {} ({}): {} bad receive(s), {} wrong byte(s); first:\n", f.id,
                       f.direction, f.verify->bad_receives, f.verify->bad_bytes);
    for (uint32_t i = 0; i < f.verify->kept; ++i)
      out += describe(f.verify->first[i], "      ");
  }
  return out;
}

void groups_table(std::string& out, const char* what, const std::vector<GroupFigures>& groups,
                  bool rr) {
  out += fmt::format("  {:<14} {:>6} {:>14} {:>8} {:>12}\n", what, "flows",
                     rr ? "trans/s" : "Mbit/s", "Jain", "irq/s");
  for (const auto& g : groups)
    out += fmt::format("  {:<14} {:>6} {:>14.2f} {:>8.4f} {:>12}\n", g.name, g.flows.size(),
                       rr ? g.transaction_rate : g.throughput_bps / 1e6, g.jain_fairness,
                       g.irq_per_s ? fmt::format("{:.0f}", *g.irq_per_s) : "-");
}

// Transactions' and connects' latency over every iteration, and the connects that failed.
void latency_lines(std::string& out, const Report& r) {
  const Summary& s = r.summary;
  if (s.latency) {
    const LatencyFigures& l = *s.latency;
    out += fmt::format(
        "  latency (us)       mean {:.2f} sd {:.2f} min {:.2f} p50 {:.2f} p90 {:.2f} p99 {:.2f} "
        "p99.9 {:.2f} max {:.2f}{}\n",
        l.mean_us, l.stddev_us, l.min_us, l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us,
        all_iterations(r));
  }
  if (s.connect_latency) {
    const LatencyFigures& l = *s.connect_latency;
    out += fmt::format(
        "  connect (us)       mean {:.2f} min {:.2f} p50 {:.2f} p90 {:.2f} p99 {:.2f} p99.9 {:.2f} "
        "max {:.2f}{}\n",
        l.mean_us, l.min_us, l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us, all_iterations(r));
  }
  if (const ConnectFailures& cf = s.connect_failures; cf.total() > 0) {
    out += fmt::format(
        "  connects failed    {} (tried again): refused {}, timed out {}, no local port {}, "
        "other {}\n",
        cf.total(), cf.refused, cf.timed_out, cf.no_port, cf.other);
  }
}

// The test, its headline figure, the transport's settings, latency, loss and --verify.
void headline_lines(std::string& out, const Report& r, bool rr) {
  const TestSpec& spec = r.spec;
  const Summary& s = r.summary;
  out += fmt::format(
      "mtperf {} {} over {}: {} flow(s), {:.1f} s window after {:.1f} s warm-up, {} iteration(s)\n",
      to_string(spec.workload), to_string(spec.proto), spec.transport, spec.flows_total(),
      s.window_s, spec.warmup_s, r.iterations.size());
  // With several iterations the headline is their mean; say so where the figure stands.
  const std::string over = r.iterations.size() > 1
                               ? fmt::format("mean of {} iterations; ", r.iterations.size())
                               : std::string();
  if (rr) {
    out +=
        fmt::format("  transaction rate   {:.1f} trans/s  ({}{} request, {} response, burst {})\n",
                    s.transaction_rate, over, bytes_text(spec.req_size), bytes_text(spec.resp_size),
                    spec.burst);
  } else {
    out += fmt::format("  throughput         {:.2f} Mbit/s  ({}10^6 bits/s; {} per send)\n",
                       s.throughput_bps / 1e6, over, bytes_text(spec.stream_msg_size()));
    if (kind_of(spec.workload).flows_per_flow > 1) {
      out += fmt::format("    client->server   {:.2f} Mbit/s\n    server->client   {:.2f} Mbit/s\n",
                         s.throughput_c2s_bps / 1e6, s.throughput_s2c_bps / 1e6);
    }
  }
  if (!s.transport_settings.empty()) {
    std::string settings;
    for (const auto& [k, v] : s.transport_settings)
      settings += (settings.empty() ? "" : ", ") + k + " " + v;
    out += fmt::format("  {:<18} {}\n", spec.transport + " settings", settings);
  }
  latency_lines(out, r);
  if (s.udp_loss_percent)
    out += fmt::format("  udp loss           {:.4f} %\n", *s.udp_loss_percent);
  if (s.verify) out += verify_lines(*s.verify, s.flows);
}

// Both hosts: CPU, interrupts, RDMA ports, network devices, mtperf's own CPU, fairness.
void host_lines(std::string& out, const Report& r) {
  const Summary& s = r.summary;
  if (r.iterations.size() > 1)
    out += fmt::format("  hosts, the last iteration ({0} of {0}) alone:\n", r.iterations.size());
  out +=
      fmt::format("  local cpu          {}  sd {}\n", cpu_cell(s.local_cpu), sd_cell(s.local_cpu));
  out += fmt::format("  remote cpu         {}  sd {}\n", cpu_cell(s.remote_cpu),
                     sd_cell(s.remote_cpu));
  out += fmt::format("  local interrupts   {}\n", irq_cell(s.local_interrupts));
  out += fmt::format("  remote interrupts  {}\n", irq_cell(s.remote_interrupts));
  out += rdma_lines("local rdma", s.local_rdma_ports, s.window_s);
  out += rdma_lines("remote rdma", s.remote_rdma_ports, s.window_s);
  out += netdev_lines("local", s.local_netdev, s.local_tcp);
  out += netdev_lines("remote", s.remote_netdev, s.remote_tcp);
  auto percent = [](const std::optional<double>& p) {
    return p ? fmt::format("{:.1f}%", *p) : std::string("n/a");
  };
  if (s.one_process) {
    out += fmt::format("  mtperf itself      local+remote (one process) {} of one CPU\n",
                       percent(s.local_process_cpu_percent));
  } else {
    out += fmt::format("  mtperf itself      local {} remote {} of one CPU\n",
                       percent(s.local_process_cpu_percent), percent(s.remote_process_cpu_percent));
  }
  if (s.flows.size() > 1) {
    if (r.iterations.size() > 1)
      out += fmt::format(
          "  fairness           Jain {:.4f} (mean of {} iterations), min/max {:.3f} (the last)\n",
          s.jain_fairness, r.iterations.size(), s.min_max_ratio);
    else
      out += fmt::format("  fairness           Jain {:.4f}, min/max {:.3f}\n", s.jain_fairness,
                         s.min_max_ratio);
  }
  // Only where it tells something: a few connections set up in no time.
  if (s.flows.size() > kFlowsListed && s.setup_s > 0)
    out += fmt::format("  set-up             {} flows in {:.3f} s\n", s.flows.size(), s.setup_s);
}

// Each iteration's figure and the confidence interval over them.
void iteration_lines(std::string& out, const Report& r, bool rr) {
  if (r.iterations.size() > 1) {
    out += "  iterations        ";
    for (auto& it : r.iterations) {
      out += rr ? fmt::format(" {:.1f}", it.transaction_rate)
                : fmt::format(" {:.2f}", it.throughput_bps / 1e6);
    }
    out += rr ? " trans/s\n" : " Mbit/s\n";
  }
  if (r.confidence) {
    const ConfidenceInterval& c = *r.confidence;
    out += fmt::format(
        "  confidence         {:.0f}% interval +/-{:.2f}% of the mean (target +/-{:.2f}%): {}\n",
        r.rule.level * 100, c.width_percent_of_mean / 2, r.rule.width_percent / 2,
        r.confidence_met ? "met" : "NOT met");
  }
}

// Where the flows ran: the placement table, each flow's route, per adapter and controller.
void placement_lines(std::string& out, const Report& r, bool rr) {
  if (!r.placement) return;
  const Summary& s = r.summary;
  std::string placed = render_text(*r.placement);
  // Each flow's route, beside the placement table's rows.
  out += "  " + placed.substr(0, placed.find('\n') + 1);
  for (const auto& f : s.flows)
    if (!f.local_address.empty() && f.id < r.placement->flows.size()) {
      const FlowPlacement& p = r.placement->flows[f.id];
      out += fmt::format("    flow {:>3} {:<12} {:>15} -> {:<15} worker cpu {}  ({})\n", f.id,
                         f.adapter, f.local_address, f.remote_address,
                         p.worker_cpu >= 0 ? std::to_string(p.worker_cpu) : "-", p.reason);
    }
  for (const auto& note : r.placement->notes)
    out += "    note: " + note + "\n";
  groups_table(out, "adapter", s.adapters, rr);
  groups_table(out, "controller", s.controllers, rr);
}

// The flows that did not connect, the first few by name: "17 (Connection refused), ...".
void not_connected_line(std::string& out, const Summary& s) {
  constexpr size_t kNamed = 10;
  if (s.flows_not_connected.empty()) return;
  std::string names;
  for (size_t i = 0; i < s.flows_not_connected.size() && i < kNamed; ++i) {
    const control::FlowFailure& f = s.flows_not_connected[i];
    // The cause alone ("Connection refused"), not where to: the address is the server's.
    std::string why =
        f.error.substr(f.error.rfind(": ") == std::string::npos ? 0 : f.error.rfind(": ") + 2);
    names += fmt::format("{}{} ({})", i ? ", " : "", f.flow, why);
  }
  if (s.flows_not_connected.size() > kNamed)
    names += fmt::format(", and {} more", s.flows_not_connected.size() - kNamed);
  out += fmt::format("  flows not connected {} of {}: {}\n", s.flows_not_connected.size(),
                     s.flows_asked, names);
}

// What went wrong: flows that never connected, errors, the longest stall, an early stop, an
// interruption.
void ending_lines(std::string& out, const Summary& s) {
  not_connected_line(out, s);
  for (auto& e : s.errors)
    out += "  error: " + e + "\n";
  if (s.longest_stall_s >= kStallShownS) {
    out +=
        fmt::format("  longest stall {:.2f} s from {:.2f} s: nothing sent, received or answered\n",
                    s.longest_stall_s, s.longest_stall_start_s);
  }
  if (s.stopped_early) {
    out +=
        fmt::format("  STOPPED EARLY at {:.2f} s (--stop-on-error, {}): {}\n",
                    s.stopped_early->at_s, to_string(s.stopped_early->cause), s.stopped_early->why);
  }
  if (s.interrupted)
    out += fmt::format("  INTERRUPTED: a partial result, measured over {:.2f} s\n", s.window_s);
}

}  // namespace

std::string report_text(const Report& r) {
  const bool rr = kind_of(r.spec.workload).headline == Headline::transactions;
  std::string out;
  headline_lines(out, r, rr);
  host_lines(out, r);
  iteration_lines(out, r, rr);
  placement_lines(out, r, rr);
  if (r.iterations.size() > 1 && !r.summary.flows.empty())
    out += fmt::format(
        "  per flow, the last iteration ({0} of {0}) alone; the headline is the mean of all {0}:\n",
        r.iterations.size());
  flows_table(out, r.spec, r.summary);
  if (r.peer) out += peer_text(*r.peer);
  ending_lines(out, r.summary);
  return out;
}

}  // namespace mtperf
