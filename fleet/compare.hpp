#pragma once
// Two fleet runs side by side, pair by pair: `mtperf compare before.json after.json` (the same
// transports in both; the ranks by position), or the transports of one run against its first
// (`mtperf compare fleet.json`). Each cell is B's figure over A's for the same ordered pair, so
// a driver change that slowed one link shows as one cell, not as a shift of the fleet's mean.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleet/model.hpp"
#include "fleet/render.hpp"

namespace mtperf::fleet {

struct RatioMatrix {
  std::string a, b;  // what is compared: "before.json socket", "uring"
  std::string figure;
  Matrix ratio;  // [src][dst]: B / A; absent where either was not measured
};

// Throws std::invalid_argument when the runs cannot be compared (other sizes, no transport in
// common, other workloads).
std::vector<RatioMatrix> compare_runs(const FleetDoc& a, const std::string& a_name,
                                      const FleetDoc& b, const std::string& b_name);
// Every transport of d against its first; throws when d has one transport only.
std::vector<RatioMatrix> compare_transports(const FleetDoc& d);

std::string ratios_text(const std::vector<RatioMatrix>& r);
nlohmann::json ratios_json(const std::vector<RatioMatrix>& r);

}  // namespace mtperf::fleet
