#include <cmath>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "stats/summary.hpp"

using mtperf::median;
using mtperf::summarize;

TEST_CASE("summary of a known series", "[summary]") {
  const std::vector<double> x = {2, 4, 4, 4, 5, 5, 7, 9};
  const auto s = summarize(x);
  CHECK(s.n == 8);
  CHECK(s.mean == 5.0);
  CHECK(s.min == 2.0);
  CHECK(s.max == 9.0);
  // Sum of squared deviations is 32; sample variance 32 / 7.
  CHECK(s.stddev == Approx(std::sqrt(32.0 / 7.0)).epsilon(1e-15));
}

TEST_CASE("summary of empty and single-sample series", "[summary]") {
  const auto empty = summarize({});
  CHECK(empty.n == 0);
  CHECK(empty.mean == 0.0);
  CHECK(empty.stddev == 0.0);
  const std::vector<double> one = {9.41e9};
  const auto s = summarize(one);
  CHECK(s.n == 1);
  CHECK(s.mean == 9.41e9);
  CHECK(s.stddev == 0.0);
  CHECK(s.min == 9.41e9);
  CHECK(s.max == 9.41e9);
}

TEST_CASE("summary keeps a tiny spread on a large mean", "[summary]") {
  const std::vector<double> x = {9.41e9 + 1000, 9.41e9 - 1000, 9.41e9 + 1000, 9.41e9 - 1000};
  CHECK(summarize(x).stddev == Approx(std::sqrt(4e6 / 3.0)).epsilon(1e-9));
}

TEST_CASE("summary rejects non-finite samples", "[summary]") {
  const std::vector<double> x = {1.0, std::numeric_limits<double>::quiet_NaN()};
  CHECK_THROWS_WITH(summarize(x), Catch::Contains("sample 1"));
}

TEST_CASE("median of odd, even and empty series", "[summary]") {
  const std::vector<double> odd = {5, 1, 3}, even = {4, 1, 3, 2}, none;
  CHECK(median(odd) == 3.0);
  CHECK(median(even) == 2.5);
  CHECK(median(none) == 0.0);
  const std::vector<double> bad = {1, std::numeric_limits<double>::infinity()};
  CHECK_THROWS_AS(median(bad), std::invalid_argument);
}
