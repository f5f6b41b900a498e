#include "fleet/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace mtperf::fleet {
namespace {

Matrix divide(const Matrix& top, const Matrix& bottom) {
  Matrix out(top.size(), std::vector<std::optional<double>>(top.size()));
  for (size_t i = 0; i < top.size(); ++i)
    for (size_t j = 0; j < top.size(); ++j)
      if (top[i][j] && bottom[i][j] && *bottom[i][j] > 0) out[i][j] = *top[i][j] / *bottom[i][j];
  return out;
}

// B's matrix in A's ranks.
Matrix in_ranks_of_a(const Matrix& b, const std::vector<std::optional<uint32_t>>& to_b) {
  const size_t n = to_b.size();
  Matrix out(n, std::vector<std::optional<double>>(n));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (to_b[i] && to_b[j] && *to_b[i] < b.size() && *to_b[j] < b.size())
        out[i][j] = b[*to_b[i]][*to_b[j]];
  return out;
}

// A rank's place: its host, its adapter, and which of the ranks with both it is.
std::vector<std::string> places(const FleetDoc& d) {
  std::map<std::string, size_t> seen;
  std::vector<std::string> out;
  for (const Member& m : d.roster) {
    const std::string key =
        (m.host.empty() ? "rank " + std::to_string(m.rank) : m.host) + "\n" + m.adapter;
    out.push_back(key + "\n" + std::to_string(seen[key]++));
  }
  return out;
}

// The moved pairs named in the text, and listed in the JSON (a fleet of thousands of ranks has
// millions of pairs: the count says how many more).
constexpr size_t kMovedShown = 10;
constexpr size_t kMovedListed = 100;

}  // namespace

std::vector<std::optional<uint32_t>> ranks_by_host(const FleetDoc& from, const FleetDoc& to) {
  std::map<std::string, uint32_t> where;
  const auto theirs = places(to);
  for (uint32_t r = 0; r < theirs.size(); ++r)
    where.emplace(theirs[r], r);
  std::vector<std::optional<uint32_t>> out;
  for (const std::string& p : places(from)) {
    auto it = where.find(p);
    out.push_back(it == where.end() ? std::nullopt : std::optional<uint32_t>(it->second));
  }
  return out;
}

std::vector<RatioMatrix> compare_runs(const FleetDoc& a, const std::string& a_name,
                                      const FleetDoc& b, const std::string& b_name) {
  const auto to_b = ranks_by_host(a, b);
  if (std::none_of(to_b.begin(), to_b.end(), [](const auto& r) { return r.has_value(); }))
    throw std::invalid_argument(fmt::format(
        "{} and {} have no host in common: fleet runs are compared host by host", a_name, b_name));
  if (a.workload != b.workload)
    throw std::invalid_argument(
        fmt::format("{} ran {}, {} ran {}", a_name, a.workload, b_name, b.workload));
  std::vector<RatioMatrix> out;
  for (uint32_t ta = 0; ta < a.transports.size(); ++ta) {
    auto it = std::find(b.transports.begin(), b.transports.end(), a.transports[ta]);
    if (it == b.transports.end()) continue;
    const uint32_t tb = uint32_t(it - b.transports.begin());
    for (const std::string& f : matrix_figures(a.workload))
      out.push_back({a_name + " " + a.transports[ta], b_name + " " + a.transports[ta], f,
                     divide(in_ranks_of_a(matrix(b, tb, f), to_b), matrix(a, ta, f)), to_b});
  }
  if (out.empty())
    throw std::invalid_argument(a_name + " and " + b_name + " have no transport in common");
  return out;
}

std::vector<RatioMatrix> compare_transports(const FleetDoc& d) {
  if (d.transports.size() < 2)
    throw std::invalid_argument(
        "one transport only: give two fleet documents, or a fleet run "
        "with -T A,B");
  std::vector<RatioMatrix> out;
  for (uint32_t t = 1; t < d.transports.size(); ++t)
    for (const std::string& f : matrix_figures(d.workload))
      out.push_back(
          {d.transports[0], d.transports[t], f, divide(matrix(d, t, f), matrix(d, 0, f)), {}});
  return out;
}

