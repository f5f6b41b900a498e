#include "platform/netdev_stats.hpp"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <set>
#include <system_error>

#include "platform/root_fs.hpp"
#include "platform/topology.hpp"

namespace mtperf {

namespace {

// A driver listing more statistics than this is not believed (the kernel copies as many as the
// driver says, so the buffer must hold them all); mlx5 lists about 1,500 with every queue.
constexpr size_t kMaxDriverStats = 16384;

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNetdevName || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || c == ':' || static_cast<unsigned char>(c) <= ' ' ||
           static_cast<unsigned char>(c) >= 0x7f;
  });
}

std::optional<uint64_t> to_count(std::string_view text) {
  auto n = to_number(text);
  if (!n || *n < 0) return std::nullopt;
  return static_cast<uint64_t>(*n);
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size() && out.size() <= kMaxTcpCounters) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
      ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t')
      ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t start = 0; start < text.size();) {
    size_t end = std::min(text.find('\n', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The thread's network namespace is the process's: sysfs (mounted for the process) shows its
// devices. A thread that entered a testbed namespace (setns) sees another set through
// /proc/thread-self/net only.
bool sysfs_is_ours(const RootFs& fs) {
  if (!fs.is_live()) return true;
  std::error_code e1, e2;
  auto mine = std::filesystem::read_symlink("/proc/thread-self/ns/net", e1);
  auto process = std::filesystem::read_symlink("/proc/self/ns/net", e2);
  return !e1 && !e2 && mine == process;
}

void read_sysfs_stats(const RootFs& fs, const std::string& device,
                      std::map<std::string, uint64_t>& out) {
  std::string dir = fs.resolve("sys/class/net/" + device + "/statistics");
  if (dir.empty()) return;
  for (const auto& name : fs.list(dir)) {
    if (out.size() >= kMaxNetdevCounters) return;
    if (name.empty() || name.size() > kMaxNetdevCounterName) continue;
    if (auto v = to_count(fs.read_resolved(dir + "/" + name))) out.emplace(name, *v);
  }
}

struct Socket {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

bool ethtool(int fd, const std::string& device, void* data) {
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, device.data(), std::min(device.size(), size_t(IFNAMSIZ - 1)));
  ifr.ifr_data = static_cast<char*>(data);
  return ::ioctl(fd, SIOCETHTOOL, &ifr) == 0;
}

// The driver's statistics (`ethtool -S`), in the calling thread's network namespace.
void read_driver_stats(const std::string& device, std::map<std::string, uint64_t>& out) {
  Socket s;
  if (s.fd < 0) return;
  // ethtool_sset_info and the one count it answers for one set, as a plain buffer.
  alignas(ethtool_sset_info) uint8_t buf[sizeof(ethtool_sset_info) + sizeof(uint32_t)] = {};
  auto* info = reinterpret_cast<ethtool_sset_info*>(buf);
  info->cmd = ETHTOOL_GSSET_INFO;
  info->sset_mask = 1ULL << ETH_SS_STATS;
  if (!ethtool(s.fd, device, info) || !(info->sset_mask & (1ULL << ETH_SS_STATS))) return;
  uint32_t count;
  std::memcpy(&count, buf + sizeof(ethtool_sset_info), sizeof count);
  size_t n = count;
  if (n == 0 || n > kMaxDriverStats) return;
  // Room for a few more than counted, should the driver add some between the calls.
  size_t room = n + 64;
  std::vector<uint8_t> strings(sizeof(ethtool_gstrings) + room * ETH_GSTRING_LEN);
  auto* gs = reinterpret_cast<ethtool_gstrings*>(strings.data());
  gs->cmd = ETHTOOL_GSTRINGS;
  gs->string_set = ETH_SS_STATS;
  gs->len = static_cast<uint32_t>(n);
  if (!ethtool(s.fd, device, gs) || gs->len != n) return;
  std::vector<uint8_t> values(sizeof(ethtool_stats) + room * sizeof(uint64_t));
  auto* st = reinterpret_cast<ethtool_stats*>(values.data());
  st->cmd = ETHTOOL_GSTATS;
  st->n_stats = static_cast<uint32_t>(n);
  if (!ethtool(s.fd, device, st) || st->n_stats != n) return;
  auto names = parse_ethtool_strings(reinterpret_cast<const char*>(gs->data), n * ETH_GSTRING_LEN,
                                     n, ETH_GSTRING_LEN);
  for (size_t i = 0; i < names.size(); ++i) {
    uint64_t v;
    std::memcpy(&v, values.data() + sizeof(ethtool_stats) + i * sizeof(uint64_t), sizeof v);
    out.emplace(names[i], v);  // a repeated name keeps its first value
  }
}

NetdevCounters read_device(const RootFs& fs, const std::string& device, bool sysfs,
                           const std::string& proc_net) {
  NetdevCounters c;
  c.device = device;
  if (sysfs) read_sysfs_stats(fs, device, c.stats);
  if (c.stats.empty()) c.stats = parse_proc_net_dev(fs.read(proc_net + "/dev"), device);
  if (fs.is_live()) read_driver_stats(device, c.driver);
  return c;
}

std::map<std::string, uint64_t> delta(const std::map<std::string, uint64_t>& before,
                                      const std::map<std::string, uint64_t>& after) {
  std::map<std::string, uint64_t> out;
  for (const auto& [name, value] : after) {
    auto old = before.find(name);
    if (old != before.end() && value >= old->second) out.emplace(name, value - old->second);
  }
  return out;
}

}  // namespace

void parse_snmp_section(std::string_view text, std::string_view prefix,
                        std::string_view name_prefix, std::map<std::string, uint64_t>& out) {
  auto all = lines(text);
  for (size_t i = 0; i + 1 < all.size(); ++i) {
    if (all[i].substr(0, prefix.size()) != prefix || all[i + 1].substr(0, prefix.size()) != prefix)
      continue;
    auto names = words(all[i].substr(prefix.size()));
    auto values = words(all[i + 1].substr(prefix.size()));
    for (size_t k = 0; k < names.size() && k < values.size(); ++k) {
      if (out.size() >= kMaxTcpCounters) return;
      if (names[k].size() + name_prefix.size() > kMaxNetdevCounterName) continue;
      // MaxConn is -1 ("no limit"): not a count, left out.
      if (auto v = to_count(values[k]))
        out.emplace(std::string(name_prefix) + std::string(names[k]), *v);
    }
    return;
  }
}

std::map<std::string, uint64_t> parse_proc_net_dev(std::string_view text, std::string_view device) {
  static const char* const kNames[] = {
      "rx_bytes",       "rx_packets",      "rx_errors",         "rx_dropped",
      "rx_fifo_errors", "rx_frame_errors", "rx_compressed",     "multicast",
      "tx_bytes",       "tx_packets",      "tx_errors",         "tx_dropped",
      "tx_fifo_errors", "collisions",      "tx_carrier_errors", "tx_compressed"};
  std::map<std::string, uint64_t> out;
  for (auto line : lines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto name = line.substr(0, colon);
    while (!name.empty() && name.front() == ' ')
      name.remove_prefix(1);
    if (name != device) continue;
    auto values = words(line.substr(colon + 1));
    for (size_t k = 0; k < values.size() && k < std::size(kNames); ++k)
      if (auto v = to_count(values[k])) out.emplace(kNames[k], *v);
    return out;
  }
  return out;
}

std::vector<std::string> parse_ethtool_strings(const char* data, size_t size, size_t count,
                                               size_t stride) {
  std::vector<std::string> out;
  if (stride == 0) return out;
  count = std::min({count, size / stride, kMaxNetdevCounters});
  for (size_t i = 0; i < count; ++i) {
    const char* s = data + i * stride;
    size_t len = std::min(::strnlen(s, stride), kMaxNetdevCounterName);
    std::string name(s, len);
    bool printable = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return static_cast<unsigned char>(c) > ' ' && static_cast<unsigned char>(c) < 0x7f;
    });
    out.push_back(printable ? name : "?" + std::to_string(i));
  }
  return out;
}

