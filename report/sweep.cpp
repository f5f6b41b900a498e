#include "report/sweep.hpp"

#include <cmath>

#include <fmt/format.h>

namespace mtperf {
namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json();
}

std::string percent(const std::optional<double>& v) {
  return v ? fmt::format("{:.1f}", *v) : "-";
}

constexpr int kLabelWidth = 24;
constexpr int kCellWidth = 14;

// Text and CSV: throughput in Mbit/s, as the run's text report.
const char* shown_unit(SweepFigure f) {
  return f == SweepFigure::throughput ? "Mbit/s" : "trans/s";
}

double shown(SweepFigure f, double value) {
  return f == SweepFigure::throughput ? value / 1e6 : value;
}

}  // namespace

std::string_view to_string(SweepFigure f) {
  switch (f) {
    case SweepFigure::throughput:
      return "throughput_bps";
    case SweepFigure::transaction_rate:
      return "transaction_rate";
  }
  return "?";
}

std::optional<double> scaling_efficiency(const SweepRow& row, size_t i) {
  if (row.cells.empty() || i >= row.cells.size()) return std::nullopt;
  const SweepCell& one = row.cells[0];
  const SweepCell& n = row.cells[i];
  if (!one.value || !n.value || *one.value <= 0 || one.adapters <= 0 || !one.errors.empty() ||
      !n.errors.empty())
    return std::nullopt;
  return *n.value / (double(n.adapters) / double(one.adapters) * *one.value);
}

std::string sweep_text(const Sweep& s) {
  std::string out =
      fmt::format("mtperf sweep over {}: {} s per test, {}\n", s.transport, s.length_s, s.hosts);
  out += fmt::format("{:<{}}", "adapters", kLabelWidth);
  for (int n : s.adapter_counts)
    out += fmt::format("{:>{}}", n, kCellWidth);
  out += "\n";
  for (const auto& row : s.rows) {
    out += fmt::format("{:<{}}", row.label + " " + shown_unit(row.figure), kLabelWidth);
    for (const auto& c : row.cells)
      out += c.errors.empty() && c.value
                 ? fmt::format("{:>{}.2f}", shown(row.figure, *c.value), kCellWidth)
                 : fmt::format("{:>{}}", "failed", kCellWidth);
    out += fmt::format("\n{:<{}}", "  cpu % local/remote", kLabelWidth);
    for (const auto& c : row.cells)
      out += fmt::format("{:>{}}", percent(c.local_cpu) + "/" + percent(c.remote_cpu), kCellWidth);
    out += "\n";
  }
  out += "scaling efficiency (figure at N / (N x figure at 1))\n";
  for (const auto& row : s.rows) {
    out += fmt::format("{:<{}}", row.label, kLabelWidth);
    for (size_t i = 0; i < row.cells.size(); ++i) {
      auto e = scaling_efficiency(row, i);
      out += fmt::format("{:>{}}", e ? fmt::format("{:.0f}%", *e * 100) : "-", kCellWidth);
    }
    out += "\n";
  }
  for (const auto& row : s.rows)
    for (const auto& c : row.cells)
      for (const auto& e : c.errors)
        out += fmt::format("error: {} with {} adapter(s): {}\n", row.label, c.adapters, e);
  return out;
}

nlohmann::json sweep_json(const Sweep& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : s.rows) {
    nlohmann::json cells = nlohmann::json::array();
    for (size_t i = 0; i < row.cells.size(); ++i) {
      const SweepCell& c = row.cells[i];
      bool rate = row.figure == SweepFigure::transaction_rate;
      cells.push_back({{"adapters", c.adapters},
                       {"throughput_bps", rate ? nlohmann::json() : opt(c.value)},
                       {"transaction_rate", rate ? opt(c.value) : nlohmann::json()},
                       {"local_cpu_percent", opt(c.local_cpu)},
                       {"remote_cpu_percent", opt(c.remote_cpu)},
                       {"jain_fairness_adapters", opt(c.jain_fairness)},
                       {"scaling_efficiency", opt(scaling_efficiency(row, i))},
                       {"errors", c.errors}});
    }
    rows.push_back({{"name", row.name},
                    {"label", row.label},
                    {"figure", to_string(row.figure)},
                    {"cells", cells}});
  }
  return {{"schema", kSweepJsonSchema},
          {"sweep",
           {{"transport", s.transport},
            {"hosts", s.hosts},
            {"length_s", s.length_s},
            {"adapters", s.adapter_counts},
            {"rows", rows}}}};
}

std::string sweep_csv(const Sweep& s) {
  std::string out =
      "ROW,ADAPTERS,VALUE,UNITS,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,SCALING_EFFICIENCY,ERRORS\n";
  for (const auto& row : s.rows)
    for (size_t i = 0; i < row.cells.size(); ++i) {
      const SweepCell& c = row.cells[i];
      auto e = scaling_efficiency(row, i);
      out += fmt::format("{},{},{},{},{},{},{},{}\n", row.name, c.adapters,
                         c.value ? fmt::format("{:.3f}", shown(row.figure, *c.value)) : "",
                         shown_unit(row.figure),
                         c.local_cpu ? fmt::format("{:.2f}", *c.local_cpu) : "",
                         c.remote_cpu ? fmt::format("{:.2f}", *c.remote_cpu) : "",
                         e ? fmt::format("{:.4f}", *e) : "", c.errors.size());
    }
  return out;
}

}  // namespace mtperf
