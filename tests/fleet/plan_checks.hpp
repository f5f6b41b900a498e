#pragma once
// What the plan tests ask of a plan: its ordered pairs and whether its rounds are disjoint.
#include <cstdint>
#include <set>
#include <utility>

#include "fleet/pattern.hpp"

namespace mtperf::fleet::testing {

// Every ordered pair the plan runs, reversed ones included, with multiplicity.
inline std::multiset<std::pair<uint32_t, uint32_t>> ordered(const Plan& p) {
  std::multiset<std::pair<uint32_t, uint32_t>> out;
  for (const Round& r : p.rounds)
    for (const Pair& x : r.pairs) {
      out.insert({x.src, x.dst});
      if (p.both_directions) out.insert({x.dst, x.src});
    }
  return out;
}

// No rank twice in one round.
inline bool rounds_disjoint(const Plan& p) {
  for (const Round& r : p.rounds) {
    std::set<uint32_t> seen;
    for (const Pair& x : r.pairs)
      if (!seen.insert(x.src).second || !seen.insert(x.dst).second) return false;
  }
  return true;
}

}  // namespace mtperf::fleet::testing
