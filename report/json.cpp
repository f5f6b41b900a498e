#include <cmath>

#include "platform/system.hpp"
#include "report/covers.hpp"
#include "report/render.hpp"

namespace mtperf {
namespace {

nlohmann::json num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json latency_json(const std::optional<LatencyFigures>& l) {
  if (!l) return nullptr;
  return {{"count", l->count},     {"mean", num(l->mean_us)},  {"stddev", num(l->stddev_us)},
          {"min", num(l->min_us)}, {"p50", num(l->p50_us)},    {"p90", num(l->p90_us)},
          {"p99", num(l->p99_us)}, {"p99_9", num(l->p999_us)}, {"max", num(l->max_us)}};
}

// The user-facing document has its own writers of the CPU and interrupt figures, apart from the
// control protocol's (control/side_json), so that a change of the wire never changes it.
nlohmann::json usage_json(const CpuUsage& u) {
  return {{"util_percent", num(u.util)}, {"user", num(u.user + u.nice)}, {"sys", num(u.sys)},
          {"irq", num(u.irq)},           {"softirq", num(u.softirq)},    {"iowait", num(u.iowait)},
          {"steal", num(u.steal)},       {"idle", num(u.idle)}};
}

nlohmann::json cpu_json(const std::optional<CpuFigures>& c) {
  if (!c) return nullptr;
  nlohmann::json j = usage_json(c->host.total);
  j["cpus"] = c->host.cpus;
  nlohmann::json per = nlohmann::json::array();
  for (const auto& [id, u] : c->host.per_cpu) {
    nlohmann::json e = usage_json(u);
    e["cpu"] = id;
    per.push_back(e);
  }
  j["per_cpu"] = per;
  return j;
}

// Device interrupts and the network softirqs, per CPU and per adapter, events/s.
nlohmann::json interrupts_json(const std::optional<InterruptRates>& r) {
  if (!r) return nullptr;
  nlohmann::json per = nlohmann::json::array();
  double device = 0, all = 0;
  for (size_t i = 0; i < r->cpu_ids.size(); ++i) {
    const int cpu = r->cpu_ids[i];
    const double d = i < r->per_cpu_device.size() ? r->per_cpu_device[i] : 0;
    const double a = i < r->per_cpu_all.size() ? r->per_cpu_all[i] : 0;
    device += d;
    all += a;
    per.push_back({{"cpu", cpu},
                   {"device_per_s", num(d)},
                   {"all_per_s", num(a)},
                   {"net_rx_per_s", num(r->softirq_rate("NET_RX", cpu))},
                   {"net_tx_per_s", num(r->softirq_rate("NET_TX", cpu))}});
  }
  nlohmann::json adapters = nlohmann::json::array();
  for (const auto& a : r->adapters)
    adapters.push_back({{"adapter", a.adapter},
                        {"irqs", a.irqs},
                        {"per_s", num(a.total)},
                        {"per_cpu", a.per_cpu}});
  return {{"device_per_s", num(device)},
          {"all_per_s", num(all)},
          {"per_cpu", per},
          {"adapters", adapters}};
}

nlohmann::json sd_json(const std::optional<CpuFigures>& c) {
  if (!c) return nullptr;
  return {{"value", num(c->service_demand)}, {"unit", c->service_demand_unit}};
}

// --verify's figures; null when the run did not verify.
nlohmann::json verify_json(const std::optional<VerifyStats>& v) {
  if (!v) return nullptr;
  nlohmann::json first = nlohmann::json::array();
  for (uint32_t i = 0; i < v->kept; ++i) {
    const VerifyMismatch& m = v->first[i];
    first.push_back(
        {{"datagram", m.seq != 0 ? nlohmann::json(m.seq) : nlohmann::json()},
         {"offset", m.offset},
         {"expected", m.expected},
         {"got", m.got},
         {"around_offset", m.around_offset},
         {"around", std::vector<uint8_t>(m.around.begin(), m.around.begin() + m.around_len)}});
  }
  return {{"bytes_checked", v->bytes_checked},
          {"bad_receives", v->bad_receives},
          {"bad_bytes", v->bad_bytes},
          {"first_mismatches", first}};
}

nlohmann::json flow_json(const FlowFigures& f) {
  auto server = [&](uint64_t FlowTotals::*m) {
    return f.server_total ? nlohmann::json((*f.server_total).*m) : nlohmann::json();
  };
  auto text_or_null = [](const std::string& t) {
    return t.empty() ? nlohmann::json() : nlohmann::json(t);
  };
  nlohmann::json j = {
      {"id", f.id},
      {"direction", f.direction},
      {"adapter", text_or_null(f.adapter)},
      {"local_address", text_or_null(f.local_address)},
      {"remote_address", text_or_null(f.remote_address)},
      {"bytes", f.bytes},
      {"throughput_bps", num(f.throughput_bps)},
      {"transactions", f.transactions},
      {"transaction_rate", num(f.transaction_rate)},
      {"latency_mean_us", f.latency_mean_us ? num(*f.latency_mean_us) : nlohmann::json()},
      {"client_cpu", f.client_cpu},
      {"udp",
       {{"sent", opt(f.udp_sent)},
        {"received", opt(f.udp_received)},
        {"lost", opt(f.udp_lost)},
        {"reordered", opt(f.udp_reordered)},
        {"duplicates", opt(f.udp_duplicates)},
        {"jitter_us", opt(f.udp_jitter_us)}}},
      {"tcp_info",
       {{"retransmits", opt(f.retransmits)},
        {"rtt_us", opt(f.rtt_us)},
        {"cwnd", opt(f.cwnd)},
        {"congestion", f.congestion}}},
      {"verify", verify_json(f.verify)},
      {"error", f.error.empty() ? nlohmann::json() : nlohmann::json(f.error)},
      {"client_bytes_sent", f.client_total.bytes_sent},
      {"client_bytes_received", f.client_total.bytes_received},
      {"client_transactions", f.client_total.transactions},
      {"server_bytes_sent", server(&FlowTotals::bytes_sent)},
      {"server_bytes_received", server(&FlowTotals::bytes_received)},
      {"server_transactions", server(&FlowTotals::transactions)}};
  // Present only when the run kept per-flow histograms (--per-flow-latency).
  if (f.latency_p50_us) j["latency_p50_us"] = num(*f.latency_p50_us);
  if (f.latency_p99_us) j["latency_p99_us"] = num(*f.latency_p99_us);
  return j;
}

nlohmann::json not_connected_json(const std::vector<control::FlowFailure>& failed) {
  nlohmann::json out = nlohmann::json::array();
  for (const control::FlowFailure& f : failed)
    out.push_back({{"flow", f.flow}, {"error", f.error}});
  return out;
}

nlohmann::json groups_json(const std::vector<GroupFigures>& groups) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : groups)
    out.push_back({{"name", g.name},
                   {"flows", g.flows},
                   {"throughput_bps", num(g.throughput_bps)},
                   {"transaction_rate", num(g.transaction_rate)},
                   {"jain_fairness", num(g.jain_fairness)},
                   {"min_max_ratio", num(g.min_max_ratio)},
                   {"irq_per_s", opt(g.irq_per_s)}});
  return out;
}

