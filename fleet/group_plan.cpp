#include "fleet/group_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace mtperf::fleet {
namespace {

[[noreturn]] void bad(std::string_view pattern, const std::string& why) {
  throw std::invalid_argument("pattern " + std::string(pattern) + ": " + why);
}

// The ranks of each group, in rank order.
std::vector<std::vector<uint32_t>> members(const std::vector<uint32_t>& group,
                                           std::string_view pattern) {
  if (group.size() > kMaxRanks)
    bad(pattern, std::to_string(group.size()) + " ranks, at most " + std::to_string(kMaxRanks));
  std::vector<std::vector<uint32_t>> out;
  for (uint32_t r = 0; r < group.size(); ++r) {
    if (group[r] == kNoGroup) continue;
    if (group[r] >= group.size())
      bad(pattern, "rank " + std::to_string(r) + "'s group is out of range");
    if (group[r] >= out.size()) out.resize(group[r] + 1);
    out[group[r]].push_back(r);
  }
  return out;
}

Pair ordered(uint32_t a, uint32_t b) {
  return {std::min(a, b), std::max(a, b)};
}

}  // namespace

bool is_group_pattern(std::string_view pattern) {
  return pattern == "within-group" || pattern == "across-groups" || pattern == "rail";
}

Plan within_groups(const std::vector<uint32_t>& group, std::string_view name) {
  const auto groups = members(group, name);
  Plan p{std::string(name), true, true, {}};
  for (const auto& m : groups) {
    if (m.size() < 2) continue;
    const Plan inside = all_pairs(uint32_t(m.size()));
    if (p.rounds.size() < inside.rounds.size()) p.rounds.resize(inside.rounds.size());
    for (size_t r = 0; r < inside.rounds.size(); ++r)
      for (const Pair& x : inside.rounds[r].pairs)
        p.rounds[r].pairs.push_back(ordered(m[x.src], m[x.dst]));
  }
  if (p.rounds.empty()) bad(name, "no group has two ranks: no pair within a group");
  return p;
}

Plan across_groups(const std::vector<uint32_t>& group) {
  const std::string_view name = "across-groups";
  const auto groups = members(group, name);
  size_t live = 0;
  for (const auto& m : groups)
    live += !m.empty();
  if (live < 2)
    bad(name, "needs at least 2 groups, the fleet's ranks are in " + std::to_string(live));
  Plan p{std::string(name), true, true, {}};
  const Plan meetings = all_pairs(uint32_t(groups.size()));
  for (size_t t = 0; t < meetings.rounds.size(); ++t) {
    const size_t first = p.rounds.size();
    for (const Pair& g : meetings.rounds[t].pairs) {
      const auto& a = groups[g.src];
      const auto& b = groups[g.dst];
      if (a.empty() || b.empty()) continue;
      const size_t most = std::max(a.size(), b.size()), run = std::min(a.size(), b.size());
      for (size_t j = 0; j < most; ++j) {
        const size_t at = first + j / run;
        if (p.rounds.size() <= at) p.rounds.resize(at + 1);
        p.rounds[at].pairs.push_back(ordered(a[j % a.size()], b[(j + t) % b.size()]));
      }
    }
  }
  return p;
}

std::vector<uint32_t> rails_of(const std::vector<std::string>& hosts) {
  std::unordered_map<std::string, uint32_t> seen;
  std::vector<uint32_t> out;
  out.reserve(hosts.size());
  for (const std::string& h : hosts)
    out.push_back(h.empty() ? kNoGroup : seen[h]++);
  return out;
}

}  // namespace mtperf::fleet
