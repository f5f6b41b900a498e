#include "control/side_json.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>

#include "workloads/json_field.hpp"

namespace mtperf {
namespace {

nlohmann::json counters_json(const CounterValues& c) {
  return {{"bytes_sent", c.bytes_sent},     {"bytes_received", c.bytes_recv},
          {"messages_sent", c.msgs_sent},   {"messages_received", c.msgs_recv},
          {"transactions", c.transactions}, {"errors", c.errors}};
}

// The RESULT comes from the network: every value strictly of its field's type and range
// (json_field.hpp), every list bounded.
template <class T>
T field(const nlohmann::json& j, const char* key) {
  return json_field::required<T>(j, "result", key);
}

// j[key], an object.
const nlohmann::json& object(const nlohmann::json& j, const char* key) {
  if (!j.is_object())
    throw std::invalid_argument(std::string("result: not an object around ") + key);
  auto it = j.find(key);
  if (it == j.end()) throw std::invalid_argument(std::string("result.") + key + ": missing");
  if (!it->is_object())
    throw std::invalid_argument(std::string("result.") + key + ": wrong type, not an object");
  return *it;
}

// j[key], a list of at most `max` entries.
const nlohmann::json& list(const nlohmann::json& j, const char* key,
                           size_t max = json_field::kMaxList) {
  if (!j.is_object())
    throw std::invalid_argument(std::string("result: not an object around ") + key);
  auto it = j.find(key);
  if (it == j.end()) throw std::invalid_argument(std::string("result.") + key + ": missing");
  if (!it->is_array())
    throw std::invalid_argument(std::string("result.") + key + ": wrong type, not a list");
  if (it->size() > max)
    throw std::invalid_argument(std::string("result.") + key + ": more than " +
                                std::to_string(max) + " entries");
  return *it;
}

nlohmann::json verify_json(const VerifyStats& v) {
  nlohmann::json first = nlohmann::json::array();
  for (uint32_t i = 0; i < v.kept; ++i) {
    const VerifyMismatch& m = v.first[i];
    first.push_back(
        {{"seq", m.seq},
         {"offset", m.offset},
         {"expected", m.expected},
         {"got", m.got},
         {"around_offset", m.around_offset},
         {"around", std::vector<uint8_t>(m.around.begin(), m.around.begin() + m.around_len)}});
  }
  return {{"bytes_checked", v.bytes_checked},
          {"bad_receives", v.bad_receives},
          {"bad_bytes", v.bad_bytes},
          {"mismatches", first}};
}

VerifyStats verify_from(const nlohmann::json& j) {
  VerifyStats v;
  v.enabled = true;
  v.bytes_checked = field<uint64_t>(j, "bytes_checked");
  v.bad_receives = field<uint64_t>(j, "bad_receives");
  v.bad_bytes = field<uint64_t>(j, "bad_bytes");
  for (auto& m : list(j, "mismatches", VerifyStats::kKeptMismatches)) {
    VerifyMismatch& out = v.first[v.kept++];
    out.seq = field<uint64_t>(m, "seq");
    out.offset = field<uint64_t>(m, "offset");
    out.expected = field<uint8_t>(m, "expected");
    out.got = field<uint8_t>(m, "got");
    out.around_offset = field<uint64_t>(m, "around_offset");
    auto around = field<std::vector<uint8_t>>(m, "around");
    if (around.size() > VerifyMismatch::kAround)
      throw std::invalid_argument("result.verify.mismatches.around: more than " +
                                  std::to_string(VerifyMismatch::kAround) + " bytes");
    std::copy(around.begin(), around.end(), out.around.begin());
    out.around_len = uint8_t(around.size());
  }
  return v;
}

CounterValues counters_from(const nlohmann::json& j) {
  CounterValues c;
  c.bytes_sent = field<uint64_t>(j, "bytes_sent");
  c.bytes_recv = field<uint64_t>(j, "bytes_received");
  c.msgs_sent = field<uint64_t>(j, "messages_sent");
  c.msgs_recv = field<uint64_t>(j, "messages_received");
  c.transactions = field<uint64_t>(j, "transactions");
  c.errors = field<uint64_t>(j, "errors");
  return c;
}

nlohmann::json usage_json(const CpuUsage& u) {
  return {{"util_percent", u.util}, {"user", u.user + u.nice}, {"sys", u.sys},
          {"irq", u.irq},           {"softirq", u.softirq},    {"iowait", u.iowait},
          {"steal", u.steal},       {"idle", u.idle}};
}

// A share of a CPU's time, 0..100 %: anything else is refused here, naming the field, before a
// report divides by it or multiplies it into a service demand.
double share_field(const nlohmann::json& j, const char* name, std::string_view where) {
  const double v = field<double>(j, name);
  if (!(v >= 0.0 && v <= kMaxCpuSharePercent)) {
    throw std::invalid_argument(std::string(where) + "." + name + ": " + std::to_string(v) +
                                " is not a share of CPU time (0..100 %)");
  }
  return v;
}

CpuUsage usage_from(const nlohmann::json& j, std::string_view where) {
  CpuUsage u;
  u.util = share_field(j, "util_percent", where);
  u.user = share_field(j, "user", where);
  u.sys = share_field(j, "sys", where);
  u.irq = share_field(j, "irq", where);
  u.softirq = share_field(j, "softirq", where);
  u.iowait = share_field(j, "iowait", where);
  u.steal = share_field(j, "steal", where);
  u.idle = share_field(j, "idle", where);
  return u;
}

int cpu_count_field(const nlohmann::json& j, const char* name, std::string_view where, int lo) {
  const int v = field<int>(j, name);
  if (v < lo || v > kMaxCpuId) {
    throw std::invalid_argument(std::string(where) + "." + name + ": " + std::to_string(v) +
                                " out of range " + std::to_string(lo) + ".." +
                                std::to_string(kMaxCpuId));
  }
  return v;
}

Role role_from(const std::string& s) {
  for (auto r : {Role::sender, Role::receiver, Role::rr_client, Role::rr_server, Role::crr_client,
                 Role::crr_server}) {
    if (s == to_string(r)) return r;
  }
  throw std::invalid_argument("result: unknown role '" + s + "'");
}

}  // namespace

nlohmann::json cpu_to_json(const CpuUtilization& c) {
  nlohmann::json j = usage_json(c.total);
  j["cpus"] = c.cpus;
  nlohmann::json per = nlohmann::json::array();
  for (auto& [id, u] : c.per_cpu) {
    nlohmann::json e = usage_json(u);
    e["cpu"] = id;
    per.push_back(e);
  }
  j["per_cpu"] = per;
  return j;
}

CpuUtilization cpu_from_json(const nlohmann::json& j) {
  CpuUtilization c;
  c.total = usage_from(j, "result.cpu");
  c.cpus = cpu_count_field(j, "cpus", "result.cpu", 0);
  for (auto& e : list(j, "per_cpu")) {
    c.per_cpu.emplace_back(cpu_count_field(e, "cpu", "result.cpu.per_cpu[]", 0),
                           usage_from(e, "result.cpu.per_cpu[]"));
  }
  return c;
}

nlohmann::json interrupts_to_json(const InterruptRates& r) {
  nlohmann::json per = nlohmann::json::array();
  double device = 0, all = 0;
  for (size_t i = 0; i < r.cpu_ids.size(); ++i) {
    int cpu = r.cpu_ids[i];
    double d = i < r.per_cpu_device.size() ? r.per_cpu_device[i] : 0;
    double a = i < r.per_cpu_all.size() ? r.per_cpu_all[i] : 0;
    device += d;
    all += a;
    per.push_back({{"cpu", cpu},
                   {"device_per_s", d},
                   {"all_per_s", a},
                   {"net_rx_per_s", r.softirq_rate("NET_RX", cpu)},
                   {"net_tx_per_s", r.softirq_rate("NET_TX", cpu)}});
  }
  nlohmann::json adapters = nlohmann::json::array();
  for (const auto& a : r.adapters)
    adapters.push_back(
        {{"adapter", a.adapter}, {"irqs", a.irqs}, {"per_s", a.total}, {"per_cpu", a.per_cpu}});
  return {{"device_per_s", device}, {"all_per_s", all}, {"per_cpu", per}, {"adapters", adapters}};
}

InterruptRates interrupts_from_json(const nlohmann::json& j) {
  InterruptRates r;
  SoftirqRate rx{"NET_RX", {}, 0}, tx{"NET_TX", {}, 0};
  for (auto& e : list(j, "per_cpu")) {
    int cpu = field<int>(e, "cpu");
    r.cpu_ids.push_back(cpu);
    r.softirq_cpu_ids.push_back(cpu);
    r.per_cpu_device.push_back(field<double>(e, "device_per_s"));
    r.per_cpu_all.push_back(field<double>(e, "all_per_s"));
    rx.per_cpu.push_back(field<double>(e, "net_rx_per_s"));
    tx.per_cpu.push_back(field<double>(e, "net_tx_per_s"));
    rx.total += rx.per_cpu.back();
    tx.total += tx.per_cpu.back();
  }
  r.softirqs = {rx, tx};
  if (j.contains("adapters")) {
    for (auto& e : list(j, "adapters")) {
      AdapterIrqRate a;
      a.adapter = field<std::string>(e, "adapter");
      a.irqs = field<std::vector<int>>(e, "irqs");
      a.total = field<double>(e, "per_s");
      a.per_cpu = field<std::vector<double>>(e, "per_cpu");
      r.adapters.push_back(std::move(a));
    }
  }
  return r;
}

nlohmann::json rdma_ports_to_json(const std::vector<RdmaPortCounters>& ports) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : ports)
    out.push_back({{"device", p.device}, {"port", p.port}, {"counters", p.counters}});
  return out;
}