// Each port's counter deltas with what they say in plain units: bytes (port_xmit_data and
// port_rcv_data count 4-byte words), packets, and the error counters that moved.
nlohmann::json rdma_ports_json(const std::vector<RdmaPortCounters>& ports) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : ports) {
    RdmaTraffic t = rdma_traffic(p);
    nlohmann::json errors = nlohmann::json::object();
    for (const auto& [name, value] : t.errors)
      errors[name] = value;
    out.push_back({{"device", p.device},
                   {"port", p.port},
                   {"bytes_sent", opt(t.bytes_sent)},
                   {"bytes_received", opt(t.bytes_received)},
                   {"packets_sent", opt(t.packets_sent)},
                   {"packets_received", opt(t.packets_received)},
                   {"errors", errors},
                   {"counters", p.counters}});
  }
  return out;
}

// Each device's counter deltas beside the payload this side sent over it
// (report/netdev_figures.hpp).
nlohmann::json netdev_json(const std::vector<NetdevFigures>& devices) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : devices) {
    out.push_back({{"device", d.device},
                   {"tx_bytes", d.tx_bytes},
                   {"rx_bytes", d.rx_bytes},
                   {"tx_packets", d.tx_packets},
                   {"rx_packets", d.rx_packets},
                   {"errors", d.errors},
                   {"drops", d.drops},
                   {"app_bytes_sent", d.app_bytes_sent},
                   {"app_bytes_received", d.app_bytes_received},
                   {"both_directions", d.both_directions},
                   {"wire_payload_ratio", opt(d.wire_payload_ratio)},
                   {"carried", d.carried ? nlohmann::json(*d.carried) : nlohmann::json()},
                   {"faults", d.faults},
                   {"driver", d.driver},
                   {"stats", d.stats}});
  }
  return out;
}

