#include "platform/topology.hpp"

#include <nlohmann/json.hpp>

#include "platform/affinity.hpp"
#include "platform/rdma_devices.hpp"
#include "platform/root_fs.hpp"
#include "platform/shape.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace mtperf {
namespace fs = std::filesystem;

std::string to_string(LinkType type) {
  switch (type) {
    case LinkType::ethernet:
      return "ethernet";
    case LinkType::atm:
      return "atm";
    case LinkType::infiniband:
      return "infiniband";
    case LinkType::loopback:
      return "loopback";
    case LinkType::virtual_link:
      return "virtual";
    case LinkType::other:
      return "other";
  }
  return "other";
}

namespace {

constexpr int kArphrdEther = 1, kArphrdAtm = 19, kArphrdInfiniband = 32, kArphrdLoopback = 772;

std::vector<int> cpus_or_empty(std::string_view text) {
  try {
    return parse_cpu_list(text);
  } catch (const std::invalid_argument&) {
    return {};
  }
}

std::string basename_of(const std::string& rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string::npos ? rel : rel.substr(slash + 1);
}

std::string uevent_value(const RootFs& fs, const std::string& dir, std::string_view key) {
  std::string text = fs.read(dir + "/uevent");
  std::string prefix = std::string(key) + "=";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (text.compare(pos, prefix.size(), prefix) == 0)
      return text.substr(pos + prefix.size(), end - pos - prefix.size());
    pos = end + 1;
  }
  return "";
}

bool is_pci_address(const std::string& name) {
  return shape::fits(name, "xxxx:xx:xx.7");
}

bool is_host_bridge(const std::string& name) {
  return shape::fits(name, "pcixxxx:xx");
}

// /proc/interrupts: IRQ number → action names.
std::map<int, std::string> read_irq_names(const RootFs& fs) {
  std::map<int, std::string> names;
  std::istringstream in(fs.read("proc/interrupts"));
  std::string line;
  size_t ncpu = 0;
  if (std::getline(in, line)) {
    std::istringstream header(line);
    for (std::string tok; header >> tok;)
      ncpu += tok.starts_with("CPU");
  }
  // "123-edge": a hwirq number and its trigger type.
  auto hwirq = [](std::string_view w) {
    size_t dash = w.find('-');
    return dash != std::string_view::npos && shape::all(w.substr(0, dash), shape::digit) &&
           shape::all(w.substr(dash + 1), shape::lower_alpha);
  };
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string label;
    fields >> label;
    if (label.empty() || label.back() != ':') continue;
    auto irq = to_number(std::string_view(label).substr(0, label.size() - 1));
    if (!irq) continue;
    std::vector<std::string> rest;
    for (std::string tok; fields >> tok;)
      rest.push_back(tok);
    size_t first = std::min(ncpu, rest.size());
    // New kernels print "chip hwirq-type name", older ones "chip-type name".
    if (first < rest.size()) ++first;
    if (first < rest.size() && hwirq(rest[first])) ++first;
    std::string name;
    for (size_t i = first; i < rest.size(); ++i)
      name += (name.empty() ? "" : " ") + rest[i];
    names[static_cast<int>(*irq)] = name;
  }
  return names;
}

// True when `word` occurs in `text` not as part of a longer name ("eth1" is not in "eth10-rx").
bool contains_word(std::string_view text, std::string_view word) {
  if (word.empty()) return false;
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  for (size_t pos = text.find(word); pos != std::string_view::npos;
       pos = text.find(word, pos + 1)) {
    bool left = pos == 0 || !is_name_char(text[pos - 1]);
    size_t end = pos + word.size();
    bool right = end == text.size() || !is_name_char(text[end]);
    if (left && right) return true;
  }
  return false;
}

