#pragma once
// Fleet verdicts: `--check 'pair.throughput>=0.93*max,pair.p99<=2.1*min,pair.throughput>=9G'`,
// in the grammar of every --check (platform/check_grammar.hpp) with the pairs' references. Each
// check is judged on every pair of every transport; a relative bound (F*max, F*min, F*median)
// is taken over that transport's measured pairs; F*line is the pair's own line (fleet/line.hpp),
// and a pair without one fails the check, named. A pair that failed to run fails every check.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/model.hpp"
#include "platform/check_grammar.hpp"

namespace mtperf::fleet {

struct FleetCheck {
  std::string text;  // as given
  std::string
      figure;  // throughput | throughput_c2s | throughput_s2c | transaction_rate | p50 | p99
  CheckOp op = CheckOp::ge;
  double factor = 1;  // bound = factor * ref, or the value when ref is empty
  std::string ref;    // "max" | "min" | "median" | "line" | "baseline" | ""
};

// Throws std::invalid_argument naming the check and what is wrong with it.
std::vector<FleetCheck> parse_fleet_checks(std::string_view list);

// A pair's figure by name (throughput in bits/s, latencies in us); absent when not measured.
std::optional<double> pair_figure(const PairResult& r, std::string_view figure);

struct PairVerdict {
  size_t result = 0;  // index into FleetDoc::results
  bool passed = true;
  std::string detail;  // the failed checks: "pair.throughput>=0.93*max: 8.1G < 8.6G"
};

// One verdict per result of d. F*baseline is the same pair's figure in `baseline` (--baseline
// FILE: an earlier fleet document; its ranks paired with d's by host and adapter,
// fleet/compare.hpp); a pair it lacks fails the check, named.
std::vector<PairVerdict> judge(const std::vector<FleetCheck>& checks, const FleetDoc& d,
                               const FleetDoc* baseline = nullptr);

}  // namespace mtperf::fleet
