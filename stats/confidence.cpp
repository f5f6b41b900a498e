#include "stats/confidence.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "stats/summary.hpp"

namespace mtperf {
namespace {

// Continued fraction for the regularized incomplete beta function I_x(a, b) (the classical
// expansion evaluated with the modified Lentz method); converges fast for x < (a+1)/(a+b+2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr int kMaxTerms = 1000;
  constexpr double kEpsilon = 1e-15;
  constexpr double kTiny = 1e-300;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double result = d;
  for (int m = 1; m <= kMaxTerms; ++m) {
    const double m2 = 2.0 * m;
    // Even step.
    double coeff = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 + coeff * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + coeff / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    result *= d * c;
    // Odd step.
    coeff = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 + coeff * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + coeff / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    result *= delta;
    if (std::fabs(delta - 1.0) < kEpsilon) break;
  }
  return result;
}

double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b;
}

void check_df(int df) {
  if (df < 1) {
    throw std::invalid_argument("Student's t needs at least 1 degree of freedom, got " +
                                std::to_string(df));
  }
}

}  // namespace

double student_t_cdf(double t, int df) {
  check_df(df);
  return student_t_cdf_real(t, df);
}

double student_t_cdf_real(double t, double df) {
  if (!(df > 0.0) || !std::isfinite(df)) {
    throw std::invalid_argument("Student's t needs positive degrees of freedom, got " +
                                std::to_string(df));
  }
  const double nu = df;
  // P(|T| > |t|) = I_{nu/(nu+t^2)}(nu/2, 1/2).
  const double tail = 0.5 * regularized_incomplete_beta(nu / 2.0, 0.5, nu / (nu + t * t));
  return t >= 0.0 ? 1.0 - tail : tail;
}

double student_t_quantile(double p, int df) {
  check_df(df);
  if (!(p > 0.0 && p < 1.0)) {
    throw std::invalid_argument("Student's t quantile needs p in (0, 1), got " + std::to_string(p));
  }
  if (p == 0.5) return 0.0;
  if (p < 0.5) return -student_t_quantile(1.0 - p, df);
  // Bracket, then bisect: the CDF is monotonic, and 200 halvings reach double precision from
  // any bracket, which keeps this simple and sure for every df (df = 1 has very heavy tails).
  double lo = 0.0;
  double hi = 1.0;
  while (student_t_cdf(hi, df) < p) {
    lo = hi;
    hi *= 2.0;
    if (hi > 1e300) return std::numeric_limits<double>::max();
  }
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

ConfidenceInterval confidence_interval(std::span<const double> samples, double level) {
  if (!(level > 0.0 && level < 1.0)) {
    throw std::invalid_argument("confidence level must be in (0, 1), e.g. 0.95, got " +
                                std::to_string(level));
  }
  const SampleSummary s = summarize(samples);
  ConfidenceInterval ci;
  ci.n = static_cast<int>(s.n);
  ci.level = level;
  ci.mean = s.mean;
  ci.lo = s.mean;
  ci.hi = s.mean;
  if (s.n < 2) return ci;
  ci.valid = true;
  ci.stddev = s.stddev;
  ci.t = student_t_quantile((1.0 + level) / 2.0, ci.n - 1);
  ci.half_width = ci.t * s.stddev / std::sqrt(static_cast<double>(s.n));
  ci.lo = s.mean - ci.half_width;
  ci.hi = s.mean + ci.half_width;
  if (ci.half_width == 0.0) {
    ci.width_percent_of_mean = 0.0;
  } else if (s.mean == 0.0) {
    ci.width_percent_of_mean = std::numeric_limits<double>::infinity();
  } else {
    ci.width_percent_of_mean = 2.0 * ci.half_width / std::fabs(s.mean) * 100.0;
  }
  return ci;
}

bool confidence_met(const ConfidenceInterval& ci, double width_percent) {
  return ci.valid && ci.width_percent_of_mean <= width_percent;
}

bool iterations_done(std::span<const double> samples, const IterationRule& rule) {
  const auto n = static_cast<int>(samples.size());
  if (n >= rule.max_iterations) return true;
  if (n < std::max(2, rule.min_iterations)) return false;
  return confidence_met(confidence_interval(samples, rule.level), rule.width_percent);
}

}  // namespace mtperf