bool looks_like_data_queue(const std::string& irq_name, const std::string& ifname) {
  std::string lower(irq_name);
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  for (const char* word : {"config", "async", "ctrl", "admin", "event", "link"})
    if (lower.find(word) != std::string::npos) return false;
  for (const char* word : {"txrx", "rx", "tx", "input", "output", "comp", "queue", "fp-"})
    if (lower.find(word) != std::string::npos) return true;
  // Drivers that name queue vectors "<if>-<n>".
  const size_t dash = irq_name.rfind('-');
  return !ifname.empty() && contains_word(irq_name, ifname) && dash != std::string::npos &&
         shape::all(std::string_view(irq_name).substr(dash + 1), shape::digit);
}

Irq read_irq(const RootFs& fs, int number, const std::map<int, std::string>& names,
             const std::string& ifname) {
  Irq irq;
  irq.number = number;
  if (auto it = names.find(number); it != names.end()) irq.name = it->second;
  std::string dir = "proc/irq/" + std::to_string(number);
  std::string list = fs.read(dir + "/effective_affinity_list");
  if (list.empty()) list = fs.read(dir + "/smp_affinity_list");
  irq.effective_cpus = cpus_or_empty(list);
  irq.data_queue = looks_like_data_queue(irq.name, ifname);
  return irq;
}

// The kernel's driver name for interfaces without a bus device (veth, tun, bridge, ifb, dummy):
// only the live system can answer, through the ethtool ioctl.
std::string ethtool_driver(const std::string& ifname) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  ifreq req{};
  std::snprintf(req.ifr_name, sizeof req.ifr_name, "%s", ifname.c_str());
  req.ifr_data = reinterpret_cast<char*>(&info);
  int rc = ::ioctl(fd, SIOCETHTOOL, &req);
  ::close(fd);
  return rc == 0 ? std::string(info.driver) : "";
}

std::string virtual_kind(const RootFs& fs, const std::string& net, const Adapter& a) {
  std::string devtype = uevent_value(fs, net, "DEVTYPE");
  if (!devtype.empty()) return devtype;
  if (auto flags = to_number(fs.read(net + "/tun_flags"), 16))
    return (*flags & 0x0002) ? "tap" : "tun";  // IFF_TAP : IFF_TUN
  if (fs.exists(net + "/bridge")) return "bridge";
  if (fs.exists(net + "/bonding")) return "bond";
  if (!a.driver.empty()) return a.driver == "tun" ? "tun" : a.driver;
  // A fixture tree has no ethtool: fall back on the names the tools give by default.
  static const std::pair<const char*, const char*> kPrefixes[] = {
      {"veth", "veth"}, {"ifb", "ifb"},         {"dummy", "dummy"},   {"tap", "tap"},
      {"tun", "tun"},   {"virbr", "bridge"},    {"docker", "bridge"}, {"br", "bridge"},
      {"bond", "bond"}, {"macvlan", "macvlan"}, {"vxlan", "vxlan"},   {"wg", "wireguard"}};
  for (const auto& [prefix, kind] : kPrefixes)
    if (a.name.starts_with(prefix)) return kind;
  return "virtual";
}

}  // namespace

void mark_emulated(Adapter& a, const std::string& controller, const std::vector<int>& cpus) {
  a.emulated = true;
  a.controller = controller;
  a.irqs.clear();
  if (cpus.empty()) return;
  Irq irq;
  irq.name = a.name + "-emulated";
  irq.effective_cpus = cpus;
  irq.data_queue = true;
  a.irqs = {irq};
}

namespace {

// "mtperf-emu controller=NAME cpus=LIST [kind=KIND]" in ifalias marks an emulated adapter.
void apply_emulation_alias(Adapter& a, const std::string& alias) {
  std::istringstream words(alias);
  std::string word;
  if (!(words >> word) || word != "mtperf-emu") return;
  std::string controller;
  std::vector<int> cpus;
  while (words >> word) {
    size_t eq = word.find('=');
    if (eq == std::string::npos) continue;
    std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "controller") controller = value;
    if (key == "cpus") cpus = cpus_or_empty(value);
    if (key == "kind") a.kind = value;
  }
  mark_emulated(a, controller, cpus);
}

