#pragma once
// Summary statistics of a small series of samples (per-iteration throughputs, per-flow rates).
// Units are whatever the samples carry.
#include <cstddef>
#include <span>

namespace mtperf {

struct SampleSummary {
  size_t n = 0;
  double mean = 0.0;
  double stddev = 0.0;  // sample standard deviation (divides by n - 1); 0 when n < 2
  double min = 0.0;
  double max = 0.0;
};

// All fields 0 for an empty series. Throws std::invalid_argument on a NaN or infinite sample, so
// a broken measurement never reaches a report as "nan".
SampleSummary summarize(std::span<const double> samples);

// The middle sample (the mean of the two middle ones for an even count); 0 for an empty series.
// Throws std::invalid_argument on a NaN or infinite sample.
double median(std::span<const double> samples);

}  // namespace mtperf
