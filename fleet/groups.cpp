#include "fleet/groups.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "fleet/launcher.hpp"
#include "platform/exec.hpp"
#include "platform/text.hpp"

namespace mtperf::fleet {
namespace {

// scontrol's output: a site's switches and node names, far below this.
constexpr size_t kMaxScontrolOutput = size_t(16) << 20;
constexpr int kScontrolTimeoutMs = 10000;

std::string_view short_name(std::string_view host) {
  return host.substr(0, host.find('.'));
}

// The group of each rank from a host -> group map (names as the source wrote them), or throws
// naming the hosts of the fleet it lacks.
std::vector<std::string> groups_of_ranks(
    const std::unordered_map<std::string, std::string>& by_host,
    const std::vector<std::string>& hosts, const std::string& source) {
  std::vector<std::string> out(hosts.size());
  std::vector<std::string> missing;
  for (size_t r = 0; r < hosts.size(); ++r) {
    if (hosts[r].empty()) continue;  // never joined: no host to place
    auto it = by_host.find(hosts[r]);
    if (it == by_host.end()) it = by_host.find(std::string(short_name(hosts[r])));
    if (it != by_host.end()) {
      out[r] = it->second;
      continue;
    }
    if (std::find(missing.begin(), missing.end(), hosts[r]) == missing.end())
      missing.push_back(hosts[r]);
  }
  if (missing.empty()) return out;
  std::string list;
  for (size_t i = 0; i < missing.size() && i < 10; ++i)
    list += (i ? ", " : "") + missing[i];
  if (missing.size() > 10) list += " and " + std::to_string(missing.size() - 10) + " more";
  throw std::invalid_argument(source + ": no group for " + std::to_string(missing.size()) +
                              " host" + (missing.size() > 1 ? "s" : "") + " of the fleet: " + list);
}

// The fleet's host names and their short names: a file's other hosts are ignored.
std::unordered_set<std::string> fleet_names(const std::vector<std::string>& hosts) {
  std::unordered_set<std::string> names;
  for (const std::string& h : hosts) {
    names.insert(h);
    names.insert(std::string(short_name(h)));
  }
  return names;
}

void check_group_name(std::string_view group, const std::string& where) {
  if (group.size() > kMaxGroupName)
    throw std::invalid_argument(where + ": a group's name is at most " +
                                std::to_string(kMaxGroupName) + " bytes, this one " +
                                std::to_string(group.size()));
  for (char c : group)
    if (c < 0x21 || c > 0x7e)
      throw std::invalid_argument(where + ": the group's name has a byte outside visible ASCII");
}

}  // namespace

std::vector<std::string> parse_groups(std::string_view text, const std::vector<std::string>& hosts,
                                      std::string_view name) {
  if (text.size() > kMaxGroupsFileBytes)
    throw std::invalid_argument(std::string(name) + ": larger than " +
                                std::to_string(kMaxGroupsFileBytes) + " bytes");
  std::unordered_map<std::string, std::string> by_host;
  std::unordered_map<std::string, size_t> line_of;  // each host's line, for a duplicate's error
  const std::unordered_set<std::string> wanted = fleet_names(hosts);
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++line_no;
    const std::string where = std::string(name) + " line " + std::to_string(line_no);
    if (line.size() > kMaxGroupsLine)
      throw std::invalid_argument(where + ": longer than " + std::to_string(kMaxGroupsLine) +
                                  " bytes");
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const std::vector<std::string_view> words = split_words(line);
    if (words.empty()) continue;
    if (words.size() != 2)
      throw std::invalid_argument(where + ": expected 'HOST GROUP', got " +
                                  std::to_string(words.size()) + " words");
    check_group_name(words[1], where);
    const std::string host(words[0]);
    if (auto [it, fresh] = line_of.emplace(host, line_no); !fresh)
      throw std::invalid_argument(where + ": host " + host + " is already on line " +
                                  std::to_string(it->second));
    if (wanted.count(host)) by_host.emplace(host, std::string(words[1]));
  }
  return groups_of_ranks(by_host, hosts, std::string(name));
}

std::vector<std::string> parse_slurm_topology(std::string_view text,
                                              const std::vector<std::string>& hosts) {
  const std::string source = "Slurm's topology (scontrol show topology)";
  std::unordered_map<std::string, std::string> by_host;
  size_t leaves = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    std::map<std::string_view, std::string_view> fields;
    for (std::string_view word : split_words(line))
      if (const size_t eq = word.find('='); eq != std::string_view::npos)
        fields[word.substr(0, eq)] = word.substr(eq + 1);
    const auto sw = fields.find("SwitchName"), level = fields.find("Level");
    if (sw == fields.end() || level == fields.end() || level->second != "0") continue;
    ++leaves;
    const std::string where = source + ", switch " + std::string(sw->second);
    check_group_name(sw->second, where);
    const auto nodes = fields.find("Nodes");
    if (nodes == fields.end() || nodes->second.empty() || nodes->second == "(null)") continue;
    std::vector<std::string> names;
    try {
      names = expand_hostlist(nodes->second);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + ": " + e.what());
    }
    for (const std::string& node : names) {
      auto [it, fresh] = by_host.emplace(node, std::string(sw->second));
      if (!fresh && it->second != sw->second)
        throw std::invalid_argument(where + ": node " + node + " is under leaf switch " +
                                    it->second + " too");
    }
  }
  if (leaves == 0)
    throw std::invalid_argument(
        source +
        ": no leaf switch (Level=0); Slurm needs TopologyPlugin=topology/tree and a "
        "topology.conf naming each switch's nodes");
  return groups_of_ranks(by_host, hosts, source);
}