namespace {

RdmaPortCounters rdma_port_from(const nlohmann::json& e, size_t index) {
  std::string at = "result.rdma_ports[" + std::to_string(index) + "]";
  auto bad = [&](const std::string& what) { throw std::invalid_argument(at + what); };
  if (!e.is_object()) bad(": wrong type, not an object");
  RdmaPortCounters p;
  auto device = e.find("device");
  if (device == e.end() || !device->is_string()) bad(".device: missing or not a string");
  p.device = device->get<std::string>();
  if (p.device.empty() || p.device.size() > kMaxRdmaDeviceName) bad(".device: empty or too long");
  auto port = e.find("port");
  if (port == e.end() || !port->is_number_integer()) bad(".port: missing or not a whole number");
  int64_t number = port->get<int64_t>();
  if (number < 1 || number > 255) bad(".port: out of range 1..255");
  p.port = static_cast<int>(number);
  auto counters = e.find("counters");
  if (counters == e.end() || !counters->is_object()) bad(".counters: missing or not an object");
  if (counters->size() > kMaxRdmaCounters)
    bad(".counters: more than " + std::to_string(kMaxRdmaCounters) + " entries");
  for (const auto& [name, value] : counters->items()) {
    if (name.empty() || name.size() > kMaxRdmaCounterName)
      bad(".counters: a name empty or too long");
    // Built here, a count may be a signed JSON integer; read from text, a positive one is unsigned.
    if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<int64_t>() < 0))
      bad(".counters." + name + ": not an unsigned count");
    p.counters.emplace(name, value.get<uint64_t>());
  }
  return p;
}

}  // namespace

