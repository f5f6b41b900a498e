#include "stats/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mtperf {

Histogram::Histogram() : counts_(kBucketCount, 0) {}

void Histogram::merge(const Histogram& other) {
  for (size_t i = 0; i < kBucketCount; ++i)
    counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  sum_squares_ += other.sum_squares_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::reset() noexcept {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
  sum_ = 0;
  sum_squares_ = 0;
}

double Histogram::mean() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(static_cast<long double>(sum_) / count_);
}

double Histogram::stddev() const {
  if (count_ < 2) return 0.0;
  // n^2 * variance = n * sum(v^2) - (sum v)^2. Done in integers when it fits, so a constant
  // series gives exactly 0 instead of the cancellation noise of the floating-point formula.
  U128 n_sum_sq = 0;
  U128 sum_sq = 0;
  const bool fits = !__builtin_mul_overflow(sum_squares_, static_cast<U128>(count_), &n_sum_sq) &&
                    !__builtin_mul_overflow(sum_, sum_, &sum_sq);
  long double n2_var;
  if (fits) {
    n2_var = n_sum_sq >= sum_sq ? static_cast<long double>(n_sum_sq - sum_sq) : 0.0L;
  } else {
    const long double n = count_;
    const long double s = static_cast<long double>(sum_);
    n2_var = std::max(0.0L, n * static_cast<long double>(sum_squares_) - s * s);
  }
  const long double n = count_;
  return static_cast<double>(std::sqrt(n2_var) / n);
}

uint64_t Histogram::percentile(double p) const {
  if (!(p >= 0.0 && p <= 100.0)) {
    throw std::invalid_argument("histogram percentile must be in [0, 100], got " +
                                std::to_string(p));
  }
  if (count_ == 0) return 0;
  if (p == 0.0) return min_;
  if (p == 100.0) return max_;
  // Nearest rank; the epsilon keeps e.g. 99.9% of 1000 at rank 999 despite rounding of p/100.
  const long double exact = static_cast<long double>(p) / 100.0L * count_;
  uint64_t rank = static_cast<uint64_t>(std::ceil(exact - 1e-9L));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBucketCount; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const uint64_t lo = bucket_lo(i);
      const uint64_t mid = lo + (bucket_hi(i) - lo) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;  // unreachable while counts_ and count_ agree
}

uint64_t Histogram::bucket_lo(size_t index) noexcept {
  if (index < kExactBelow) return index;
  const uint64_t shift = (index >> kSubBucketBits) - 1;
  const uint64_t sub = index & (kSubBuckets - 1);
  return (kSubBuckets + sub) << shift;
}

uint64_t Histogram::bucket_hi(size_t index) noexcept {
  if (index < kExactBelow) return index;
  const uint64_t shift = (index >> kSubBucketBits) - 1;
  // Written as lo + (width - 1) so the top bucket ends at UINT64_MAX without overflowing.
  return bucket_lo(index) + ((uint64_t{1} << shift) - 1);
}

}  // namespace mtperf