std::string read_slurm_topology() {
  if (find_program("scontrol").empty())
    throw std::runtime_error(
        "--groups slurm: scontrol is not installed on rank 0's host (Debian: slurm-client)");
  ExecOptions o;
  o.timeout_ms = kScontrolTimeoutMs;
  o.max_output = kMaxScontrolOutput;
  try {
    return run_checked({"scontrol", "show", "topology"}, o);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("--groups slurm: ") + e.what());
  }
}

std::string lldp_chassis(std::string_view json_text, std::string_view adapter) {
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw std::invalid_argument("lldpcli's output is not JSON");
  // {"lldp": {"interface": {"eth0": {...}}}}, or a list of such objects for several; a named
  // chassis is {"chassis": {"NAME": {"id": ...}}}, an unnamed one {"chassis": {"id": ...}}.
  const auto lldp = j.find("lldp");
  if (lldp == j.end() || !lldp->is_object() || !lldp->contains("interface")) return "";
  const nlohmann::json& interfaces = lldp->at("interface");
  std::vector<std::pair<std::string, std::string>> named;  // interface, chassis name
  auto take = [&](const nlohmann::json& object) {
    if (!object.is_object()) return;
    for (const auto& [name, port] : object.items()) {
      if (!port.is_object() || !port.contains("chassis") || !port["chassis"].is_object()) continue;
      const nlohmann::json& chassis = port["chassis"];
      if (chassis.size() != 1 || chassis.contains("id")) continue;
      const auto only = chassis.begin();
      if (only.value().is_object()) named.emplace_back(name, only.key());
    }
  };
  if (interfaces.is_array())
    for (const nlohmann::json& one : interfaces)
      take(one);
  else
    take(interfaces);
  for (const auto& [port, chassis] : named)
    if (port == adapter) return chassis;
  return named.size() == 1 ? named.front().second : "";
}

std::string read_lldp_chassis(const std::string& adapter) {
  if (find_program("lldpcli").empty())
    throw std::runtime_error("--groups lldp: lldpcli is not installed here (Debian: lldpd)");
  ExecOptions o;
  o.timeout_ms = 5000;
  o.max_output = kMaxScontrolOutput;
  try {
    const std::string chassis =
        lldp_chassis(run_checked({"lldpcli", "-f", "json", "show", "neighbors"}, o), adapter);
    if (chassis.size() > kMaxGroupName) return chassis.substr(0, kMaxGroupName);
    return chassis;
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--groups lldp: ") + e.what());
  }
}

std::vector<std::string> resolve_groups(const GroupsSource& s,
                                        const std::vector<std::string>& hosts,
                                        const std::vector<std::string>& declared) {
  if (s.from == "lldp") {
    // Each rank its own: the ranks of one host (--per-host) may be cabled to different switches.
    std::vector<std::string> out(hosts.size());
    std::vector<std::string> missing;
    for (size_t r = 0; r < hosts.size(); ++r) {
      if (hosts[r].empty()) continue;
      const std::string mine = r < declared.size() ? declared[r] : "";
      if (!mine.empty()) check_group_name(mine, "--groups lldp: rank " + std::to_string(r));
      if (mine.empty()) missing.push_back(hosts[r] + " (rank " + std::to_string(r) + ")");
      out[r] = mine;
    }
    if (!missing.empty())
      throw std::invalid_argument(
          "--groups lldp: no LLDP neighbour's name from " + std::to_string(missing.size()) +
          " rank(s): " + missing.front() + (missing.size() > 1 ? " and others" : "") +
          " (is lldpd running there, and its switch sending LLDP? see that rank's message, or "
          "`lldpcli show neighbors` on it)");
    return out;
  }
  if (s.from == "slurm") return parse_slurm_topology(s.text, hosts);
  if (s.from == "file") return parse_groups(s.text, hosts, s.name);
  return {};
}

GroupIndex index_groups(const std::vector<std::string>& group_of_rank) {
  GroupIndex g;
  std::unordered_map<std::string, uint32_t> number;
  g.of.reserve(group_of_rank.size());
  for (const std::string& name : group_of_rank) {
    if (name.empty()) {
      g.of.push_back(UINT32_MAX);
      continue;
    }
    auto [it, fresh] = number.emplace(name, uint32_t(g.names.size()));
    if (fresh) g.names.push_back(name);
    g.of.push_back(it->second);
  }
  return g;
}

}  // namespace mtperf::fleet
