#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "stats/confidence.hpp"

using namespace mtperf;

TEST_CASE("Student's t quantiles match the tables", "[confidence]") {
  CHECK(student_t_quantile(0.975, 1) == Approx(12.706).margin(1e-3));
  CHECK(student_t_quantile(0.975, 4) == Approx(2.776).margin(1e-3));
  CHECK(student_t_quantile(0.975, 9) == Approx(2.262).margin(1e-3));
  CHECK(student_t_quantile(0.995, 30) == Approx(2.750).margin(1e-3));
  CHECK(student_t_quantile(0.95, 2) == Approx(2.920).margin(1e-3));
  CHECK(student_t_quantile(0.995, 1) == Approx(63.657).margin(1e-3));
  CHECK(student_t_quantile(0.975, 1000) == Approx(1.962).margin(1e-3));
  // Closed forms: df = 1 is Cauchy, df = 2 has t = (2p - 1) sqrt(2 / (1 - (2p - 1)^2)).
  CHECK(student_t_quantile(0.975, 1) == Approx(std::tan(M_PI * 0.475)).epsilon(1e-9));
  const double a = 2 * 0.975 - 1;
  CHECK(student_t_quantile(0.975, 2) == Approx(a * std::sqrt(2 / (1 - a * a))).epsilon(1e-9));
  // Symmetry and the median.
  CHECK(student_t_quantile(0.025, 4) == Approx(-student_t_quantile(0.975, 4)).epsilon(1e-12));
  CHECK(student_t_quantile(0.5, 7) == 0.0);
}

TEST_CASE("Student's t rejects bad arguments", "[confidence]") {
  CHECK_THROWS_AS(student_t_quantile(0.975, 0), std::invalid_argument);
  CHECK_THROWS_AS(student_t_quantile(1.0, 5), std::invalid_argument);
  CHECK_THROWS_AS(student_t_quantile(0.0, 5), std::invalid_argument);
}

TEST_CASE("a worked 95% confidence interval", "[confidence]") {
  // Five throughput runs in Gbit/s: mean 9.40, sample stddev 0.1, t(0.975, 4) = 2.7764451.
  const std::vector<double> x = {9.30, 9.35, 9.40, 9.45, 9.50};
  const auto ci = confidence_interval(x, 0.95);
  REQUIRE(ci.valid);
  CHECK(ci.n == 5);
  CHECK(ci.mean == Approx(9.40).epsilon(1e-12));
  const double s = std::sqrt(0.025 / 4);  // squared deviations sum to 0.025
  CHECK(ci.stddev == Approx(s).epsilon(1e-12));
  CHECK(ci.t == Approx(2.7764451).epsilon(1e-7));
  const double half = 2.7764451 * s / std::sqrt(5.0);
  CHECK(ci.half_width == Approx(half).epsilon(1e-7));
  CHECK(ci.lo == Approx(9.40 - half).epsilon(1e-9));
  CHECK(ci.hi == Approx(9.40 + half).epsilon(1e-9));
  CHECK(ci.width_percent_of_mean == Approx(2 * half / 9.40 * 100).epsilon(1e-7));
  // The full width is about 2.08 % of the mean: met at 5 % (+-2.5 %), not at 2 % (+-1 %).
  CHECK(confidence_met(ci, 5.0));
  CHECK_FALSE(confidence_met(ci, 2.0));
}

TEST_CASE("intervals need two samples and a level in (0, 1)", "[confidence]") {
  const std::vector<double> one = {9.4};
  const auto ci = confidence_interval(one, 0.95);
  CHECK_FALSE(ci.valid);
  CHECK(ci.mean == 9.4);
  CHECK(ci.half_width == 0.0);
  CHECK_FALSE(confidence_met(ci, 100.0));
  CHECK_FALSE(confidence_interval({}, 0.99).valid);
  CHECK_THROWS_WITH(confidence_interval(one, 95.0), Catch::Contains("(0, 1)"));

  const std::vector<double> same = {3.0, 3.0, 3.0};
  const auto exact = confidence_interval(same, 0.99);
  CHECK(exact.valid);
  CHECK(exact.width_percent_of_mean == 0.0);
  CHECK(confidence_met(exact, 0.1));

  const std::vector<double> around_zero = {-1.0, 1.0};
  CHECK_FALSE(confidence_met(confidence_interval(around_zero, 0.95), 1000.0));
}

TEST_CASE("netperf's iteration rule", "[confidence]") {
  const IterationRule rule{
      .max_iterations = 5, .min_iterations = 3, .level = 0.95, .width_percent = 5.0};
  const std::vector<double> tight = {9.30, 9.35, 9.40, 9.45, 9.50};
  CHECK_FALSE(iterations_done(std::span(tight).first(2), rule));  // below MIN
  CHECK(iterations_done(std::span(tight).first(3), rule));        // +-1.33 %: met
  const std::vector<double> loose = {5.0, 9.0, 7.0, 4.0, 8.0};
  CHECK_FALSE(iterations_done(std::span(loose).first(4), rule));
  CHECK(iterations_done(loose, rule));  // MAX reached, met or not
}
