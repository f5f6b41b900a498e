#include "fleet/line.hpp"

namespace mtperf::fleet {

PairLine end_line(const Member& m, bool verbs) {
  if (verbs && m.rdma_rate_bps) return {m.rdma_rate_bps, "rdma port"};
  if (m.speed_bps) return {m.speed_bps, "sysfs"};
  if (m.rdma_rate_bps) return {m.rdma_rate_bps, "rdma port"};
  return {};
}

PairLine pair_line(const FleetDoc& d, const PairResult& r, bool verbs) {
  if (d.line_rate_bps) return {d.line_rate_bps, "--line-rate"};
  if (r.pair.src >= d.roster.size() || r.pair.dst >= d.roster.size()) return {};
  const PairLine a = end_line(d.roster[r.pair.src], verbs);
  const PairLine b = end_line(d.roster[r.pair.dst], verbs);
  if (!a.bps || !b.bps) return {};
  return *b.bps < *a.bps ? b : a;
}

void assign_lines(FleetDoc& d, const std::vector<bool>& verbs) {
  for (PairResult& r : d.results) {
    const PairLine l = pair_line(d, r, r.transport < verbs.size() && verbs[r.transport]);
    r.line_bps = l.bps;
    r.line_source = l.source;
  }
}

std::string no_line_why(const FleetDoc& d, const PairResult& r) {
  std::string out;
  for (uint32_t rank : {r.pair.src, r.pair.dst}) {
    if (rank >= d.roster.size()) continue;
    const Member& m = d.roster[rank];
    if (m.speed_bps || m.rdma_rate_bps) continue;
    out += (out.empty() ? "" : ", ") + std::string("rank ") + std::to_string(rank) +
           (m.host.empty() ? "" : " (" + m.host + ")") + " " +
           (m.adapter.empty() ? std::string("adapter unknown") : m.adapter) + " reports no speed";
  }
  return out.empty() ? "no line known" : out;
}

}  // namespace mtperf::fleet
