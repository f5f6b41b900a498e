#pragma once
// Fairness of a set of flows' rates (any one unit: bits/s, transactions/s).
#include <span>

namespace mtperf {

// Jain's fairness index (sum x)^2 / (n * sum x^2), in [1/n, 1]: 1 when all flows get the same
// rate, 1/n when one of n flows gets everything. Defined as 1.0 for a single flow, for no flows,
// and when every flow is 0 (nobody is favoured). Throws std::invalid_argument on a negative or
// non-finite rate.
double jain_index(std::span<const double> x);

// Slowest flow over fastest flow, in [0, 1]; 1.0 for no flows or when every flow is 0. Same
// input checks as jain_index.
double min_max_ratio(std::span<const double> x);

}  // namespace mtperf
