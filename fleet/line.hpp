#pragma once
// A pair's line: what `line` in a check stands for (`pair.throughput>=0.9*line`). It is the
// smaller of the two ends' link rates, each end's as its member reported it at JOIN
// (platform/link_line.hpp): for a transport over RDMA verbs the RDMA port's active width x speed,
// else the interface's sysfs speed, else the RDMA port's; --line-rate RATE overrides both ends
// (veth reports a nominal 10 Gbit/s, some VFs nothing). A pair where either end reports nothing
// has no line (source "none"): a check against it fails, naming the pair.
#include <optional>
#include <string>
#include <vector>

#include "fleet/model.hpp"

namespace mtperf::fleet {

struct PairLine {
  std::optional<double> bps;
  std::string source = "none";  // "sysfs", "rdma port", "--line-rate", "none"
};

// One end: the rank's figure for a transport that does (verbs) or does not use the RDMA port.
PairLine end_line(const Member& m, bool verbs);
// The pair's line; `verbs` as above for the result's transport.
PairLine pair_line(const FleetDoc& d, const PairResult& r, bool verbs);
// Sets every result's line_bps and line_source; verbs[t]: transport t runs over RDMA verbs
// (shorter than the transports: false).
void assign_lines(FleetDoc& d, const std::vector<bool>& verbs);
// Why a pair has no line, for the failure of a check against it: "rank 0 (h0) lo: no speed".
std::string no_line_why(const FleetDoc& d, const PairResult& r);

}  // namespace mtperf::fleet
