#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "stats/histogram.hpp"

using mtperf::Histogram;

namespace {

// Nearest-rank percentile of the raw samples: the definition Histogram::percentile promises.
uint64_t exact_percentile(std::vector<uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  if (p == 0.0) return v.front();
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * v.size() - 1e-9));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

void check_percentiles(const std::vector<uint64_t>& values) {
  Histogram h;
  for (const auto v : values)
    h.record(v);
  for (const double p : {0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    const double exact = static_cast<double>(exact_percentile(values, p));
    const double got = static_cast<double>(h.percentile(p));
    INFO("p" << p << ": exact " << exact << ", histogram " << got);
    CHECK(std::fabs(got - exact) <= exact * Histogram::kMaxRelativeError);
  }
}

}  // namespace

TEST_CASE("bucket layout: exact below 256, then at most 1/128 wide", "[histogram]") {
  for (uint64_t v = 0; v < 256; ++v) {
    REQUIRE(Histogram::bucket_index(v) == v);
    REQUIRE(Histogram::bucket_lo(v) == v);
    REQUIRE(Histogram::bucket_hi(v) == v);
  }
  // Buckets tile the whole range without gaps or overlaps.
  for (size_t i = 1; i < Histogram::kBucketCount; ++i) {
    REQUIRE(Histogram::bucket_lo(i) == Histogram::bucket_hi(i - 1) + 1);
    if (i < Histogram::kExactBelow) continue;
    const double width = static_cast<double>(Histogram::bucket_hi(i) - Histogram::bucket_lo(i)) + 1;
    REQUIRE(width / static_cast<double>(Histogram::bucket_lo(i)) <= Histogram::kMaxBucketWidth);
  }
  REQUIRE(Histogram::bucket_hi(Histogram::kBucketCount - 1) == UINT64_MAX);
  for (const uint64_t v : {uint64_t{256}, uint64_t{257}, uint64_t{1000}, uint64_t{123456789},
                           uint64_t{1} << 40, UINT64_MAX}) {
    const size_t i = Histogram::bucket_index(v);
    REQUIRE(Histogram::bucket_lo(i) <= v);
    REQUIRE(v <= Histogram::bucket_hi(i));
  }
}

TEST_CASE("empty histogram reports zeros", "[histogram]") {
  Histogram h;
  CHECK(h.count() == 0);
  CHECK(h.min() == 0);
  CHECK(h.max() == 0);
  CHECK(h.mean() == 0.0);
  CHECK(h.stddev() == 0.0);
  CHECK(h.percentile(99.0) == 0);
  int buckets = 0;
  h.for_each_bucket([&](uint64_t, uint64_t, uint64_t) { ++buckets; });
  CHECK(buckets == 0);
  CHECK_THROWS_AS(h.percentile(100.5), std::invalid_argument);
  CHECK_THROWS_AS(h.percentile(-1.0), std::invalid_argument);
}

TEST_CASE("percentiles of a uniform distribution", "[histogram]") {
  std::vector<uint64_t> values;
  for (uint64_t v = 1; v <= 100000; ++v)
    values.push_back(v * 7);  // 7 ns .. 700 us
  check_percentiles(values);
  Histogram h;
  for (const auto v : values)
    h.record(v);
  CHECK(h.mean() == Approx(7 * 50000.5).epsilon(1e-12));
}

TEST_CASE("percentiles of an exponential distribution", "[histogram]") {
  std::mt19937_64 gen(20240611);
  std::exponential_distribution<double> dist(1.0 / 25000.0);  // mean 25 us
  std::vector<uint64_t> values;
  for (int i = 0; i < 200000; ++i)
    values.push_back(static_cast<uint64_t>(dist(gen)) + 1000);
  check_percentiles(values);
}

TEST_CASE("a constant distribution is exact", "[histogram]") {
  Histogram h;
  for (int i = 0; i < 1000; ++i)
    h.record(48213);
  CHECK(h.min() == 48213);
  CHECK(h.max() == 48213);
  CHECK(h.mean() == 48213.0);
  CHECK(h.stddev() == 0.0);
  for (const double p : {0.0, 50.0, 99.0, 99.9, 100.0})
    CHECK(h.percentile(p) == 48213);
}

