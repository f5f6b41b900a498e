#include "report/sweep.hpp"

#include <cmath>

#include <fmt/format.h>

namespace mtperf {
namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json();
}

std::string fixed(const std::optional<double>& v, int decimals) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : "-";
}

std::string csv_number(const std::optional<double>& v, int decimals) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : "";
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

const char* axis_heading(SweepAxis a) {
  switch (a) {
    case SweepAxis::adapters:
      return "adapters";
    case SweepAxis::message_size:
      return "message size (-m)";
    case SweepAxis::flows:
      return "flows (-P)";
    case SweepAxis::mtu:
      return "MTU";
  }
  return "?";
}

// The load-curve marks of column i: "peak", "cpu>=99%", both, or "".
std::string mark_of(const SweepRow& row, size_t i, const char* separator) {
  std::string out;
  if (peak_column(row) == i) out = "peak";
  if (cpu_saturated_column(row) == i)
    out += (out.empty() ? "" : separator) + fmt::format("cpu>={:.0f}%", kSaturatedCpuPercent);
  return out;
}

template <class F>
std::string text_line(const std::string& label, const SweepRow& row, F cell_text) {
  std::string out = fmt::format("{:<{}}", label, kLabelWidth);
  for (size_t i = 0; i < row.cells.size(); ++i)
    out += fmt::format("{:>{}}", cell_text(row.cells[i], i), kCellWidth);
  return out + "\n";
}

std::string text_row(const Sweep& s, const SweepRow& row) {
  std::string out =
      text_line(row.label + " " + shown_unit(row.figure), row, [&](const SweepCell& c, size_t) {
        return c.errors.empty() && c.value ? fmt::format("{:.2f}", shown(row.figure, *c.value))
                                           : std::string("failed");
      });
  out += text_line("  cpu % local/remote", row, [](const SweepCell& c, size_t) {
    return fixed(c.local_cpu, 1) + "/" + fixed(c.remote_cpu, 1);
  });
  if (s.axis == SweepAxis::adapters) return out;
  bool rate = row.figure == SweepFigure::transaction_rate;
  out += text_line(rate ? "  us/tr local/remote" : "  us/KB local/remote", row,
                   [](const SweepCell& c, size_t) {
                     return fixed(c.local_sd, 2) + "/" + fixed(c.remote_sd, 2);
                   });
  if (rate) {
    out += text_line("  latency us mean/p99", row, [](const SweepCell& c, size_t) {
      return fixed(c.latency_mean_us, 1) + "/" + fixed(c.latency_p99_us, 1);
    });
  }
  if (s.axis == SweepAxis::flows)
    out +=
        text_line("  marks", row, [&](const SweepCell&, size_t i) { return mark_of(row, i, ","); });
  return out;
}

std::string efficiency_text(const Sweep& s) {
  std::string out = "scaling efficiency (figure at N / (N x figure at 1))\n";
  for (const auto& row : s.rows)
    out += text_line(row.label, row, [&](const SweepCell&, size_t i) {
      auto e = scaling_efficiency(row, i);
      return e ? fmt::format("{:.0f}%", *e * 100) : std::string("-");
    });
  return out;
}

nlohmann::json cell_json(const Sweep& s, const SweepRow& row, size_t i) {
  const SweepCell& c = row.cells[i];
  bool rate = row.figure == SweepFigure::transaction_rate;
  nlohmann::json j = {{"at", c.at},
                      {"throughput_bps", rate ? nlohmann::json() : opt(c.value)},
                      {"transaction_rate", rate ? opt(c.value) : nlohmann::json()},
                      {"local_cpu_percent", opt(c.local_cpu)},
                      {"remote_cpu_percent", opt(c.remote_cpu)},
                      {"local_service_demand", opt(c.local_sd)},
                      {"remote_service_demand", opt(c.remote_sd)},
                      {"errors", c.errors}};
  if (rate) {
    j["latency_mean_us"] = opt(c.latency_mean_us);
    j["latency_p99_us"] = opt(c.latency_p99_us);
  }
  if (s.axis == SweepAxis::adapters) {
    j["adapters"] = c.at;
    j["jain_fairness_adapters"] = opt(c.jain_fairness);
    j["scaling_efficiency"] = opt(scaling_efficiency(row, i));
  }
  return j;
}