// Fills PCI placement from the resolved device path, e.g.
// sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/net/ens2f0: controller pci0000:40, root port
// 0000:40:01.1, function 0000:41:00.0.
std::string locate_pci(const std::string& device, Adapter& a) {
  auto parts = RootFs::split(device);
  std::string function_dir;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (a.controller.empty()) {
      if (is_host_bridge(parts[i]) && i > 0 && parts[i - 1] == "devices") a.controller = parts[i];
      continue;
    }
    if (!is_pci_address(parts[i])) break;
    if (a.pci_address.empty() && i + 1 < parts.size() && is_pci_address(parts[i + 1]))
      a.root_port = parts[i];
    a.pci_address = parts[i];
    std::vector<std::string> prefix(parts.begin(), parts.begin() + static_cast<long>(i) + 1);
    function_dir = RootFs::join(prefix);
  }
  return function_dir;
}

void read_device(const RootFs& fs, const std::string& net, Adapter& a,
                 const std::map<int, std::string>& irq_names) {
  std::string device = fs.resolve(net + "/device");
  if (!fs.exists(device)) return;
  a.bus_device = basename_of(device);
  std::string driver = fs.resolve(device + "/driver");
  a.driver = fs.exists(driver) ? basename_of(driver) : uevent_value(fs, device, "DRIVER");
  std::string function = locate_pci(device, a);
  std::string dir = function.empty() ? device : function;
  if (a.bus_device == a.pci_address) a.bus_device.clear();
  if (auto node = to_number(fs.read(dir + "/numa_node")); node && *node >= 0)
    a.numa_node = static_cast<int>(*node);
  a.local_cpus = cpus_or_empty(fs.read(dir + "/local_cpulist"));
  std::set<int> numbers;
  for (const auto& name : fs.list(dir + "/msi_irqs"))
    if (auto n = to_number(name)) numbers.insert(static_cast<int>(*n));
  if (numbers.empty())
    if (auto legacy = to_number(fs.read(dir + "/irq")); legacy && *legacy > 0)
      numbers.insert(static_cast<int>(*legacy));
  for (const auto& [number, name] : irq_names)
    if (contains_word(name, a.name) || contains_word(name, a.bus_device) ||
        (!a.pci_address.empty() && name.find(a.pci_address) != std::string::npos))
      numbers.insert(number);
  for (int number : numbers)
    a.irqs.push_back(read_irq(fs, number, irq_names, a.name));
  std::set<std::string> rdma;
  for (const auto& d : {device, dir})
    for (const auto& name : fs.list(d + "/infiniband"))
      rdma.insert(name);
  a.rdma_devices.assign(rdma.begin(), rdma.end());
}

Adapter read_adapter(const RootFs& fs, const std::string& name,
                     const std::map<int, std::string>& irq_names) {
  Adapter a;
  a.name = name;
  std::string net = fs.resolve("sys/class/net/" + name);
  a.ifindex = static_cast<int>(to_number(fs.read(net + "/ifindex")).value_or(0));
  a.arp_type = static_cast<int>(to_number(fs.read(net + "/type")).value_or(0));
  a.mtu = static_cast<int>(to_number(fs.read(net + "/mtu")).value_or(0));
  a.operstate = fs.read(net + "/operstate");
  a.admin_up = (to_number(fs.read(net + "/flags"), 16).value_or(0) & 0x1) != 0;  // IFF_UP
  a.up = a.admin_up && (a.operstate == "up" || a.operstate == "unknown");
  if (auto speed = to_number(fs.read(net + "/speed")); speed && *speed > 0) a.speed_mbps = *speed;
  bool virtual_dev = net.starts_with("sys/devices/virtual/");
  if (a.arp_type == kArphrdLoopback) {
    a.type = LinkType::loopback;
  } else if (virtual_dev) {
    a.type = LinkType::virtual_link;
  } else {
    a.type = a.arp_type == kArphrdEther        ? LinkType::ethernet
             : a.arp_type == kArphrdAtm        ? LinkType::atm
             : a.arp_type == kArphrdInfiniband ? LinkType::infiniband
                                               : LinkType::other;
  }
  read_device(fs, net, a, irq_names);
  if (a.driver.empty() && fs.is_live()) a.driver = ethtool_driver(name);
  if (a.type == LinkType::virtual_link) a.kind = virtual_kind(fs, net, a);
  apply_emulation_alias(a, fs.read(net + "/ifalias"));
  return a;
}

