#include "platform/rdma_devices.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include "platform/root_fs.hpp"

namespace mtperf {

std::string to_string(RdmaPortState state) {
  switch (state) {
    case RdmaPortState::nop:
      return "NOP";
    case RdmaPortState::down:
      return "DOWN";
    case RdmaPortState::init:
      return "INIT";
    case RdmaPortState::armed:
      return "ARMED";
    case RdmaPortState::active:
      return "ACTIVE";
    case RdmaPortState::active_defer:
      return "ACTIVE_DEFER";
    case RdmaPortState::unknown:
      return "unknown";
  }
  return "unknown";
}

namespace {

constexpr const char* kClass = "sys/class/infiniband";
constexpr size_t kMaxGidEntries = 4096;  // rxe has 1024, mlx5 up to 255 per port

// sysfs writes enumerations as "<number>: <word>" ("4: ACTIVE", "5: LinkUp", "1: CA").
std::string after_colon(const std::string& text) {
  size_t colon = text.find(':');
  if (colon == std::string::npos || !to_number(text.substr(0, colon))) return text;
  size_t start = text.find_first_not_of(' ', colon + 1);
  return start == std::string::npos ? "" : text.substr(start);
}

RdmaPortState parse_state(const std::string& text) {
  size_t colon = text.find(':');
  if (auto n = to_number(text.substr(0, colon)); n && *n >= 0 && *n <= 5)
    return static_cast<RdmaPortState>(*n);
  std::string word = after_colon(text);
  for (auto s : {RdmaPortState::nop, RdmaPortState::down, RdmaPortState::init, RdmaPortState::armed,
                 RdmaPortState::active, RdmaPortState::active_defer})
    if (word == to_string(s)) return s;
  return RdmaPortState::unknown;
}

bool is_zero_gid(const std::string& gid) {
  return std::all_of(gid.begin(), gid.end(), [](char c) { return c == '0' || c == ':'; });
}

std::vector<std::string> device_names(const RootFs& fs) {
  std::vector<std::string> names;
  for (auto& name : fs.list(kClass))
    if (!name.starts_with(".") && name.size() <= kMaxRdmaDeviceName)
      names.push_back(std::move(name));
  return names;
}

std::vector<int> port_numbers(const RootFs& fs, const std::string& dev) {
  std::vector<int> numbers;
  for (const auto& name : fs.list(dev + "/ports"))
    if (auto n = to_number(name); n && *n > 0 && *n < 256) numbers.push_back(static_cast<int>(*n));
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

// `port` is resolved: the GID files below it are plain files, read without resolving again.
void read_gids(const RootFs& fs, const std::string& port, RdmaPort& p) {
  std::vector<int> indexes;
  for (const auto& name : fs.list(port + "/gids"))
    if (auto n = to_number(name); n && *n >= 0 && size_t(*n) < kMaxGidEntries)
      indexes.push_back(static_cast<int>(*n));
  std::sort(indexes.begin(), indexes.end());
  for (int i : indexes) {
    std::string index = std::to_string(i);
    RdmaGid g;
    g.index = i;
    g.gid = fs.read_resolved(port + "/gids/" + index);
    if (g.gid.empty() || is_zero_gid(g.gid)) continue;
    g.type = fs.read_resolved(port + "/gid_attrs/types/" + index);
    g.netdev = fs.read_resolved(port + "/gid_attrs/ndevs/" + index);
    p.gids.push_back(std::move(g));
  }
}

// Netdevs of the device's bus device whose dev_port + 1 is `number` (every one of them on a
// single-port device): IPoIB interfaces, and Ethernet ports that have no GID yet.
std::vector<std::string> bus_netdevs(const RootFs& fs, const std::string& dev, int number,
                                     bool single_port) {
  std::vector<std::string> out;
  for (const auto& name : fs.list(dev + "/device/net")) {
    if (name.starts_with(".")) continue;
    auto dev_port = to_number(fs.read(dev + "/device/net/" + name + "/dev_port"));
    if (single_port || dev_port.value_or(0) + 1 == number) out.push_back(name);
  }
  return out;
}

RdmaPort read_port(const RootFs& fs, const std::string& dev, int number, const RdmaDevice& d,
                   bool single_port) {
  RdmaPort p;
  p.number = number;
  std::string port = fs.resolve(dev + "/ports/" + std::to_string(number));
  std::string state = fs.read_resolved(port + "/state");
  p.state = parse_state(state);
  p.state_text = p.state == RdmaPortState::unknown ? after_colon(state) : to_string(p.state);
  p.phys_state = after_colon(fs.read_resolved(port + "/phys_state"));
  p.link_layer = fs.read_resolved(port + "/link_layer");
  p.rate = fs.read_resolved(port + "/rate");
  read_gids(fs, port, p);
  std::set<std::string> netdevs;
  for (const auto& g : p.gids)
    if (!g.netdev.empty()) netdevs.insert(g.netdev);
  if (netdevs.empty() && single_port && !d.parent.empty()) netdevs.insert(d.parent);
  if (netdevs.empty())
    for (auto& name : bus_netdevs(fs, dev, number, single_port))
      netdevs.insert(std::move(name));
  p.netdevs.assign(netdevs.begin(), netdevs.end());
  return p;
}

RdmaDevice read_device(const RootFs& fs, const std::string& name) {
  RdmaDevice d;
  d.name = name;
  std::string dev = fs.resolve(std::string(kClass) + "/" + name);
  d.node_guid = fs.read(dev + "/node_guid");
  d.node_type = after_colon(fs.read(dev + "/node_type"));
  d.parent = fs.read(dev + "/parent");
  auto numbers = port_numbers(fs, dev);
  for (int n : numbers)
    d.ports.push_back(read_port(fs, dev, n, d, numbers.size() == 1));
  return d;
}

std::optional<uint64_t> to_u64(std::string_view text) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// Reads one counter folder into `out`; `prefix` marks names that are already there.
void read_counter_dir(const RootFs& fs, const std::string& dir, bool hw,
                      std::map<std::string, uint64_t>& out) {
  for (const auto& name : fs.list(dir)) {
    if (out.size() >= kMaxRdmaCounters) return;
    // hw_counters/lifespan is how long the driver caches the others (ms), not a count.
    if (name.size() > kMaxRdmaCounterName || name.starts_with(".") || name == "lifespan") continue;
    auto value = to_u64(fs.read_resolved(dir + "/" + name));
    if (!value) continue;  // unreadable (EINVAL) or not a number
    std::string key = hw && out.count(name) ? "hw_counters/" + name : name;
    out.emplace(std::move(key), *value);
  }
}

}  // namespace

bool RdmaPort::rocev2() const {
  return std::any_of(gids.begin(), gids.end(),
                     [](const RdmaGid& g) { return g.type == "RoCE v2"; });
}

const RdmaPort* RdmaDevice::find_port(int number) const {
  for (const auto& p : ports)
    if (p.number == number) return &p;
  return nullptr;
}

const RdmaDevice* RdmaDevices::find(std::string_view name) const {
  for (const auto& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}

std::optional<RdmaPortRef> RdmaDevices::port_of_netdev(std::string_view netdev) const {
  for (const auto& d : devices)
    for (const auto& p : d.ports)
      if (std::find(p.netdevs.begin(), p.netdevs.end(), netdev) != p.netdevs.end())
        return RdmaPortRef{d.name, p.number};
  return std::nullopt;
}

std::vector<std::string> RdmaDevices::netdevs_of(const RdmaPortRef& port) const {
  const RdmaDevice* d = find(port.device);
  const RdmaPort* p = d ? d->find_port(port.port) : nullptr;
  return p ? p->netdevs : std::vector<std::string>{};
}

RdmaDevices read_rdma_devices(const std::string& root) {
  RootFs fs(root);
  RdmaDevices out;
  out.kernel_support = fs.exists(kClass);
  if (!out.kernel_support) return out;
  for (const auto& name : device_names(fs))
    out.devices.push_back(read_device(fs, name));
  return out;
}

std::vector<RdmaPortCounters> read_rdma_counters(const std::string& root) {
  RootFs fs(root);
  std::vector<RdmaPortCounters> out;
  for (const auto& name : device_names(fs)) {
    std::string dev = fs.resolve(std::string(kClass) + "/" + name);
    for (int n : port_numbers(fs, dev)) {
      if (out.size() >= kMaxRdmaPorts) return out;
      std::string port = fs.resolve(dev + "/ports/" + std::to_string(n));
      RdmaPortCounters c;
      c.device = name;
      c.port = n;
      read_counter_dir(fs, port + "/counters", false, c.counters);
      read_counter_dir(fs, port + "/hw_counters", true, c.counters);
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::vector<RdmaPortCounters> rdma_counter_deltas(const std::vector<RdmaPortCounters>& before,
                                                  const std::vector<RdmaPortCounters>& after) {
  std::vector<RdmaPortCounters> out;
  for (const auto& a : after) {
    auto b = std::find_if(before.begin(), before.end(), [&](const RdmaPortCounters& x) {
      return x.device == a.device && x.port == a.port;
    });
    if (b == before.end()) continue;
    RdmaPortCounters d;
    d.device = a.device;
    d.port = a.port;
    for (const auto& [name, value] : a.counters) {
      auto old = b->counters.find(name);
      if (old != b->counters.end() && value >= old->second) d.counters[name] = value - old->second;
    }
    out.push_back(std::move(d));
  }
  return out;
}

bool is_rdma_error_counter(std::string_view name) {
  // Whole words between underscores: "ack_deferred" holds "err" but counts no fault.
  static const std::set<std::string_view> kWords = {
      "err",   "error",   "errors",  "discard",   "discards", "drop",    "dropped",
      "retry", "retrans", "timeout", "duplicate", "downed",   "overrun", "restart"};
  if (name.find("out_of_") != std::string_view::npos) return true;
  for (size_t start = 0; start <= name.size();) {
    size_t end = std::min(name.find('_', start), name.size());
    if (kWords.count(name.substr(start, end - start))) return true;
    start = end + 1;
  }
  return false;
}

RdmaTraffic rdma_traffic(const RdmaPortCounters& port) {
  auto get = [&](const char* name) -> std::optional<uint64_t> {
    auto it = port.counters.find(name);
    return it == port.counters.end() ? std::nullopt : std::optional<uint64_t>(it->second);
  };
  RdmaTraffic t;
  if (auto words = get("port_xmit_data")) t.bytes_sent = *words * 4;
  if (auto words = get("port_rcv_data")) t.bytes_received = *words * 4;
  t.packets_sent = get("port_xmit_packets");
  if (!t.packets_sent) t.packets_sent = get("sent_pkts");
  t.packets_received = get("port_rcv_packets");
  if (!t.packets_received) t.packets_received = get("rcvd_pkts");
  for (const auto& [name, value] : port.counters)
    if (value != 0 && is_rdma_error_counter(name)) t.errors.emplace_back(name, value);
  return t;
}

std::vector<InterfaceAddress> rdma_port_addresses(const RdmaDevices& devs,
                                                  const std::vector<InterfaceAddress>& addrs) {
  std::vector<InterfaceAddress> out;
  for (const RdmaDevice& d : devs.devices) {
    for (const RdmaPort& p : d.ports) {
      if (!p.active()) continue;
      for (const std::string& netdev : p.netdevs) {
        for (const InterfaceAddress& ia : addrs) {
          if (ia.interface == netdev && ia.address.rfind("fe80", 0) != 0) out.push_back(ia);
        }
      }
    }
  }
  return out;
}

uint64_t rnr_count(const std::vector<RdmaPortCounters>& ports) {
  uint64_t n = 0;
  for (const RdmaPortCounters& p : ports) {
    for (const auto& [name, v] : p.counters) {
      if (name.find("rnr") != std::string::npos) n += v;
    }
  }
  return n;
}

}  // namespace mtperf