TEST_CASE("a two-point distribution", "[histogram]") {
  // 90 % at 10 us, 10 % at 1 ms: the p90/p91 boundary must fall exactly between them.
  std::vector<uint64_t> values(9000, 10000);
  values.insert(values.end(), 1000, 1000000);
  check_percentiles(values);
  Histogram h;
  for (const auto v : values)
    h.record(v);
  // Each point is reported from its own bucket, within the error bound.
  CHECK(h.percentile(90.0) >= 10000);
  CHECK(h.percentile(90.0) <= 10000 * (1 + Histogram::kMaxRelativeError));
  CHECK(h.percentile(90.01) >= 1000000 * (1 - Histogram::kMaxRelativeError));
  CHECK(h.percentile(90.01) <= 1000000);
  CHECK(h.mean() == Approx(0.9 * 10000 + 0.1 * 1000000).epsilon(1e-12));
  // Population standard deviation of a two-point mix: |a - b| * sqrt(q (1 - q)).
  CHECK(h.stddev() == Approx(990000.0 * std::sqrt(0.9 * 0.1)).epsilon(1e-12));
}

TEST_CASE("min, max, mean and stddev are exact", "[histogram]") {
  Histogram h;
  const std::vector<uint64_t> values = {1234567, 999, 87654321, 5000, 5001};
  long double sum = 0;
  for (const auto v : values) {
    h.record(v);
    sum += v;
  }
  const long double mean = sum / values.size();
  long double sq = 0;
  for (const auto v : values)
    sq += (v - mean) * (v - mean);
  CHECK(h.count() == 5);
  CHECK(h.min() == 999);
  CHECK(h.max() == 87654321);
  CHECK(h.mean() == Approx(static_cast<double>(mean)).epsilon(1e-15));
  CHECK(h.stddev() == Approx(static_cast<double>(std::sqrt(sq / values.size()))).epsilon(1e-12));
  CHECK(h.percentile(100.0) == 87654321);
  CHECK(h.percentile(0.0) == 999);
}

TEST_CASE("merge equals recording everything into one", "[histogram]") {
  std::mt19937_64 gen(7);
  std::lognormal_distribution<double> dist(10.0, 1.5);
  Histogram a, b, all;
  for (int i = 0; i < 50000; ++i) {
    const auto v = static_cast<uint64_t>(dist(gen));
    (i % 3 == 0 ? a : b).record(v);
    all.record(v);
  }
  Histogram merged = a;  // copies are independent
  merged.merge(b);
  CHECK(a.count() + b.count() == merged.count());
  CHECK(merged.count() == all.count());
  CHECK(merged.min() == all.min());
  CHECK(merged.max() == all.max());
  CHECK(merged.mean() == all.mean());
  CHECK(merged.stddev() == all.stddev());
  for (const double p : {1.0, 50.0, 90.0, 99.0, 99.9})
    CHECK(merged.percentile(p) == all.percentile(p));
  std::vector<uint64_t> m, e;
  merged.for_each_bucket([&](uint64_t lo, uint64_t hi, uint64_t c) {
    m.insert(m.end(), {lo, hi, c});
  });
  all.for_each_bucket([&](uint64_t lo, uint64_t hi, uint64_t c) {
    e.insert(e.end(), {lo, hi, c});
  });
  CHECK(m == e);

  Histogram empty;
  Histogram copy = all;
  copy.merge(empty);
  CHECK(copy.min() == all.min());
  empty.merge(all);
  CHECK(empty.min() == all.min());
  CHECK(empty.count() == all.count());
}

TEST_CASE("for_each_bucket visits non-empty buckets in order and reset clears", "[histogram]") {
  Histogram h;
  h.record(5);
  h.record(5);
  h.record(1000);
  h.record(0);
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> seen;
  h.for_each_bucket([&](uint64_t lo, uint64_t hi, uint64_t c) { seen.emplace_back(lo, hi, c); });
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == std::make_tuple(uint64_t{0}, uint64_t{0}, uint64_t{1}));
  CHECK(seen[1] == std::make_tuple(uint64_t{5}, uint64_t{5}, uint64_t{2}));
  // 1000 = 0b1111101000: leading one at bit 9, so buckets of 4 from 512; 1000 is in [1000, 1003].
  CHECK(seen[2] == std::make_tuple(uint64_t{1000}, uint64_t{1003}, uint64_t{1}));
  h.reset();
  CHECK(h.count() == 0);
  CHECK(h.min() == 0);
  CHECK(h.max() == 0);
  h.record(77);
  CHECK(h.min() == 77);
  CHECK(h.percentile(50.0) == 77);
}

TEST_CASE("large values keep sums exact", "[histogram]") {
  Histogram h;
  const uint64_t big = uint64_t{1} << 40;  // about 18 minutes in ns
  for (int i = 0; i < 1000; ++i)
    h.record(big);
  CHECK(h.mean() == static_cast<double>(big));
  CHECK(h.stddev() == 0.0);
  h.record(UINT64_MAX);
  CHECK(h.max() == UINT64_MAX);
  CHECK(h.percentile(100.0) == UINT64_MAX);
}
