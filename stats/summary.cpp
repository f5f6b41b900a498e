#include "stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace mtperf {

SampleSummary summarize(std::span<const double> samples) {
  SampleSummary s;
  s.n = samples.size();
  if (samples.empty()) return s;
  s.min = samples.front();
  s.max = samples.front();
  // Two passes (mean, then squared deviations): the series are short and the one-pass formula
  // loses every digit when the spread is tiny against the mean (e.g. 9.41 Gbit/s +- 1 kbit/s).
  long double sum = 0.0L;
  for (size_t i = 0; i < samples.size(); ++i) {
    const double x = samples[i];
    if (!std::isfinite(x)) {
      throw std::invalid_argument("summarize: sample " + std::to_string(i) + " is not finite");
    }
    sum += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  const long double mean = sum / samples.size();
  s.mean = static_cast<double>(mean);
  if (samples.size() < 2) return s;
  long double squares = 0.0L;
  for (const double x : samples)
    squares += (x - mean) * (x - mean);
  s.stddev = static_cast<double>(std::sqrt(squares / (samples.size() - 1)));
  return s;
}

}  // namespace mtperf

namespace mtperf {

double median(std::span<const double> samples) {
  if (samples.empty()) return 0.0;
  std::vector<double> sorted(samples.begin(), samples.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (!std::isfinite(sorted[i]))
      throw std::invalid_argument("median: sample " + std::to_string(i) + " is not finite");
  std::sort(sorted.begin(), sorted.end());
  const size_t mid = sorted.size() / 2;
  return sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2.0;
}

}  // namespace mtperf