bool is_netdev_error_counter(std::string_view name) {
  static const std::set<std::string_view> kWords = {
      "err",     "errs",     "error",   "errors",     "drop",    "drops",    "dropped",
      "discard", "discards", "miss",    "missed",     "overrun", "overruns", "crc",
      "fifo",    "frame",    "carrier", "collisions", "timeout", "aborted",  "heartbeat"};
  for (size_t start = 0; start <= name.size();) {
    size_t end = std::min(name.find_first_of("_.", start), name.size());
    if (kWords.count(name.substr(start, end - start))) return true;
    start = end + 1;
  }
  return false;
}

NetWitness read_net_witness(const std::vector<std::string>& devices, const std::string& root) {
  NetWitness w;
  try {
    RootFs fs(root);
    bool sysfs = sysfs_is_ours(fs);
    std::string proc_net = fs.is_live() ? "proc/thread-self/net" : "proc/net";
    for (const auto& d : devices) {
      if (w.devices.size() >= kMaxNetdevs) break;
      if (!valid_name(d)) continue;
      w.devices.push_back(read_device(fs, d, sysfs, proc_net));
    }
    parse_snmp_section(fs.read(proc_net + "/snmp"), "Tcp:", "", w.tcp);
    parse_snmp_section(fs.read(proc_net + "/netstat"), "TcpExt:", "TcpExt.", w.tcp);
  } catch (const std::exception&) {
    // Out of memory or a filesystem error: what was read so far stands.
  }
  return w;
}

NetWitness net_witness_delta(const NetWitness& before, const NetWitness& after) {
  NetWitness out;
  for (const auto& a : after.devices) {
    auto b = std::find_if(before.devices.begin(), before.devices.end(),
                          [&](const NetdevCounters& x) { return x.device == a.device; });
    if (b == before.devices.end()) continue;
    out.devices.push_back({a.device, delta(b->stats, a.stats), delta(b->driver, a.driver)});
  }
  out.tcp = delta(before.tcp, after.tcp);
  return out;
}

std::vector<std::string> netdevs_of_addresses(const std::vector<std::string>& addresses) {
  std::vector<std::string> out;
  std::vector<InterfaceAddress> held;
  try {
    held = interface_addresses();
  } catch (const std::exception&) {
  }
  auto add = [&](const std::string& name) {
    if (out.size() < kMaxNetdevs && std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(name);
  };
  for (auto a : addresses) {
    if (a.rfind("::ffff:", 0) == 0 && a.find('.') != std::string::npos) a = a.substr(7);
    auto it = std::find_if(held.begin(), held.end(),
                           [&](const InterfaceAddress& h) { return h.address == a; });
    if (it != held.end())
      add(it->interface);
    else if (a.rfind("127.", 0) == 0 || a == "::1" || a == "::ffff:127.0.0.1")
      add("lo");
  }
  return out;
}

}  // namespace mtperf