std::vector<MovedPair> moved_pairs(const RatioMatrix& m) {
  std::vector<MovedPair> out;
  for (uint32_t i = 0; i < m.ratio.size(); ++i)
    for (uint32_t j = 0; j < m.ratio[i].size(); ++j)
      if (const auto& v = m.ratio[i][j]; v && std::fabs(*v - 1) > kMoved) out.push_back({i, j, *v});
  std::stable_sort(out.begin(), out.end(), [](const MovedPair& a, const MovedPair& b) {
    return std::fabs(a.ratio - 1) > std::fabs(b.ratio - 1);
  });
  return out;
}

std::string ratios_text(const std::vector<RatioMatrix>& r) {
  std::string out;
  for (const RatioMatrix& m : r) {
    const size_t n = m.ratio.size();
    out += fmt::format("{}: {} / {} per pair (row: the client rank, column: the server rank)\n",
                       m.figure, m.b, m.a);
    if (!m.b_rank.empty()) {
      // The pairing by host, where it is not by position.
      std::vector<std::string> moved;
      for (size_t i = 0; i < m.b_rank.size(); ++i)
        if (!m.b_rank[i] || *m.b_rank[i] != i)
          moved.push_back(m.b_rank[i] ? fmt::format("{}={}", i, *m.b_rank[i])
                                      : fmt::format("{}=absent", i));
      if (!moved.empty())
        out += fmt::format("  ranks of {} by host in {}: {}\n", m.a, m.b, fmt::join(moved, " "));
    }
    out += "  from\\to";
    for (size_t j = 0; j < n; ++j)
      out += fmt::format(" {:>7}", j);
    out += "\n";
    std::vector<std::pair<double, std::pair<size_t, size_t>>> cells;
    for (size_t i = 0; i < n; ++i) {
      out += fmt::format("  {:>7}", i);
      for (size_t j = 0; j < n; ++j) {
        const auto& v = m.ratio[i][j];
        out += fmt::format(" {:>7}", i == j ? "." : v ? fmt::format("{:.3f}", *v) : "-");
        if (v) cells.push_back({*v, {i, j}});
      }
      out += "\n";
    }
    if (!cells.empty()) {
      std::sort(cells.begin(), cells.end());
      const auto& lo = cells.front();
      const auto& hi = cells.back();
      const auto moved = moved_pairs(m);
      out += fmt::format("  moved beyond {:.0f}%: {} pair{}", kMoved * 100, moved.size(),
                         moved.size() == 1 ? "" : "s");
      for (size_t k = 0; k < moved.size() && k < kMovedShown; ++k)
        out += fmt::format("{} {}->{} {:.3f}", k ? "," : ":", moved[k].src, moved[k].dst,
                           moved[k].ratio);
      out += moved.size() > kMovedShown ? ", ...\n" : "\n";
      out += fmt::format("  lowest {}->{} {:.3f}, highest {}->{} {:.3f}, median {:.3f}\n\n",
                         lo.second.first, lo.second.second, lo.first, hi.second.first,
                         hi.second.second, hi.first, cells[cells.size() / 2].first);
    }
  }
  return out;
}

nlohmann::json ratios_json(const std::vector<RatioMatrix>& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const RatioMatrix& m : r) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : m.ratio) {
      nlohmann::json cells = nlohmann::json::array();
      for (const auto& c : row)
        cells.push_back(c ? nlohmann::json(*c) : nlohmann::json(nullptr));
      rows.push_back(cells);
    }
    nlohmann::json j = {{"a", m.a}, {"b", m.b}, {"figure", m.figure}, {"ratio", rows}};
    const auto moved = moved_pairs(m);
    nlohmann::json listed = nlohmann::json::array();
    for (size_t k = 0; k < moved.size() && k < kMovedListed; ++k)
      listed.push_back({{"src", moved[k].src}, {"dst", moved[k].dst}, {"ratio", moved[k].ratio}});
    j["moved"] = listed;  // the farthest from 1 first, at most kMovedListed
    j["moved_count"] = moved.size();
    if (!m.b_rank.empty()) {
      nlohmann::json b_rank = nlohmann::json::array();
      for (const auto& r : m.b_rank)
        b_rank.push_back(r ? nlohmann::json(*r) : nlohmann::json(nullptr));
      j["b_rank"] = b_rank;
    }
    out.push_back(j);
  }
  return {{"schema", 1}, {"fleet_compare", out}};
}

}  // namespace mtperf::fleet
