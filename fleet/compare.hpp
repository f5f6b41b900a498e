#pragma once
// Two fleet runs side by side, pair by pair: `mtperf compare before.json after.json` (the
// transports both have; the ranks paired by host and adapter, so two runs launched in another
// order compare the same links), or the transports of one run against its first
// (`mtperf compare fleet.json`). Each cell is B's figure over A's for the same ordered pair, so
// a driver change that slowed one link shows as one cell, not as a shift of the fleet's mean.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleet/model.hpp"
#include "fleet/render.hpp"

namespace mtperf::fleet {

struct RatioMatrix {
  std::string a, b;  // what is compared: "before.json socket", "uring"
  std::string figure;
  Matrix ratio;  // [src][dst] by A's ranks: B / A; absent where either was not measured
  // compare_runs: B's rank of each of A's ranks (absent: its host and adapter are not in B).
  std::vector<std::optional<uint32_t>> b_rank;
};

// Each of `from`'s ranks' rank in `to`: the rank of the same host and adapter (the k-th of
// several ranks with both the same is the k-th there, by rank); absent when `to` has none.
std::vector<std::optional<uint32_t>> ranks_by_host(const FleetDoc& from, const FleetDoc& to);

// Throws std::invalid_argument when the runs cannot be compared (no host in common, no transport
// in common, other workloads).
std::vector<RatioMatrix> compare_runs(const FleetDoc& a, const std::string& a_name,
                                      const FleetDoc& b, const std::string& b_name);
// Every transport of d against its first; throws when d has one transport only.
std::vector<RatioMatrix> compare_transports(const FleetDoc& d);

// The pairs that moved: ratio below 1 - kMoved or above 1 + kMoved, the farthest first.
inline constexpr double kMoved = 0.1;
struct MovedPair {
  uint32_t src = 0, dst = 0;  // A's ranks
  double ratio = 0;
};
std::vector<MovedPair> moved_pairs(const RatioMatrix& m);

std::string ratios_text(const std::vector<RatioMatrix>& r);
nlohmann::json ratios_json(const std::vector<RatioMatrix>& r);

}  // namespace mtperf::fleet