std::vector<RdmaPortCounters> rdma_ports_from_json(const nlohmann::json& j) {
  if (!j.is_array()) throw std::invalid_argument("result.rdma_ports: wrong type, not a list");
  if (j.size() > kMaxRdmaPorts)
    throw std::invalid_argument("result.rdma_ports: more than " + std::to_string(kMaxRdmaPorts) +
                                " entries");
  std::vector<RdmaPortCounters> out;
  for (size_t i = 0; i < j.size(); ++i)
    out.push_back(rdma_port_from(j[i], i));
  return out;
}

nlohmann::json netdev_to_json(const NetWitness& w) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : w.devices)
    devices.push_back({{"device", d.device}, {"stats", d.stats}, {"driver", d.driver}});
  return {{"devices", devices}, {"tcp", w.tcp}};
}

namespace {

// {name: unsigned count}, at most `limit` entries, names of 1..kMaxNetdevCounterName characters.
std::map<std::string, uint64_t> counts_from(const nlohmann::json& j, const std::string& at,
                                            size_t limit) {
  if (!j.is_object()) throw std::invalid_argument(at + ": missing or not an object");
  if (j.size() > limit)
    throw std::invalid_argument(at + ": more than " + std::to_string(limit) + " entries");
  std::map<std::string, uint64_t> out;
  for (const auto& [name, value] : j.items()) {
    if (name.empty() || name.size() > kMaxNetdevCounterName)
      throw std::invalid_argument(at + ": a name empty or too long");
    if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<int64_t>() < 0))
      throw std::invalid_argument(at + "." + name + ": not an unsigned count");
    out.emplace(name, value.get<uint64_t>());
  }
  return out;
}

