#pragma once
// --retest N: the pairs that fail a check run again, in parallel, up to N times. Each retest
// pass groups the failing pairs into steps of disjoint pairs: one transport a step, and no host
// in two pairs of a step (two ranks of one host share its adapters and CPUs, so a retest that
// put them side by side would measure the contention it means to rule out).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fleet/model.hpp"

namespace mtperf::fleet {

inline constexpr uint32_t kMaxRetests = 10;

struct RetestStep {
  uint32_t transport = 0;
  std::vector<size_t> results;  // indexes into FleetDoc::results, disjoint by host
};

// The steps that retest `failing` (indexes into d.results; those out of range are ignored):
// first fit, in the order given, so the fewest steps a greedy packing finds; a rank's host is
// its roster host name, else the rank itself.
std::vector<RetestStep> retest_steps(const FleetDoc& d, const std::vector<size_t>& failing);

}  // namespace mtperf::fleet
