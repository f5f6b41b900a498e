#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "stats/fairness.hpp"

using namespace mtperf;

TEST_CASE("Jain's index", "[fairness]") {
  const std::vector<double> equal(64, 146.9e6);
  CHECK(jain_index(equal) == Approx(1.0).epsilon(1e-15));
  for (const int n : {2, 4, 64}) {
    std::vector<double> one(n, 0.0);
    one[1] = 9.4e9;
    CHECK(jain_index(one) == Approx(1.0 / n).epsilon(1e-15));
  }
  // (1 + 2 + 3 + 4)^2 / (4 * (1 + 4 + 9 + 16)) = 100 / 120.
  const std::vector<double> mixed = {1, 2, 3, 4};
  CHECK(jain_index(mixed) == Approx(100.0 / 120.0).epsilon(1e-15));
  const std::vector<double> single = {5.0};
  CHECK(jain_index(single) == 1.0);
  CHECK(jain_index({}) == 1.0);
  const std::vector<double> zeros(4, 0.0);
  CHECK(jain_index(zeros) == 1.0);
  const std::vector<double> bad = {1.0, -1.0};
  CHECK_THROWS_WITH(jain_index(bad), Catch::Contains("flow 1"));
}

TEST_CASE("min/max ratio", "[fairness]") {
  const std::vector<double> mixed = {1, 2, 3, 4};
  CHECK(min_max_ratio(mixed) == 0.25);
  const std::vector<double> zeros(3, 0.0);
  CHECK(min_max_ratio(zeros) == 1.0);
  CHECK(min_max_ratio({}) == 1.0);
  const std::vector<double> nan = {std::numeric_limits<double>::quiet_NaN()};
  CHECK_THROWS_AS(min_max_ratio(nan), std::invalid_argument);
}
