#include "platform/netns.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "platform/exec.hpp"
#include "platform/number.hpp"

#include "platform/read_file.hpp"
#include "platform/shape.hpp"

namespace mtperf {
namespace fs = std::filesystem;

namespace {

constexpr const char* kNetnsDir = "/run/netns";
constexpr uint64_t kMinRate = 8'000, kMaxRate = 400'000'000'000;

std::string next_tag() {
  static std::atomic<int> sequence{0};
  return std::to_string(sequence.fetch_add(1));
}

void ip_in(const std::string& ns, std::vector<std::string> args) {
  args.insert(args.begin(), {"ip", "-n", ns});
  run_checked(args);
}

// tbf needs a bucket of at least one packet, and enough for the kernel's timer granularity at
// high rates; 4 ms of traffic covers both without adding much queueing delay.
uint64_t tbf_burst_bytes(uint64_t rate_bps, int mtu) {
  uint64_t packet = static_cast<uint64_t>(mtu > 0 ? mtu : 1500) + 64;
  return std::max<uint64_t>({rate_bps / 8 / 250, 2 * packet, 3200});
}

}  // namespace

uint64_t parse_rate(const std::string& text) {
  // tc's spelling, in either case: an optional k/m/g/t (powers of 1000), then an optional "bit".
  static constexpr NumberUnit kTcUnits[] = {
      {"k", 1e3},    {"m", 1e6},    {"g", 1e9},    {"t", 1e12},    {"bit", 1},
      {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}, {"tbit", 1e12},
  };
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  std::optional<double> parsed = parse_scaled(lower, kTcUnits);
  if (!parsed)
    throw std::invalid_argument("rate '" + text +
                                "': expected bits/s such as 155.52mbit, 1g or 622080000");
  double value = *parsed;
  if (value < static_cast<double>(kMinRate) || value > static_cast<double>(kMaxRate))
    throw std::invalid_argument(
        fmt::format("rate '{}' is out of range: {} bit/s .. {} bit/s", text, kMinRate, kMaxRate));
  return static_cast<uint64_t>(std::llround(value));
}

Testbed::Testbed(const TestbedOptions& options) : options_(options) {
  if (options_.adapters < 1 || options_.adapters > kMaxTestbedAdapters)
    throw std::runtime_error(fmt::format("testbed: adapters must be 1..{}, got {}",
                                         kMaxTestbedAdapters, options_.adapters));
  if (options_.mtu != 0 && (options_.mtu < 68 || options_.mtu > 65535))
    throw std::runtime_error(fmt::format("testbed: MTU must be 68..65535, got {}", options_.mtu));
  if (options_.rate_bps != 0 && (options_.rate_bps < kMinRate || options_.rate_bps > kMaxRate))
    throw std::runtime_error(fmt::format("testbed: rate must be {}..{} bit/s", kMinRate, kMaxRate));
  if (!options_.tag.empty()) check_testbed_name(options_.tag);
  // The namespaces go with hosts_ (also when build() throws half-way), and the veths with them.
  build(options_.tag.empty() ? next_tag() : options_.tag);
}

Testbed::~Testbed() = default;

void Testbed::build(const std::string& tag) {
  hosts_ = std::make_unique<NetnsPair>(tag, options_.lasting);
  const std::string& near = hosts_->near_ns();
  const std::string& far = hosts_->far_ns();
  for (int i = 0; i < options_.adapters; ++i) {
    TestbedLink link;
    link.index = i;
    link.near_if = fmt::format("mtperf{}n", i);
    link.far_if = fmt::format("mtperf{}f", i);
    link.near_addr = fmt::format("10.231.{}.1", i);
    link.far_addr = fmt::format("10.231.{}.2", i);
    link.subnet = fmt::format("10.231.{}.0/24", i);
    // Both ends are born inside the namespaces: the caller's namespace never sees them.
    ip_in(near,
          {"link", "add", link.near_if, "type", "veth", "peer", "name", link.far_if, "netns", far});
    const std::pair<const std::string*, std::pair<std::string, std::string>> ends[] = {
        {&near, {link.near_if, link.near_addr}}, {&far, {link.far_if, link.far_addr}}};
    for (const auto& [ns, end] : ends) {
      const auto& [ifname, addr] = end;
      if (options_.mtu != 0)
        ip_in(*ns, {"link", "set", "dev", ifname, "mtu", std::to_string(options_.mtu)});
      ip_in(*ns, {"addr", "add", addr + "/24", "dev", ifname});
      ip_in(*ns, {"link", "set", "dev", ifname, "up"});
      if (options_.rate_bps != 0)
        run_checked({"tc", "-n", *ns, "qdisc", "add", "dev", ifname, "root", "tbf", "rate",
                     std::to_string(options_.rate_bps) + "bit", "burst",
                     std::to_string(tbf_burst_bytes(options_.rate_bps, options_.mtu)), "latency",
                     "50ms"});
    }
    links_.push_back(std::move(link));
  }
}

nlohmann::json links_to_json(const std::vector<TestbedLink>& links) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& l : links) {
    nlohmann::json j = {{"index", l.index},       {"near_if", l.near_if},
                        {"far_if", l.far_if},     {"near_addr", l.near_addr},
                        {"far_addr", l.far_addr}, {"prefix_length", l.prefix_length},
                        {"subnet", l.subnet}};
    if (!l.controller.empty()) j["controller"] = l.controller;
    if (!l.cpus.empty()) j["cpus"] = l.cpus;
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json Testbed::state() const {
  return {{"version", 1},
          {"kind", "veth"},
          {"near_ns", near_ns()},
          {"far_ns", far_ns()},
          {"namespaces", hosts_->created()},
          {"mtu", options_.mtu},
          {"rate_bps", options_.rate_bps},
          {"links", links_to_json(links_)}};
}

TestHosts hosts_from_state(const nlohmann::json& state) {
  auto text = [](const nlohmann::json& j, const char* field) {
    auto it = j.find(field);
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty())
      throw std::invalid_argument(std::string("testbed state: '") + field +
                                  "' is missing or not a string");
    return it->get<std::string>();
  };
  if (!state.is_object()) throw std::invalid_argument("testbed state: not a JSON object");
  TestHosts hosts;
  hosts.kind = state.value("kind", "veth");
  hosts.near_ns = text(state, "near_ns");
  hosts.far_ns = text(state, "far_ns");
  auto links = state.find("links");
  if (links == state.end() || !links->is_array() || links->empty())
    throw std::invalid_argument("testbed state: 'links' is missing or empty");
  for (const auto& j : *links) {
    if (!j.is_object()) throw std::invalid_argument("testbed state: a link is not an object");
    TestbedLink l;
    l.index = j.value("index", int(hosts.links.size()));
    l.near_if = text(j, "near_if");
    l.far_if = text(j, "far_if");
    l.near_addr = text(j, "near_addr");
    l.far_addr = text(j, "far_addr");
    l.prefix_length = j.value("prefix_length", 24);
    l.subnet = j.value("subnet", "");
    l.controller = j.value("controller", "");
    if (auto c = j.find("cpus"); c != j.end() && c->is_array()) l.cpus = c->get<std::vector<int>>();
    hosts.links.push_back(std::move(l));
  }
  return hosts;
}

