#pragma once
// Welch's two-sample t-test: whether two sets of measurements (iterations of configuration A and
// of configuration B, interleaved) have different means, without assuming equal variances.
//   t  = (mean_b - mean_a) / sqrt(s_a^2/n_a + s_b^2/n_b)
//   df = (s_a^2/n_a + s_b^2/n_b)^2 / ((s_a^2/n_a)^2/(n_a-1) + (s_b^2/n_b)^2/(n_b-1))
// (Welch-Satterthwaite), p two-sided from Student's t with that real df.
#include <span>

namespace mtperf {

struct WelchTest {
  double mean_a = 0, mean_b = 0;
  double t = 0;        // positive when b's mean is the larger
  double df = 0;       // Welch-Satterthwaite degrees of freedom (0 when both samples are constant)
  double p_value = 1;  // two-sided: P(|T| >= |t|) under equal means
  bool valid = false;  // false when either side has fewer than 2 samples: no test exists
};

// Throws std::invalid_argument on a NaN or infinite sample. Two constant samples (no variance
// on either side) give p = 1 when their means are equal and p = 0 when they differ: the
// difference is then exact, not a matter of chance.
WelchTest welch_t_test(std::span<const double> a, std::span<const double> b);

}  // namespace mtperf
