#include "stats/welch.hpp"

#include <algorithm>
#include <cmath>

#include "stats/confidence.hpp"
#include "stats/summary.hpp"

namespace mtperf {

WelchTest welch_t_test(std::span<const double> a, std::span<const double> b) {
  WelchTest w;
  const SampleSummary sa = summarize(a), sb = summarize(b);  // throws on a non-finite sample
  if (a.size() < 2 || b.size() < 2) return w;
  w.mean_a = sa.mean;
  w.mean_b = sb.mean;
  w.valid = true;
  // The squared standard error of each mean.
  const double va = sa.stddev * sa.stddev / double(a.size());
  const double vb = sb.stddev * sb.stddev / double(b.size());
  const double se2 = va + vb;
  if (se2 <= 0) {  // both constant: the difference is exact
    w.p_value = sa.mean == sb.mean ? 1.0 : 0.0;
    w.t = sa.mean == sb.mean ? 0.0 : std::copysign(INFINITY, sb.mean - sa.mean);
    return w;
  }
  w.t = (sb.mean - sa.mean) / std::sqrt(se2);
  w.df = se2 * se2 / (va * va / double(a.size() - 1) + vb * vb / double(b.size() - 1));
  w.p_value = std::min(1.0, 2.0 * student_t_cdf_real(-std::fabs(w.t), w.df));
  return w;
}

}  // namespace mtperf
