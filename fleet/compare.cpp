#include "fleet/compare.hpp"

#include <algorithm>
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

}  // namespace

std::vector<RatioMatrix> compare_runs(const FleetDoc& a, const std::string& a_name,
                                      const FleetDoc& b, const std::string& b_name) {
  if (a.roster.size() != b.roster.size())
    throw std::invalid_argument(
        fmt::format("{} has {} ranks, {} has {}: compare fleets of one size", a_name,
                    a.roster.size(), b_name, b.roster.size()));
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
                     divide(matrix(b, tb, f), matrix(a, ta, f))});
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
          {d.transports[0], d.transports[t], f, divide(matrix(d, t, f), matrix(d, 0, f))});
  return out;
}

std::string ratios_text(const std::vector<RatioMatrix>& r) {
  std::string out;
  for (const RatioMatrix& m : r) {
    const size_t n = m.ratio.size();
    out += fmt::format("{}: {} / {} per pair (row: the client rank, column: the server rank)\n",
                       m.figure, m.b, m.a);
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
    out.push_back({{"a", m.a}, {"b", m.b}, {"figure", m.figure}, {"ratio", rows}});
  }
  return {{"schema", 1}, {"fleet_compare", out}};
}

}  // namespace mtperf::fleet