const nlohmann::json& member(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kMissing;
  auto it = j.find(key);
  return it == j.end() ? kMissing : *it;
}

}  // namespace

NetWitness netdev_from_json(const nlohmann::json& j) {
  const std::string at = "result.netdev";
  if (!j.is_object()) throw std::invalid_argument(at + ": wrong type, not an object");
  const auto& devices = member(j, "devices");
  if (!devices.is_array()) throw std::invalid_argument(at + ".devices: missing or not a list");
  if (devices.size() > kMaxNetdevs)
    throw std::invalid_argument(at + ".devices: more than " + std::to_string(kMaxNetdevs) +
                                " entries");
  NetWitness w;
  for (size_t i = 0; i < devices.size(); ++i) {
    std::string di = at + ".devices[" + std::to_string(i) + "]";
    const auto& e = devices[i];
    if (!e.is_object()) throw std::invalid_argument(di + ": wrong type, not an object");
    const auto& name = member(e, "device");
    if (!name.is_string()) throw std::invalid_argument(di + ".device: missing or not a string");
    NetdevCounters d;
    d.device = name.get<std::string>();
    if (d.device.empty() || d.device.size() > kMaxNetdevName)
      throw std::invalid_argument(di + ".device: empty or too long");
    d.stats = counts_from(member(e, "stats"), di + ".stats", kMaxNetdevCounters);
    d.driver = counts_from(member(e, "driver"), di + ".driver", kMaxNetdevCounters);
    w.devices.push_back(std::move(d));
  }
  w.tcp = counts_from(member(j, "tcp"), at + ".tcp", kMaxTcpCounters);
  return w;
}

nlohmann::json side_to_json(const SideResult& r) {
  nlohmann::json flows = nlohmann::json::array();
  for (auto& f : r.flows) {
    nlohmann::json jf = {{"id", f.id},
                         {"role", to_string(f.role)},
                         {"cpu", f.cpu},
                         {"total", counters_json(f.total)},
                         {"window", counters_json(f.window)},
                         {"error", f.stats.error}};
    const UdpStats& u = f.stats.udp;
    jf["udp"] = {{"received", u.received},
                 {"lost", u.lost},
                 {"reordered", u.reordered},
                 {"duplicates", u.duplicates},
                 {"jitter_us", u.jitter_ns / 1e3}};
    if (f.stats.verify.enabled) jf["verify"] = verify_json(f.stats.verify);
    if (f.unsent_change != 0) jf["unsent_change"] = f.unsent_change;
    if (f.unread_change != 0) jf["unread_change"] = f.unread_change;
    if (f.stats.tcp_info_valid) {
      jf["tcp_info"] = {{"retransmits", f.stats.tcp_retransmits},
                        {"rtt_us", f.stats.tcp_rtt_us},
                        {"cwnd", f.stats.tcp_cwnd},
                        {"congestion", f.stats.congestion}};
    }
    flows.push_back(jf);
  }
  nlohmann::json j = {{"side", to_string(r.side)},
                      {"window_s", r.window_s},
                      {"flows", flows},
                      {"errors", r.errors},
                      {"process_cpu",
                       {{"user_s", r.process.user_s},
                        {"sys_s", r.process.sys_s},
                        {"allowed_cpus", r.process.allowed_cpus},
                        {"instance", r.process.instance}}}};
  j["cpu"] = r.cpu ? cpu_to_json(*r.cpu) : nlohmann::json(nullptr);
  j["interrupts"] = r.interrupts ? interrupts_to_json(*r.interrupts) : nlohmann::json(nullptr);
  j["rdma_ports"] = rdma_ports_to_json(r.rdma_ports);
  j["netdev"] = netdev_to_json(r.netdev);
  return j;
}

