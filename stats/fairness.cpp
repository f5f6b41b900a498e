#include "stats/fairness.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mtperf {
namespace {

void check_rates(std::span<const double> x, const char* what) {
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || x[i] < 0.0) {
      throw std::invalid_argument(std::string(what) + ": flow " + std::to_string(i) + " has rate " +
                                  std::to_string(x[i]) + "; rates must be finite and non-negative");
    }
  }
}

}  // namespace

double jain_index(std::span<const double> x) {
  check_rates(x, "jain_index");
  long double sum = 0.0L;
  long double squares = 0.0L;
  for (const double v : x) {
    sum += v;
    squares += static_cast<long double>(v) * v;
  }
  if (x.size() <= 1 || squares == 0.0L) return 1.0;
  return static_cast<double>(sum * sum / (x.size() * squares));
}

double min_max_ratio(std::span<const double> x) {
  check_rates(x, "min_max_ratio");
  if (x.empty()) return 1.0;
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  if (*hi == 0.0) return 1.0;
  return *lo / *hi;
}

}  // namespace mtperf