nlohmann::json column_json(const SweepRow& row, std::optional<size_t> column) {
  return column ? nlohmann::json(row.cells[*column].at) : nlohmann::json();
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

std::string_view service_demand_unit(SweepFigure f) {
  switch (f) {
    case SweepFigure::throughput:
      return "us/KB";
    case SweepFigure::transaction_rate:
      return "us/transaction";
  }
  return "?";
}

std::string_view to_string(SweepAxis a) {
  switch (a) {
    case SweepAxis::adapters:
      return "adapters";
    case SweepAxis::message_size:
      return "message_size";
    case SweepAxis::flows:
      return "flows";
    case SweepAxis::mtu:
      return "mtu";
  }
  return "?";
}

std::string axis_value_text(SweepAxis a, int64_t value) {
  if (a == SweepAxis::message_size && value > 0) {
    if (value % (1 << 20) == 0) return fmt::format("{}M", value >> 20);
    if (value % 1024 == 0) return fmt::format("{}K", value >> 10);
  }
  return std::to_string(value);
}

std::string axis_cell_phrase(SweepAxis a, int64_t at) {
  switch (a) {
    case SweepAxis::adapters:
      return fmt::format("with {} adapter(s)", at);
    case SweepAxis::message_size:
      return "at -m " + axis_value_text(a, at);
    case SweepAxis::flows:
      return fmt::format("with {} flow(s)", at);
    case SweepAxis::mtu:
      return fmt::format("at MTU {}", at);
  }
  return "?";
}

std::optional<double> scaling_efficiency(const SweepRow& row, size_t i) {
  if (row.cells.empty() || i >= row.cells.size()) return std::nullopt;
  const SweepCell& one = row.cells[0];
  const SweepCell& n = row.cells[i];
  if (!one.value || !n.value || *one.value <= 0 || one.at <= 0 || !one.errors.empty() ||
      !n.errors.empty())
    return std::nullopt;
  return *n.value / (double(n.at) / double(one.at) * *one.value);
}

std::optional<size_t> peak_column(const SweepRow& row) {
  std::optional<size_t> best;
  for (size_t i = 0; i < row.cells.size(); ++i) {
    const SweepCell& c = row.cells[i];
    if (!c.errors.empty() || !c.value || !std::isfinite(*c.value)) continue;
    if (!best || *c.value > *row.cells[*best].value) best = i;
  }
  return best;
}

std::optional<size_t> cpu_saturated_column(const SweepRow& row) {
  for (size_t i = 0; i < row.cells.size(); ++i) {
    const SweepCell& c = row.cells[i];
    if (c.local_cpu.value_or(0) >= kSaturatedCpuPercent ||
        c.remote_cpu.value_or(0) >= kSaturatedCpuPercent)
      return i;
  }
  return std::nullopt;
}

std::string sweep_text(const Sweep& s) {
  std::string out =
      fmt::format("mtperf sweep over {}: {} s per test, {}\n", s.transport, s.length_s, s.hosts);
  out += fmt::format("{:<{}}", axis_heading(s.axis), kLabelWidth);
  for (int64_t v : s.axis_values)
    out += fmt::format("{:>{}}", axis_value_text(s.axis, v), kCellWidth);
  out += "\n";
  for (const auto& row : s.rows)
    out += text_row(s, row);
  if (s.axis == SweepAxis::adapters) out += efficiency_text(s);
  for (const auto& row : s.rows)
    for (const auto& c : row.cells)
      for (const auto& e : c.errors)
        out += fmt::format("error: {} {}: {}\n", row.label, axis_cell_phrase(s.axis, c.at), e);
  return out;
}

nlohmann::json sweep_json(const Sweep& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : s.rows) {
    nlohmann::json cells = nlohmann::json::array();
    for (size_t i = 0; i < row.cells.size(); ++i)
      cells.push_back(cell_json(s, row, i));
    nlohmann::json r = {{"name", row.name},
                        {"label", row.label},
                        {"figure", to_string(row.figure)},
                        {"service_demand_unit", service_demand_unit(row.figure)},
                        {"cells", cells}};
    if (s.axis == SweepAxis::flows) {
      r["peak_at"] = column_json(row, peak_column(row));
      r["cpu_saturated_at"] = column_json(row, cpu_saturated_column(row));
    }
    rows.push_back(r);
  }
  return {{"schema", kSweepJsonSchema},
          {"sweep",
           {{"transport", s.transport},
            {"hosts", s.hosts},
            {"length_s", s.length_s},
            {"axis", {{"name", to_string(s.axis)}, {"values", s.axis_values}}},
            {"rows", rows}}}};
}

std::string sweep_csv(const Sweep& s) {
  std::string axis(to_string(s.axis));
  for (char& ch : axis)
    ch = char(std::toupper(static_cast<unsigned char>(ch)));
  std::string out = "ROW," + axis +
                    ",VALUE,UNITS,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,SCALING_EFFICIENCY,ERRORS,"
                    "LOCAL_SD,REMOTE_SD,SD_UNITS,LATENCY_MEAN_US,LATENCY_P99_US,MARK\n";
  for (const auto& row : s.rows)
    for (size_t i = 0; i < row.cells.size(); ++i) {
      const SweepCell& c = row.cells[i];
      auto e = s.axis == SweepAxis::adapters ? scaling_efficiency(row, i) : std::nullopt;
      out += fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", row.name, c.at,
          c.value ? fmt::format("{:.3f}", shown(row.figure, *c.value)) : "", shown_unit(row.figure),
          csv_number(c.local_cpu, 2), csv_number(c.remote_cpu, 2), csv_number(e, 4),
          c.errors.size(), csv_number(c.local_sd, 4), csv_number(c.remote_sd, 4),
          service_demand_unit(row.figure), csv_number(c.latency_mean_us, 2),
          csv_number(c.latency_p99_us, 2), s.axis == SweepAxis::flows ? mark_of(row, i, "+") : "");
    }
  return out;
}

}  // namespace mtperf