nlohmann::json stopped_json(const std::optional<EarlyStop>& st) {
  if (!st) return nullptr;
  return {{"cause", to_string(st->cause)}, {"at_s", num(st->at_s)}, {"reason", st->why}};
}

nlohmann::json intervals_json(const std::vector<IntervalSample>& samples) {
  nlohmann::json intervals = nlohmann::json::array();
  for (auto& i : samples) {
    double dt = i.end_s - i.start_s;
    intervals.push_back(
        {{"start_s", i.start_s},
         {"end_s", i.end_s},
         {"bytes_sent", i.sum.bytes_sent},
         {"bytes_received", i.sum.bytes_recv},
         {"transactions", i.sum.transactions},
         {"throughput_bps", num(dt > 0 ? double(i.sum.bytes_recv + i.sum.bytes_sent) * 8 / dt : 0)},
         {"transaction_rate", num(dt > 0 ? double(i.sum.transactions) / dt : 0)}});
  }
  return intervals;
}

nlohmann::json connect_failures_json(const ConnectFailures& c) {
  return {{"refused", c.refused},
          {"timed_out", c.timed_out},
          {"no_port", c.no_port},
          {"other", c.other}};
}

nlohmann::json summary_json(const Summary& s) {
  nlohmann::json flows = nlohmann::json::array();
  for (auto& f : s.flows)
    flows.push_back(flow_json(f));
  return {{"window_s", num(s.window_s)},
          {"throughput_bps", num(s.throughput_bps)},
          {"throughput_c2s_bps", num(s.throughput_c2s_bps)},
          {"throughput_s2c_bps", num(s.throughput_s2c_bps)},
          {"transactions", s.transactions},
          {"transaction_rate", num(s.transaction_rate)},
          {"latency_us", latency_json(s.latency)},
          {"connect_latency_us", latency_json(s.connect_latency)},
          {"connect_failures", connect_failures_json(s.connect_failures)},
          {"jain_fairness", num(s.jain_fairness)},
          {"min_max_ratio", num(s.min_max_ratio)},
          {"local_cpu", cpu_json(s.local_cpu)},
          {"remote_cpu", cpu_json(s.remote_cpu)},
          {"service_demand", {{"local", sd_json(s.local_cpu)}, {"remote", sd_json(s.remote_cpu)}}},
          {"local_interrupts", interrupts_json(s.local_interrupts)},
          {"remote_interrupts", interrupts_json(s.remote_interrupts)},
          {"local_process_cpu_percent", opt(s.local_process_cpu_percent)},
          {"remote_process_cpu_percent", opt(s.remote_process_cpu_percent)},
          {"one_process", s.one_process},
          {"udp_loss_percent", opt(s.udp_loss_percent)},
          {"verify", verify_json(s.verify)},
          {"local_rdma_ports", rdma_ports_json(s.local_rdma_ports)},
          {"remote_rdma_ports", rdma_ports_json(s.remote_rdma_ports)},
          {"local_netdev", netdev_json(s.local_netdev)},
          {"remote_netdev", netdev_json(s.remote_netdev)},
          {"local_tcp", s.local_tcp},
          {"remote_tcp", s.remote_tcp},
          {"flows", flows},
          {"adapters", groups_json(s.adapters)},
          {"controllers", groups_json(s.controllers)},
          {"intervals", intervals_json(s.intervals)},
          {"transport_settings", s.transport_settings},
          {"errors", s.errors},
          {"interrupted", s.interrupted},
          {"stopped_early", stopped_json(s.stopped_early)},
          {"longest_stall_s", num(s.longest_stall_s)},
          {"longest_stall_start_s", num(s.longest_stall_start_s)},
          {"setup_s", num(s.setup_s)},
          {"flows_asked", s.flows_asked},
          {"flows_not_connected", not_connected_json(s.flows_not_connected)}};
}