namespace {

// A flow's unsent or unread change: bounded by a socket's send or receive buffer, far below 2^40
// either way.
int64_t buffer_change(const nlohmann::json& jf, const char* key) {
  const int64_t v = field<int64_t>(jf, key);
  if (v < -(int64_t(1) << 40) || v > (int64_t(1) << 40))
    throw std::invalid_argument(std::string("result.flows[].") + key + ": out of range");
  return v;
}

FlowResult flow_from_json(const nlohmann::json& jf) {
  FlowResult f;
  f.id = field<uint32_t>(jf, "id");
  f.role = role_from(field<std::string>(jf, "role"));
  f.cpu = field<int>(jf, "cpu");
  f.total = counters_from(object(jf, "total"));
  f.window = counters_from(object(jf, "window"));
  f.stats.error = field<std::string>(jf, "error");
  const auto& u = object(jf, "udp");
  f.stats.udp.received = field<uint64_t>(u, "received");
  f.stats.udp.lost = field<uint64_t>(u, "lost");
  f.stats.udp.reordered = field<uint64_t>(u, "reordered");
  f.stats.udp.duplicates = field<uint64_t>(u, "duplicates");
  f.stats.udp.jitter_ns = field<double>(u, "jitter_us") * 1e3;
  if (jf.contains("verify")) f.stats.verify = verify_from(object(jf, "verify"));
  if (jf.contains("unsent_change")) f.unsent_change = buffer_change(jf, "unsent_change");
  if (jf.contains("unread_change")) f.unread_change = buffer_change(jf, "unread_change");
  if (jf.contains("tcp_info")) {
    const auto& t = object(jf, "tcp_info");
    f.stats.tcp_info_valid = true;
    f.stats.tcp_retransmits = field<uint32_t>(t, "retransmits");
    f.stats.tcp_rtt_us = field<uint32_t>(t, "rtt_us");
    f.stats.tcp_cwnd = field<uint32_t>(t, "cwnd");
    f.stats.congestion = field<std::string>(t, "congestion");
  }
  return f;
}

}  // namespace

SideResult side_from_json(const nlohmann::json& j) {
  SideResult r;
  r.side = field<std::string>(j, "side") == "server" ? Side::server : Side::client;
  r.window_s = field<double>(j, "window_s");
  for (auto& jf : list(j, "flows", kLimits.max_flows_total))
    r.flows.push_back(flow_from_json(jf));
  r.errors = field<std::vector<std::string>>(j, "errors");
  const auto& p = object(j, "process_cpu");
  r.process.user_s = field<double>(p, "user_s");
  r.process.sys_s = field<double>(p, "sys_s");
  // Absent from a peer that predates them: unknown (0).
  if (p.contains("allowed_cpus")) {
    r.process.allowed_cpus = cpu_count_field(p, "allowed_cpus", "result.process_cpu", 0);
  }
  if (p.contains("instance")) r.process.instance = field<uint64_t>(p, "instance");
  if (auto c = j.find("cpu"); c != j.end() && !c->is_null())
    r.cpu = cpu_from_json(object(j, "cpu"));
  if (auto i = j.find("interrupts"); i != j.end() && !i->is_null()) {
    r.interrupts = interrupts_from_json(object(j, "interrupts"));
  }
  // Absent from a peer that predates it.
  if (auto p = j.find("rdma_ports"); p != j.end()) r.rdma_ports = rdma_ports_from_json(*p);
  if (auto n = j.find("netdev"); n != j.end()) r.netdev = netdev_from_json(*n);
  return r;
}

}  // namespace mtperf
