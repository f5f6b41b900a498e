#include "fleet/retest.hpp"

#include <set>
#include <string>

namespace mtperf::fleet {

std::vector<RetestStep> retest_steps(const FleetDoc& d, const std::vector<size_t>& failing) {
  auto host = [&](uint32_t rank) {
    return rank < d.roster.size() && !d.roster[rank].host.empty() ? "h:" + d.roster[rank].host
                                                                  : "r:" + std::to_string(rank);
  };
  std::vector<RetestStep> steps;
  std::vector<std::set<std::string>> busy;  // hosts of each step
  for (size_t i : failing) {
    if (i >= d.results.size()) continue;
    const PairResult& r = d.results[i];
    const std::string a = host(r.pair.src), b = host(r.pair.dst);
    size_t s = 0;
    for (; s < steps.size(); ++s)
      if (steps[s].transport == r.transport && !busy[s].count(a) && !busy[s].count(b)) break;
    if (s == steps.size()) {
      steps.push_back({r.transport, {}});
      busy.emplace_back();
    }
    steps[s].results.push_back(i);
    busy[s].insert(a);
    busy[s].insert(b);
  }
  return steps;
}

}  // namespace mtperf::fleet
