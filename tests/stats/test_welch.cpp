#include <cmath>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "stats/confidence.hpp"
#include "stats/welch.hpp"

using namespace mtperf;

TEST_CASE("Welch's t-test matches the textbook example", "[welch]") {
  // The classic unequal-variance example: t = 2.46, df = 24.99, two-sided p = 0.021.
  const std::vector<double> a = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
                                 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
  const std::vector<double> b = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
                                 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
  const WelchTest w = welch_t_test(a, b);
  REQUIRE(w.valid);
  CHECK(w.t == Approx(2.46).margin(0.01));
  CHECK(w.df == Approx(24.99).margin(0.01));  // 24.988, printed as 24.9 in the tables
  CHECK(w.p_value == Approx(0.021).margin(0.001));
  // Swapping the sides flips the sign and keeps p.
  const WelchTest s = welch_t_test(b, a);
  CHECK(s.t == Approx(-w.t));
  CHECK(s.p_value == Approx(w.p_value));
}

TEST_CASE("Welch's t-test on equal and far-apart samples", "[welch]") {
  const std::vector<double> a = {100, 102, 98, 101, 99};
  CHECK(welch_t_test(a, a).p_value == Approx(1.0));
  CHECK(welch_t_test(a, a).t == 0.0);
  const std::vector<double> far = {200, 202, 198, 201, 199};
  CHECK(welch_t_test(a, far).p_value < 1e-6);
  // With equal variances and sizes df is 2(n-1), and the t cdf at real df agrees with the
  // integer one.
  CHECK(welch_t_test(a, far).df == Approx(8.0));
  CHECK(student_t_cdf_real(1.3, 8.0) == Approx(student_t_cdf(1.3, 8)).epsilon(1e-12));
}

TEST_CASE("Welch's t-test edge cases", "[welch]") {
  const std::vector<double> one = {5};
  const std::vector<double> two = {5, 6};
  CHECK_FALSE(welch_t_test(one, two).valid);
  CHECK(welch_t_test(one, two).p_value == 1.0);
  const std::vector<double> c1 = {3, 3, 3}, c2 = {4, 4}, c3 = {3, 3};
  CHECK(welch_t_test(c1, c2).p_value == 0.0);  // constant and different: exactly different
  CHECK(welch_t_test(c1, c2).t > 0);
  CHECK(welch_t_test(c1, c3).p_value == 1.0);
  const std::vector<double> bad = {1, std::numeric_limits<double>::quiet_NaN()};
  CHECK_THROWS_AS(welch_t_test(bad, two), std::invalid_argument);
  CHECK_THROWS_AS(student_t_cdf_real(1.0, 0.0), std::invalid_argument);
}
