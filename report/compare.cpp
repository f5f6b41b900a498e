#include "report/compare.hpp"

#include <cmath>

#include <fmt/format.h>

#include "stats/summary.hpp"

namespace mtperf {
namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json finite(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

// Text and CSV show throughput in Mbit/s, as the run's text report.
double shown(CompareFigure f, double v) {
  return f == CompareFigure::throughput ? v / 1e6 : v;
}

const char* shown_unit(CompareFigure f) {
  return f == CompareFigure::throughput ? "throughput, Mbit/s" : "transactions/s";
}

std::optional<double> median_of(const std::vector<CompareSample>& samples,
                                std::optional<double> CompareSample::*field) {
  std::vector<double> v;
  for (const auto& s : samples)
    if (s.*field) v.push_back(*(s.*field));
  if (v.empty()) return std::nullopt;
  return median(v);
}

std::vector<double> values(const CompareCell& cell) {
  std::vector<double> v;
  for (const auto& s : cell.samples)
    if (s.value) v.push_back(*s.value);
  return v;
}

std::string demand(const std::optional<double>& v) {
  return v ? fmt::format("{:.3f}", *v) : "-";
}

}  // namespace

std::string_view to_string(CompareFigure f) {
  switch (f) {
    case CompareFigure::throughput:
      return "throughput_bps";
    case CompareFigure::transaction_rate:
      return "transaction_rate";
  }
  return "?";
}

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::baseline:
      return "baseline";
    case Verdict::faster:
      return "faster";
    case Verdict::slower:
      return "slower";
    case Verdict::no_difference:
      return "no_difference";
    case Verdict::too_few:
      return "too_few";
  }
  return "?";
}

std::vector<CompareStep> compare_plan(int iterations, size_t rows, size_t configs) {
  std::vector<CompareStep> plan;
  for (int i = 0; i < iterations; ++i)
    for (size_t r = 0; r < rows; ++r)
      for (size_t k = 0; k < configs; ++k)
        plan.push_back({i, r, i % 2 == 0 ? k : configs - 1 - k});
  return plan;
}

CellStats cell_stats(const Compare& c, const CompareRow& row, size_t config) {
  CellStats s;
  const CompareCell& cell = row.cells.at(config);
  const std::vector<double> v = values(cell);
  s.measured = int(v.size());
  s.failed = int(cell.samples.size() - v.size());
  if (!v.empty()) s.median = median(v);
  s.interval = confidence_interval(v, c.level);
  s.local_demand = median_of(cell.samples, &CompareSample::local_demand);
  s.remote_demand = median_of(cell.samples, &CompareSample::remote_demand);
  if (config == c.baseline) {
    s.verdict = Verdict::baseline;
    if (s.median) s.ratio = 1.0;
    return s;
  }
  const std::vector<double> base = values(row.cells.at(c.baseline));
  if (s.median && !base.empty() && median(base) > 0) s.ratio = *s.median / median(base);
  s.test = welch_t_test(base, v);
  if (!s.test.valid) return s;  // too_few
  if (s.test.p_value >= 1.0 - c.level)
    s.verdict = Verdict::no_difference;
  else
    s.verdict = s.test.t > 0 ? Verdict::faster : Verdict::slower;
  return s;
}

std::string verdict_text(const CellStats& s) {
  const double ratio = s.test.mean_a > 0 ? s.test.mean_b / s.test.mean_a : 0.0;
  switch (s.verdict) {
    case Verdict::baseline:
      return "baseline";
    case Verdict::faster:
    case Verdict::slower:
      return fmt::format("{} {:.2f}x (p={:.2g})", to_string(s.verdict), ratio, s.test.p_value);
    case Verdict::no_difference:
      return fmt::format("no difference (p={:.2f})", s.test.p_value);
    case Verdict::too_few:
      return "too few runs";
  }
  return "?";
}

