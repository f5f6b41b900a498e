#pragma once
// Patterns that follow the fleet's groups (fleet/groups.hpp: leaf switches, racks). Pure
// functions of each rank's group number; the pairs are ordered as in fleet/pattern.hpp, and
// both plans run each pair both ways (both_directions) with rounds disjoint.
//
// within-group: all pairs inside each group, the groups at once. Round r holds round r of the
//   circle method (fleet/pattern.hpp all_pairs) of every group with that many rounds. A group
//   of s ranks gives s(s-1) ordered pairs; groups of one rank none. Rounds: the largest group's
//   s-1 (s even) or s (s odd).
// across-groups: every rank meets one rank of every other group, both ways. The groups are
//   paired by the circle method; in its round t, groups a and b (ranks a[0..|a|-1] and
//   b[0..|b|-1] in rank order) run the pairs a[j mod |a|] <-> b[(j + t) mod |b|] for j = 0 ..
//   max(|a|,|b|)-1, so each rank of both meets one of the other, and the partners rotate from
//   one group pair to the next. Ordered pairs: 2 x the sum over the group pairs of
//   max(|a|,|b|); with G groups of s ranks, N(G-1) for N = Gs. The pairs of one group pair are
//   split into runs of min(|a|,|b|) consecutive j, each in its own round (disjoint).
// rail: --per-host N, N adapters per host (rank i of a host on its i-th adapter, its rail):
//   within-group over the rails, so adapter i of every host meets adapter i of every other.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/pattern.hpp"

namespace mtperf::fleet {

// A rank in no group (it never joined): left out of the group patterns.
inline constexpr uint32_t kNoGroup = UINT32_MAX;

// "within-group", "across-groups" or "rail".
bool is_group_pattern(std::string_view pattern);

// group[rank]: the rank's group number (0..G-1). Throw std::invalid_argument naming the
// pattern and what is wrong (no group with two ranks; fewer than two groups; more than
// kMaxRanks ranks).
Plan within_groups(const std::vector<uint32_t>& group, std::string_view name = "within-group");
Plan across_groups(const std::vector<uint32_t>& group);

// Each rank's rail: its place among the ranks of its host, in rank order (its local rank under
// every launcher, which --per-host's --bind follows). hosts[rank] "" (never joined): kNoGroup.
std::vector<uint32_t> rails_of(const std::vector<std::string>& hosts);

}  // namespace mtperf::fleet