void add_controllers(const RootFs& fs, Topology& t) {
  std::map<std::string, PciController> by_name;
  for (const auto& a : t.adapters) {
    if (a.controller.empty()) continue;
    PciController& c = by_name[a.controller];
    c.name = a.controller;
    c.emulated = a.emulated;
    c.adapters.push_back(a.name);
    if (!a.root_port.empty() &&
        std::find(c.root_ports.begin(), c.root_ports.end(), a.root_port) == c.root_ports.end())
      c.root_ports.push_back(a.root_port);
    if (c.numa_node < 0) c.numa_node = a.numa_node;
  }
  for (auto& [name, c] : by_name) {
    std::sort(c.root_ports.begin(), c.root_ports.end());
    // The root port's locality describes the controller; an adapter's is the next best thing.
    std::string port = c.root_ports.empty() ? "" : "sys/devices/" + name + "/" + c.root_ports[0];
    if (!port.empty()) c.local_cpus = cpus_or_empty(fs.read(port + "/local_cpulist"));
    if (c.local_cpus.empty())
      if (const Adapter* a = t.find_adapter(c.adapters.front())) c.local_cpus = a->local_cpus;
    t.controllers.push_back(std::move(c));
  }
}

// Each adapter's RDMA port, and the device in its list when it is not on the same bus device
// (rxe0 over a virtio NIC).
void add_rdma_ports(const std::string& root, Topology& t) {
  RdmaDevices rdma = read_rdma_devices(root);
  for (Adapter& a : t.adapters) {
    auto port = rdma.port_of_netdev(a.name);
    if (!port) continue;
    a.rdma_device = port->device;
    a.rdma_port = port->port;
    auto& list = a.rdma_devices;
    if (std::find(list.begin(), list.end(), port->device) != list.end()) continue;
    list.push_back(port->device);
    std::sort(list.begin(), list.end());
  }
}

void read_nodes(const RootFs& fs, Topology& t) {
  for (const auto& entry : fs.list("sys/devices/system/node")) {
    std::string_view digits = std::string_view(entry).substr(std::min<size_t>(4, entry.size()));
    if (!entry.starts_with("node") || !shape::all(digits, shape::digit) || digits.size() > 4)
      continue;
    size_t node = std::stoul(std::string(digits));
    if (node > 4096) continue;
    if (t.node_cpus.size() <= node) t.node_cpus.resize(node + 1);
    t.node_cpus[node] = cpus_or_empty(fs.read("sys/devices/system/node/" + entry + "/cpulist"));
    ++t.numa_nodes;
  }
  t.online_cpus = cpus_or_empty(fs.read("sys/devices/system/cpu/online"));
}

}  // namespace

std::vector<int> Adapter::irq_cpus() const {
  bool any_data = std::any_of(irqs.begin(), irqs.end(), [](const Irq& i) { return i.data_queue; });
  std::vector<int> cpus;
  for (const auto& irq : irqs) {
    if (any_data && !irq.data_queue) continue;
    for (int cpu : irq.effective_cpus)
      if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) cpus.push_back(cpu);
  }
  return cpus;
}

const Adapter* Topology::find_adapter(std::string_view name) const {
  for (const auto& a : adapters)
    if (a.name == name) return &a;
  return nullptr;
}

const Adapter* Topology::find_rdma_adapter(std::string_view device, int port) const {
  for (const auto& a : adapters)
    if (a.rdma_port == port && a.rdma_device == device) return &a;
  return nullptr;
}

const PciController* Topology::find_controller(std::string_view name) const {
  for (const auto& c : controllers)
    if (c.name == name) return &c;
  return nullptr;
}

