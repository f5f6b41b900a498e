#pragma once
// The fleet document rendered: N x N matrices per transport and figure (cell [client][server]:
// the rank that ran the client side, the sender of a stream, in rows), row and column
// statistics, the slowest pairs, the start spread of each step; as text, JSON
// (docs/json-schema/fleet.schema.json), CSV (one line per pair) and mpiGraph's tab-separated
// send and receive tables.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleet/checks.hpp"
#include "fleet/model.hpp"

namespace mtperf::fleet {

// The figures a workload's matrices show: streams "throughput" (bidir also each direction),
// rr and crr "transaction_rate", "p50", "p99".
std::vector<std::string> matrix_figures(const std::string& workload);

// [src][dst] of transport t's measured pairs (absent: not measured, or the diagonal).
using Matrix = std::vector<std::vector<std::optional<double>>>;
Matrix matrix(const FleetDoc& d, uint32_t transport, const std::string& figure);

struct LineStats {
  uint32_t rank = 0;
  size_t cells = 0;
  double min = 0, median = 0, max = 0;
};
// Per row (as client) and per column (as server) of a matrix: ranks with no cell are left out.
std::vector<LineStats> row_stats(const Matrix& m);
std::vector<LineStats> column_stats(const Matrix& m);

// Cells whose sender and receiver byte counts are equal, of the cells measured with both
// counts.
struct ByteAgreement {
  size_t equal = 0, compared = 0;
};
ByteAgreement byte_agreement(const FleetDoc& d);

// The largest and median start spread over the steps that had two or more starts, ns.
std::optional<double> max_start_spread_ns(const FleetDoc& d);

// Up to this many ranks the text shows each transport's figure as the full N x N matrix and the
// roster a line per rank; above it (the matrix would be N lines of 10 N characters), the pairs'
// distribution (min, p1, p10, p50, p90, p99, max), the 10 worst ranks by the median of their
// pairs as client and as server, the 10 worst pairs, the group matrix; and the roster by state,
// the lost and never-joined ranks named (up to 20 of each), the failing checks up to 20.
inline constexpr size_t kTextMatrixMaxRanks = 32;

std::string fleet_text(const FleetDoc& d, const std::vector<PairVerdict>& verdicts);
nlohmann::json fleet_json(const FleetDoc& d, const std::vector<PairVerdict>& verdicts);
std::string fleet_csv(const FleetDoc& d);
std::string fleet_mpigraph(const FleetDoc& d);
std::string fleet_junit(const FleetDoc& d, const std::vector<PairVerdict>& verdicts);

}  // namespace mtperf::fleet