// netperf omni selector names, for scripts that read netperf's output.
nlohmann::json omni_json(const Report& r) {
  const Summary& s = r.summary;
  return {{"THROUGHPUT", num(s.throughput_bps / 1e6)},
          {"THROUGHPUT_UNITS", "10^6bits/s"},
          {"TRANSACTION_RATE", num(s.transaction_rate)},
          {"MEAN_LATENCY", s.latency ? num(s.latency->mean_us) : nlohmann::json()},
          {"P50_LATENCY", s.latency ? num(s.latency->p50_us) : nlohmann::json()},
          {"P90_LATENCY", s.latency ? num(s.latency->p90_us) : nlohmann::json()},
          {"P99_LATENCY", s.latency ? num(s.latency->p99_us) : nlohmann::json()},
          {"LOCAL_CPU_UTIL", s.local_cpu ? num(s.local_cpu->host.total.util) : nlohmann::json()},
          {"REMOTE_CPU_UTIL", s.remote_cpu ? num(s.remote_cpu->host.total.util) : nlohmann::json()},
          {"LOCAL_SD", s.local_cpu ? num(s.local_cpu->service_demand) : nlohmann::json()},
          {"REMOTE_SD", s.remote_cpu ? num(s.remote_cpu->service_demand) : nlohmann::json()},
          {"CONFIDENCE_ITERATION", r.iterations.size()}};
}

}  // namespace

nlohmann::json environment_json(const std::string& version) {
  SystemFacts f = read_system_facts();
  return {{"host", f.host},           {"kernel", f.kernel},    {"machine", f.machine},
          {"cpu_model", f.cpu_model}, {"cpus", f.online_cpus}, {"mtperf_version", version}};
}

nlohmann::json report_json(const Report& r) {
  nlohmann::json iterations = nlohmann::json::array();
  for (auto& s : r.iterations)
    iterations.push_back(summary_json(s));
  nlohmann::json conf = nullptr;
  if (r.confidence) {
    const ConfidenceInterval& c = *r.confidence;
    conf = {{"level", num(r.rule.level)},
            {"width_percent_target", num(r.rule.width_percent)},
            {"mean", num(c.mean)},
            {"stddev", num(c.stddev)},
            {"low", num(c.lo)},
            {"high", num(c.hi)},
            {"width_percent", num(c.width_percent_of_mean)},
            {"iterations", c.n},
            {"met", r.confidence_met}};
  }
  nlohmann::json doc = {{"schema", kJsonSchema},
                        {"test", r.spec},
                        {"environment", r.environment},
                        {"summary", summary_json(r.summary)},
                        {"omni", omni_json(r)},
                        {"iterations", iterations},
                        {"placement", r.placement ? to_json(*r.placement) : nlohmann::json()},
                        {"confidence", conf},
                        {"covers", covers_json(r)}};
  if (r.peer) doc["peer"] = peer_json(*r.peer);
  return doc;
}

}  // namespace mtperf
