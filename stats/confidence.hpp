#pragma once
// Confidence intervals of a mean from Student's t distribution, and netperf's iteration rule:
// `-i MAX[,MIN] -I LEVEL,WIDTH` repeats the measured run until the LEVEL confidence interval of
// the mean is no wider than WIDTH percent of the mean (i.e. mean +- WIDTH/2 %), or MAX runs are
// done, and never stops before MIN runs.
#include <span>

namespace mtperf {

// The p-quantile of Student's t distribution with df degrees of freedom: the t with
// P(T <= t) = p. p in (0, 1), df >= 1, else std::invalid_argument. Computed numerically from the
// regularized incomplete beta function; accurate to about 1e-9 relative.
// Two-sided LEVEL intervals use p = (1 + LEVEL) / 2, e.g. student_t_quantile(0.975, 4) = 2.776.
double student_t_quantile(double p, int df);

// Cumulative distribution P(T <= t) of Student's t with df >= 1 degrees of freedom.
double student_t_cdf(double t, int df);

// The same for real df > 0 (Welch's test has fractional degrees of freedom); else
// std::invalid_argument.
double student_t_cdf_real(double t, double df);

struct ConfidenceInterval {
  double mean = 0.0;
  double half_width = 0.0;  // t * s / sqrt(n), same unit as the samples
  double lo = 0.0;          // mean - half_width
  double hi = 0.0;          // mean + half_width
  // Full width (hi - lo) as a percentage of |mean|. +infinity when the mean is 0 but the
  // samples differ (no relative width exists; renderers write null).
  double width_percent_of_mean = 0.0;
  int n = 0;
  double level = 0.0;   // two-sided confidence level, e.g. 0.95
  double stddev = 0.0;  // sample standard deviation (n - 1)
  double t = 0.0;       // the t quantile used
  // False when n < 2: one sample has no spread, so no interval exists. The other fields are
  // then 0 except mean, n and level, never NaN.
  bool valid = false;
};

// level: two-sided confidence level in (0, 1), e.g. 0.95 or 0.99; else std::invalid_argument
// (a percentage such as 95 is rejected rather than guessed). Throws std::invalid_argument on a
// NaN or infinite sample.
ConfidenceInterval confidence_interval(std::span<const double> samples, double level);

// netperf's -I rule: met when the interval is valid and its full width is at most width_percent
// percent of the mean (mean +- width_percent/2 %).
bool confidence_met(const ConfidenceInterval& ci, double width_percent);

// -i MAX[,MIN] -I LEVEL,WIDTH as a whole: level in (0, 1), width in percent.
struct IterationRule {
  int max_iterations = 1;
  int min_iterations = 1;
  double level = 0.95;
  double width_percent = 5.0;
};

// Whether the iterations done so far (one sample each) are enough: MAX reached, or at least MIN
// (and at least 2) done and the confidence target met.
bool iterations_done(std::span<const double> samples, const IterationRule& rule);

}  // namespace mtperf