void enter_netns(const std::string& ns) {
  std::string path = std::string(kNetnsDir) + "/" + ns;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error("cannot open network namespace " + path + ": " + std::strerror(errno));
  int rc = ::setns(fd, CLONE_NEWNET);
  int saved = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error("setns into " + path + " failed: " + std::strerror(saved));
}

void run_in(const std::string& ns, const std::function<void()>& fn) {
  std::exception_ptr error;
  // A fresh thread, because setns changes the namespace of the calling thread only and a pooled
  // or the caller's thread must not be left in the wrong namespace.
  std::thread worker([&] {
    try {
      enter_netns(ns);
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
}

int exec_in(const std::string& ns, const std::vector<std::string>& argv) {
  ExecOptions options;
  options.netns = ns;
  options.capture = false;
  return run_program(argv, options).exit_code;
}

bool can_create_namespaces(std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (::geteuid() != 0) return fail("network namespaces need root (effective uid is not 0)");
  if (find_program("ip").empty()) return fail("the ip command (iproute2) is not installed");
  int unshare_errno = 0;
  // On a thread of its own: unshare moves only that thread, which then ends.
  std::thread probe([&] {
    if (::unshare(CLONE_NEWNET) != 0) unshare_errno = errno;
  });
  probe.join();
  if (unshare_errno != 0)
    return fail(std::string("unshare(CLONE_NEWNET) failed: ") + std::strerror(unshare_errno) +
                " (a container without CAP_SYS_ADMIN, or namespaces disabled)");
  return true;
}

std::vector<std::string> list_namespaces(const std::string& prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(kNetnsDir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.starts_with(prefix)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> remove_testbed(const nlohmann::json& state) {
  std::vector<std::string> removed;
  if (!state.contains("namespaces") || !state["namespaces"].is_array()) return removed;
  for (const auto& item : state["namespaces"]) {
    if (!item.is_string()) continue;
    std::string ns = item.get<std::string>();
    // Only what this code names: a damaged state file must not delete someone else's namespace.
    if (!ns.starts_with(kTestbedPrefix) || ns.find('/') != std::string::npos) continue;
    if (!fs::exists(fs::path(kNetnsDir) / ns)) continue;
    run_checked({"ip", "netns", "del", ns});
    removed.push_back(ns);
  }
  return removed;
}

std::map<std::string, LinkCounters> parse_net_dev(const std::string& text) {
  // Two header lines, then "  name: rx_bytes rx_packets errs drop fifo frame compressed
  // multicast tx_bytes tx_packets ...".
  std::map<std::string, LinkCounters> out;
  std::istringstream lines(text);
  std::string line;
  for (int n = 0; std::getline(lines, line); ++n) {
    size_t colon = line.find(':');
    if (n < 2 || line.find_first_not_of(' ') == std::string::npos) continue;
    if (colon == std::string::npos) throw std::runtime_error("net/dev: bad line '" + line + "'");
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    std::istringstream fields(line.substr(colon + 1));
    uint64_t v[10];
    for (auto& x : v)
      if (!(fields >> x)) throw std::runtime_error("net/dev: bad counters for " + name);
    out[name] = {v[0], v[1], v[8], v[9]};
  }
  return out;
}

std::map<std::string, LinkCounters> link_counters() {
  return parse_net_dev(read_file("/proc/thread-self/net/dev"));
}

void check_testbed_name(const std::string& name) {
  if (!shape::plain_name(name, 32))
    throw std::invalid_argument("testbed name '" + name +
                                "': use 1-32 characters from a-z, 0-9, '_' and '-'");
}

std::string testbed_state_path(const std::string& name, const std::string& dir) {
  check_testbed_name(name);
  return dir + "/testbed-" + name + ".json";
}

void write_testbed_state(const std::string& name, const nlohmann::json& state,
                         const std::string& dir) {
  std::string path = testbed_state_path(name, dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir + ": " + ec.message());
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << state.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  fs::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + ec.message());
}

nlohmann::json read_testbed_state(const std::string& name, const std::string& dir) {
  std::string path = testbed_state_path(name, dir);
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("no testbed '" + name + "': " + path +
                             " does not exist (see `mtperf testbed status`)");
  nlohmann::json state = nlohmann::json::parse(in, nullptr, false);
  if (state.is_discarded() || !state.is_object())
    throw std::runtime_error(path + " is not a testbed state file; remove it by hand");
  return state;
}

std::vector<std::string> list_testbed_states(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string file = it->path().filename().string();  // testbed-NAME.json
    std::string_view name(file);
    if (!name.starts_with("testbed-") || !name.ends_with(".json")) continue;
    name = name.substr(8, name.size() - 8 - 5);
    if (shape::plain_name(name, 32)) names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace mtperf
