#pragma once
// Log-linear latency histogram, mergeable across flows and hosts.
//
// Values are non-negative integers; mtperf records nanoseconds. Layout:
//   - values 0..255 each have their own bucket (exact);
//   - above that, every power of two [2^k, 2^(k+1)) is split into 128 equal sub-buckets, so a
//     bucket [lo, hi] is at most lo/128 wide: relative bucket width <= 1/128 (0.78%).
// percentile() reports the middle of the bucket holding the requested rank, clamped to the exact
// min and max, so a reported percentile is within 1/256 (0.39%) of the true sample value, well
// inside the 1% bound the report promises.
//
// Cost: record() is a bit scan, a shift and a few adds (a few ns), never allocates, never throws.
// Memory: kBucketCount 64-bit counters (about 58 KiB), allocated once by the constructor.
// Thread-safety: none; keep one histogram per worker and merge() them after the timed phase.
// A moved-from histogram may only be assigned to or destroyed.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mtperf {

class Histogram {
 public:
  // 7 bits of mantissa below the leading one: 128 sub-buckets per power of two.
  static constexpr int kSubBucketBits = 7;
  static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;
  // Values below this have one bucket each.
  static constexpr uint64_t kExactBelow = 2 * kSubBuckets;
  static constexpr size_t kBucketCount = (64 - kSubBucketBits + 1) * kSubBuckets;
  // Largest (hi - lo + 1) / lo of any bucket, and the largest relative error of percentile().
  static constexpr double kMaxBucketWidth = 1.0 / kSubBuckets;
  static constexpr double kMaxRelativeError = 1.0 / (2 * kSubBuckets);
  // What one histogram allocates beyond sizeof(Histogram), bytes.
  static constexpr size_t kStorageBytes = kBucketCount * sizeof(uint64_t);

  Histogram();

  void record(uint64_t v) noexcept {
    ++counts_[bucket_index(v)];
    ++count_;
    sum_ += v;
    sum_squares_ += static_cast<U128>(v) * v;
    min_ = v < min_ ? v : min_;
    max_ = v > max_ ? v : max_;
  }

  // Adds other's samples to this one; afterwards this equals a histogram that recorded both.
  void merge(const Histogram& other);
  void reset() noexcept;

  uint64_t count() const { return count_; }
  // Exact smallest and largest values recorded; 0 when empty.
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  // Exact arithmetic mean and population standard deviation of the recorded values (the sums
  // are kept in 128-bit integers: exact while the sum of squares stays below 2^128, e.g. 2^48
  // samples of up to 2^40 ns); 0 when empty.
  double mean() const;
  double stddev() const;
  // Nearest-rank percentile: the value of rank ceil(p/100 * count) (at least 1) in sorted
  // order, within kMaxRelativeError of it. p in [0, 100], else std::invalid_argument; p = 0
  // gives min(), p = 100 gives max(). 0 when empty.
  uint64_t percentile(double p) const;

  // Calls f(lo, hi, count) for every non-empty bucket in increasing order; lo and hi are the
  // smallest and largest values the bucket holds (both inclusive).
  template <class F>
  void for_each_bucket(F&& f) const {
    for (size_t i = 0; i < kBucketCount; ++i) {
      if (counts_[i] != 0) f(bucket_lo(i), bucket_hi(i), counts_[i]);
    }
  }

  // Bucket arithmetic, public for renderers and tests.
  static size_t bucket_index(uint64_t v) noexcept {
    if (v < kExactBelow) return static_cast<size_t>(v);
    // v has its leading one at bit msb >= 8; keep that one and the 7 bits below it.
    const int shift = 63 - __builtin_clzll(v) - kSubBucketBits;
    return static_cast<size_t>((static_cast<uint64_t>(shift + 1) << kSubBucketBits) +
                               ((v >> shift) - kSubBuckets));
  }
  static uint64_t bucket_lo(size_t index) noexcept;
  static uint64_t bucket_hi(size_t index) noexcept;

 private:
  __extension__ typedef unsigned __int128 U128;

  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  U128 sum_ = 0;
  U128 sum_squares_ = 0;
};

}  // namespace mtperf
