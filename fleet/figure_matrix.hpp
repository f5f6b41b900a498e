#pragma once
// One figure of every ordered pair on one transport, kept compact: a float per cell of a dense N x
// N matrix
// ([src][dst], NaN where no figure came), allocated whole up front, so that what a fleet keeps of
// its results does not grow with the plan. For a fleet too large to keep each pair's result in
// memory (CoordinatorOptions::keep_results false): the results themselves stream to a results
// log (fleet/results_log.hpp), the matrix keeps the figure the renderers need. 4,096 ranks:
// 64 MiB a figure.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fleet/model.hpp"

namespace mtperf::fleet {

class FigureMatrix {
 public:
  // Throws std::invalid_argument when ranks is 0 or above kMaxRanks.
  FigureMatrix(uint32_t ranks, std::string figure, uint32_t transport = 0);

  // The result's figure (fleet/checks.hpp's pair_figure) into its cell; a failed pair or one
  // without the figure leaves NaN (a retest's result replaces the cell). Results of another
  // transport and pairs outside the fleet are ignored.
  void take(const PairResult& r);
  float at(uint32_t src, uint32_t dst) const { return cells_[size_t(src) * n_ + dst]; }
  uint32_t ranks() const { return n_; }
  const std::string& figure() const { return figure_; }
  size_t filled() const { return filled_; }  // cells with a figure
  size_t bytes() const { return cells_.size() * sizeof(float); }

 private:
  uint32_t n_;
  std::string figure_;
  uint32_t transport_;
  std::vector<float> cells_;
  size_t filled_ = 0;
};

}  // namespace mtperf::fleet