Topology read_topology(const std::string& root) {
  RootFs fs(root);
  Topology t;
  t.root = root;
  std::error_code ec;
  fs::directory_iterator probe(fs.real_path(fs.resolve("sys/class/net")), ec);
  if (ec)
    throw std::runtime_error("cannot list " + fs.real_path("sys/class/net").string() + ": " +
                             ec.message() + "; is sysfs mounted, or is --root a copied tree?");
  auto irq_names = read_irq_names(fs);
  for (const auto& name : fs.list("sys/class/net"))
    if (name.find('/') == std::string::npos && !name.starts_with("."))
      t.adapters.push_back(read_adapter(fs, name, irq_names));
  std::sort(t.adapters.begin(), t.adapters.end(), [](const Adapter& x, const Adapter& y) {
    return std::tie(x.ifindex, x.name) < std::tie(y.ifindex, y.name);
  });
  add_rdma_ports(root, t);
  read_nodes(fs, t);
  add_controllers(fs, t);
  return t;
}

nlohmann::json to_json(const Topology& t) {
  using nlohmann::json;
  auto opt_int = [](int v) { return v < 0 ? json(nullptr) : json(v); };
  auto opt_str = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  json adapters = json::array();
  for (const auto& a : t.adapters) {
    json irqs = json::array();
    for (const auto& irq : a.irqs)
      irqs.push_back({{"irq", irq.number},
                      {"name", irq.name},
                      {"effective_cpus", irq.effective_cpus},
                      {"data_queue", irq.data_queue}});
    adapters.push_back({{"name", a.name},
                        {"ifindex", a.ifindex},
                        {"type", to_string(a.type)},
                        {"kind", opt_str(a.kind)},
                        {"mtu", a.mtu},
                        {"speed_mbps", a.speed_mbps ? json(*a.speed_mbps) : json(nullptr)},
                        {"operstate", a.operstate},
                        {"up", a.up},
                        {"driver", opt_str(a.driver)},
                        {"pci_address", opt_str(a.pci_address)},
                        {"controller", opt_str(a.controller)},
                        {"root_port", opt_str(a.root_port)},
                        {"emulated", a.emulated},
                        {"numa_node", opt_int(a.numa_node)},
                        {"local_cpus", a.local_cpus},
                        {"irqs", irqs},
                        {"irq_cpus", a.irq_cpus()},
                        {"rdma_devices", a.rdma_devices},
                        {"rdma_device", opt_str(a.rdma_device)},
                        {"rdma_port", a.rdma_port > 0 ? json(a.rdma_port) : json(nullptr)}});
  }
  json controllers = json::array();
  for (const auto& c : t.controllers)
    controllers.push_back({{"name", c.name},
                           {"numa_node", opt_int(c.numa_node)},
                           {"local_cpus", c.local_cpus},
                           {"root_ports", c.root_ports},
                           {"adapters", c.adapters},
                           {"emulated", c.emulated}});
  json nodes = json::array();
  for (size_t n = 0; n < t.node_cpus.size(); ++n)
    nodes.push_back({{"node", n}, {"cpus", t.node_cpus[n]}});
  return {{"root", t.root},       {"numa_nodes", t.numa_nodes},
          {"nodes", nodes},       {"online_cpus", t.online_cpus},
          {"adapters", adapters}, {"controllers", controllers}};
}

