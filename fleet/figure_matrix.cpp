#include "fleet/figure_matrix.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "fleet/checks.hpp"
#include "fleet/pattern.hpp"

namespace mtperf::fleet {

FigureMatrix::FigureMatrix(uint32_t ranks, std::string figure, uint32_t transport)
    : n_(ranks), figure_(std::move(figure)), transport_(transport) {
  if (ranks == 0 || ranks > kMaxRanks)
    throw std::invalid_argument("a figure matrix of " + std::to_string(ranks) +
                                " ranks: give 1 to " + std::to_string(kMaxRanks));
  cells_.assign(size_t(ranks) * ranks, std::numeric_limits<float>::quiet_NaN());
}

void FigureMatrix::take(const PairResult& r) {
  if (r.transport != transport_ || r.pair.src >= n_ || r.pair.dst >= n_) return;
  float& cell = cells_[size_t(r.pair.src) * n_ + r.pair.dst];
  const bool had = !std::isnan(cell);
  const auto v = r.ok ? pair_figure(r, figure_) : std::nullopt;
  cell = v ? float(*v) : std::numeric_limits<float>::quiet_NaN();
  filled_ = filled_ - (had ? 1 : 0) + (v ? 1 : 0);
}

}  // namespace mtperf::fleet
