#include "fleet/group_matrix.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "fleet/checks.hpp"
#include "fleet/groups.hpp"

namespace mtperf::fleet {

GroupMatrix group_matrix(const FleetDoc& d, uint32_t transport, const std::string& figure) {
  GroupMatrix m;
  std::vector<std::string> of_rank;
  bool any = false;
  for (const Member& x : d.roster) {
    of_rank.push_back(x.group);
    any = any || !x.group.empty();
  }
  if (!any) return m;
  const GroupIndex index = index_groups(of_rank);
  const size_t g = index.names.size();
  m.groups = index.names;
  std::vector<std::vector<std::vector<double>>> figures(g, std::vector<std::vector<double>>(g));
  for (const PairResult& r : d.results) {
    if (r.transport != transport || !r.ok || r.pair.src >= index.of.size() ||
        r.pair.dst >= index.of.size())
      continue;
    const uint32_t a = index.of[r.pair.src], b = index.of[r.pair.dst];
    if (a >= g || b >= g) continue;
    if (const auto v = pair_figure(r, figure)) figures[a][b].push_back(*v);
  }
  m.median.assign(g, std::vector<std::optional<double>>(g));
  m.pairs.assign(g, std::vector<size_t>(g, 0));
  for (size_t a = 0; a < g; ++a)
    for (size_t b = 0; b < g; ++b) {
      auto& v = figures[a][b];
      m.pairs[a][b] = v.size();
      if (v.empty()) continue;
      std::sort(v.begin(), v.end());
      const size_t h = v.size() / 2;
      m.median[a][b] = v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
    }
  return m;
}

std::string group_matrix_text(const GroupMatrix& m, double scale) {
  if (m.groups.empty()) return "";
  size_t w = 9;
  for (const std::string& n : m.groups)
    w = std::max(w, std::min<size_t>(n.size(), 24));
  std::string out = "  by group: the median of the pairs between them (pairs)\n";
  out += fmt::format("  {:<{}}", "from\\to", w);
  for (const std::string& n : m.groups)
    out += fmt::format(" {:>{}}", n, w + 6);
  out += "\n";
  for (size_t a = 0; a < m.groups.size(); ++a) {
    out += fmt::format("  {:<{}}", m.groups[a], w);
    for (size_t b = 0; b < m.groups.size(); ++b) {
      const std::string c = m.median[a][b]
                                ? fmt::format("{:.4g} ({})", *m.median[a][b] * scale, m.pairs[a][b])
                                : std::string("-");
      out += fmt::format(" {:>{}}", c, w + 6);
    }
    out += "\n";
  }
  return out;
}

nlohmann::json to_json(const GroupMatrix& m) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& row : m.median) {
    nlohmann::json r = nlohmann::json::array();
    for (const auto& c : row)
      r.push_back(c ? nlohmann::json(*c) : nlohmann::json(nullptr));
    cells.push_back(r);
  }
  return {{"names", m.groups}, {"cells", cells}, {"pairs", m.pairs}};
}

}  // namespace mtperf::fleet