std::string render_text(const Topology& t) {
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  auto node = [](int n) { return n < 0 ? std::string("-") : std::to_string(n); };
  std::string out = fmt::format(
      "{:<14} {:>4} {:<9} {:<8} {:>5} {:>7} {:<5} {:<11} {:<13} {:<11} "
      "{:<13} {:>4} {:<12} {:<9} {}\n",
      "ADAPTER", "IFX", "TYPE", "KIND", "MTU", "MBIT/S", "STATE", "DRIVER", "PCI", "CONTROLLER",
      "ROOT PORT", "NUMA", "IRQS", "IRQ CPUS", "RDMA");
  for (const auto& a : t.adapters) {
    std::vector<int> irq_numbers;
    for (const auto& irq : a.irqs)
      irq_numbers.push_back(irq.number);
    // The port that carries the adapter ("mlx5_0/1", as `rdma link` names it), else the devices.
    std::string rdma =
        a.rdma_device.empty() ? "" : a.rdma_device + "/" + std::to_string(a.rdma_port);
    for (const auto& r : a.rdma_devices)
      if (r != a.rdma_device) rdma += (rdma.empty() ? "" : ",") + r;
    out += fmt::format(
        "{:<14} {:>4} {:<9} {:<8} {:>5} {:>7} {:<5} {:<11} {:<13} {:<11} {:<13} {:>4} {:<12} "
        "{:<9} {}\n",
        a.name, a.ifindex, to_string(a.type), dash(a.kind), a.mtu,
        a.speed_mbps ? std::to_string(*a.speed_mbps) : "-", a.up ? "up" : "down", dash(a.driver),
        dash(a.pci_address), dash(a.controller), dash(a.root_port), node(a.numa_node),
        dash(format_cpu_list(irq_numbers)), dash(format_cpu_list(a.irq_cpus())), dash(rdma));
  }
  out += fmt::format("\n{:<14} {:>4} {:<12} {:<28} {}\n", "CONTROLLER", "NUMA", "LOCAL CPUS",
                     "ROOT PORTS", "ADAPTERS");
  for (const auto& c : t.controllers) {
    std::string ports, names;
    for (const auto& p : c.root_ports)
      ports += (ports.empty() ? "" : ",") + p;
    for (const auto& n : c.adapters)
      names += (names.empty() ? "" : ",") + n;
    out += fmt::format("{:<14} {:>4} {:<12} {:<28} {}{}\n", c.name, node(c.numa_node),
                       dash(format_cpu_list(c.local_cpus)), dash(ports), names,
                       c.emulated ? " (emulated)" : "");
  }
  out += fmt::format("\nNUMA nodes: {}; online CPUs: {}\n",
                     t.numa_nodes > 0 ? std::to_string(t.numa_nodes) : "unknown",
                     dash(format_cpu_list(t.online_cpus)));
  return out;
}

std::vector<InterfaceAddress> interface_addresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0)
    throw std::runtime_error(std::string("getifaddrs failed: ") + std::strerror(errno));
  std::vector<InterfaceAddress> out;
  auto prefix_of = [](const unsigned char* bytes, size_t n) {
    int bits = 0;
    for (size_t i = 0; i < n; ++i)
      bits += __builtin_popcount(bytes[i]);
    return bits;
  };
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr) continue;
    int family = it->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    InterfaceAddress entry;
    entry.interface = it->ifa_name;
    entry.family = family;
    char text[INET6_ADDRSTRLEN] = {};
    if (family == AF_INET) {
      auto* sin = reinterpret_cast<sockaddr_in*>(it->ifa_addr);
      ::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text);
      if (it->ifa_netmask)
        entry.prefix_length =
            prefix_of(reinterpret_cast<const unsigned char*>(
                          &reinterpret_cast<sockaddr_in*>(it->ifa_netmask)->sin_addr),
                      4);
    } else {
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(it->ifa_addr);
      ::inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof text);
      if (it->ifa_netmask)
        entry.prefix_length =
            prefix_of(reinterpret_cast<sockaddr_in6*>(it->ifa_netmask)->sin6_addr.s6_addr, 16);
    }
    entry.address = text;
    out.push_back(std::move(entry));
  }
  ::freeifaddrs(list);
  return out;
}

std::vector<std::pair<std::string, std::vector<int>>> adapter_irqs(const std::string& root) {
  std::vector<std::pair<std::string, std::vector<int>>> out;
  Topology topo;
  try {
    topo = read_topology(root);
  } catch (const std::exception&) {
    return out;  // no sysfs here: the rates are reported per CPU only
  }
  for (const Adapter& a : topo.adapters) {
    std::vector<int> irqs;
    for (const Irq& irq : a.irqs)
      if (irq.number >= 0) irqs.push_back(irq.number);
    out.emplace_back(a.name, std::move(irqs));
  }
  return out;
}

}  // namespace mtperf