std::string compare_text(const Compare& c) {
  const std::string& base = c.configs.at(c.baseline).name;
  std::string out = fmt::format(
      "mtperf compare: {} iterations of {} s each, interleaved; medians, {:.0f}% intervals of the "
      "mean, Welch's t-test at p < {:.2g} against {}\n",
      c.iterations, c.length_s, c.level * 100, 1.0 - c.level, base);
  out += "where: " + c.hosts + "\n";
  if (!c.common_args.empty())
    out += "every run: " + fmt::format("{}", fmt::join(c.common_args, " ")) + "\n";
  for (const auto& cfg : c.configs)
    out += fmt::format("  {}: {}\n", cfg.name, fmt::join(cfg.args, " "));
  std::vector<std::string> failures;
  for (const auto& row : c.rows) {
    out += fmt::format("\n{}: {}{:>{}}CPU {}\n", row.workload, shown_unit(row.figure), "",
                       std::max<int>(1, 60 - int(row.workload.size() + 2 +
                                                 std::string_view(shown_unit(row.figure)).size())),
                       row.demand_unit);
    out += fmt::format("  {:<16} {:>12} {:>25} {:>6}  {:<28} {:>8} {:>8}\n", "configuration",
                       "median", fmt::format("{:.0f}% interval", c.level * 100), "ratio", "verdict",
                       "local", "remote");
    for (size_t k = 0; k < c.configs.size(); ++k) {
      const CellStats s = cell_stats(c, row, k);
      std::string interval = "-";
      if (s.interval.valid)
        // A rate is never below 0: the interval is clipped there, as in the HTML chart.
        interval = fmt::format("{:.2f}..{:.2f}", shown(row.figure, std::max(0.0, s.interval.lo)),
                               shown(row.figure, s.interval.hi));
      out += fmt::format("  {:<16} {:>12} {:>25} {:>6}  {:<28} {:>8} {:>8}\n", c.configs[k].name,
                         s.median ? fmt::format("{:.2f}", shown(row.figure, *s.median)) : "failed",
                         interval, s.ratio ? fmt::format("{:.2f}", *s.ratio) : "-", verdict_text(s),
                         demand(s.local_demand), demand(s.remote_demand));
      for (const auto& sample : row.cells[k].samples)
        for (const auto& e : sample.errors)
          failures.push_back(fmt::format("{} on {}: {}", row.workload, c.configs[k].name, e));
    }
  }
  if (!failures.empty()) {
    out += "\nerrors:\n";
    for (const auto& f : failures)
      out += "  " + f + "\n";
  }
  return out;
}

std::string compare_csv(const Compare& c) {
  std::string out =
      "workload,configuration,figure,measured,failed,median,mean,ci_low,ci_high,ratio,p_value,"
      "verdict,service_demand_unit,local_service_demand,remote_service_demand\n";
  auto num = [](const std::optional<double>& v) {
    return v && std::isfinite(*v) ? fmt::format("{}", *v) : std::string();
  };
  for (const auto& row : c.rows)
    for (size_t k = 0; k < c.configs.size(); ++k) {
      const CellStats s = cell_stats(c, row, k);
      const bool tested = s.verdict != Verdict::baseline && s.test.valid;
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", row.workload,
                         c.configs[k].name, to_string(row.figure), s.measured, s.failed,
                         num(s.median), s.measured ? num(s.interval.mean) : "",
                         s.interval.valid ? num(s.interval.lo) : "",
                         s.interval.valid ? num(s.interval.hi) : "", num(s.ratio),
                         tested ? num(s.test.p_value) : "", to_string(s.verdict), row.demand_unit,
                         num(s.local_demand), num(s.remote_demand));
    }
  return out;
}

nlohmann::json compare_json(const Compare& c) {
  nlohmann::json configs = nlohmann::json::array();
  for (const auto& cfg : c.configs)
    configs.push_back({{"name", cfg.name}, {"args", cfg.args}});
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : c.rows) {
    nlohmann::json cells = nlohmann::json::array();
    for (size_t k = 0; k < c.configs.size(); ++k) {
      const CellStats s = cell_stats(c, row, k);
      nlohmann::json samples = nlohmann::json::array();
      for (const auto& x : row.cells[k].samples)
        samples.push_back({{"value", opt(x.value)},
                           {"local_service_demand", opt(x.local_demand)},
                           {"remote_service_demand", opt(x.remote_demand)},
                           {"errors", x.errors}});
      const bool tested = s.verdict != Verdict::baseline && s.test.valid;
      nlohmann::json interval;
      if (s.interval.valid)
        interval = {{"lo", finite(s.interval.lo)}, {"hi", finite(s.interval.hi)}};
      cells.push_back({{"configuration", c.configs[k].name},
                       {"samples", samples},
                       {"measured", s.measured},
                       {"failed", s.failed},
                       {"median", opt(s.median)},
                       {"mean", s.measured ? finite(s.interval.mean) : nlohmann::json()},
                       {"interval", interval},
                       {"ratio", opt(s.ratio)},
                       {"t", tested ? finite(s.test.t) : nlohmann::json()},
                       {"df", tested ? finite(s.test.df) : nlohmann::json()},
                       {"p_value", tested ? finite(s.test.p_value) : nlohmann::json()},
                       {"verdict", to_string(s.verdict)},
                       {"local_service_demand", opt(s.local_demand)},
                       {"remote_service_demand", opt(s.remote_demand)}});
    }
    rows.push_back({{"workload", row.workload},
                    {"figure", to_string(row.figure)},
                    {"service_demand_unit", row.demand_unit},
                    {"cells", cells}});
  }
  return {{"schema", kCompareJsonSchema},
          {"compare",
           {{"iterations", c.iterations},
            {"length_s", c.length_s},
            {"level", c.level},
            {"baseline", c.configs.at(c.baseline).name},
            {"hosts", c.hosts},
            {"common_args", c.common_args},
            {"configurations", configs},
            {"rows", rows}}}};
}

}  // namespace mtperf
