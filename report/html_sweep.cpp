// The sweep document's section (sweep.schema.json, schemas 3 and 2): per row, the figure over
// the axis values, with the ideal line on adapter sweeps and the load curve on flow sweeps.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/charts.hpp"
#include "report/html_parts.hpp"

namespace mtperf::html {

namespace {

struct Axis {
  std::string name;  // adapters, message_size, flows, mtu
  std::vector<double> values;
};

// Schema 3 has `axis`; schema 2 had only adapters, as `adapters`.
Axis read_axis(const Json& sweep) {
  Axis a;
  const Json& axis = at(sweep, "axis");
  a.name = axis.is_object() ? text(axis, "name") : "adapters";
  for (const Json& v : axis.is_object() ? array(axis, "values") : array(sweep, "adapters"))
    if (v.is_number()) a.values.push_back(v.get<double>());
  return a;
}

std::string axis_value(const Axis& a, double v) {
  if (a.name == "message_size") return size_text(v);
  return grouped(v);
}

std::string axis_title(const Axis& a) {
  if (a.name == "message_size") return "message size, bytes per send";
  if (a.name == "flows") return "parallel flows";
  if (a.name == "mtu") return "MTU, bytes";
  return a.name;
}

bool evenly_spaced(const std::vector<double>& v) {
  for (size_t i = 2; i < v.size(); ++i)
    if (std::abs((v[i] - v[i - 1]) - (v[1] - v[0])) > 1e-9 * std::abs(v[1] - v[0])) return false;
  return true;
}

struct Cell {
  double at;
  std::optional<double> value;  // the row's figure, in its own unit (bit/s or /s)
  const Json* json;
};

std::vector<Cell> read_cells(const Json& row, const Axis& axis) {
  std::vector<Cell> cells;
  const std::string figure = text(row, "figure");
  const Json& all = array(row, "cells");
  for (size_t i = 0; i < all.size(); ++i) {
    const Json& c = all[i];
    auto x = number(c, "at");
    if (!x) x = number(c, "adapters");
    if (!x && i < axis.values.size()) x = axis.values[i];
    if (!x) continue;
    cells.push_back({*x, number(c, figure), &c});
  }
  return cells;
}

// first figure × n / first n, from the first cell that measured.
std::vector<std::optional<double>> ideal(const std::vector<Cell>& cells) {
  std::vector<std::optional<double>> out(cells.size());
  const auto first = std::find_if(cells.begin(), cells.end(),
                                  [](const Cell& c) { return c.value.has_value() && c.at > 0; });
  if (first == cells.end()) return out;
  for (size_t i = 0; i < cells.size(); ++i)
    out[i] = *first->value * cells[i].at / first->at;
  return out;
}

struct RowView {
  const Json& row;
  const Axis& axis;
  std::vector<Cell> cells;
  bool rr;
  Unit unit;
  bool load_curve;  // flows axis, transactions: latency on the right axis
};

charts::LineChart row_chart(const RowView& v) {
  charts::LineChart ch;
  ch.title = text(v.row, "label");
  ch.x_label = axis_title(v.axis);
  ch.y_label = (v.rr ? "transaction rate, " : "throughput, ") + v.unit.name;
  for (const Cell& c : v.cells) {
    ch.x.push_back(c.at);
    ch.x_ticks.push_back({c.at, axis_value(v.axis, c.at)});
  }
  ch.x_log =
      !evenly_spaced(ch.x) && std::all_of(ch.x.begin(), ch.x.end(), [](double x) { return x > 0; });
  charts::Series fig{v.rr ? "transactions/s" : "throughput", {}, {}, false, false, 0};
  for (const Cell& c : v.cells)
    fig.values.push_back(c.value ? std::optional<double>(*c.value / v.unit.divisor) : std::nullopt);
  ch.series.push_back(fig);
  if (v.axis.name == "adapters") {
    charts::Series id{"ideal: first × n / first n", {}, {}, true, false, charts::kGrey};
    for (auto i : ideal(v.cells))
      id.values.push_back(i ? std::optional<double>(*i / v.unit.divisor) : std::nullopt);
    ch.series.push_back(id);
  }
  if (v.load_curve) {
    ch.y2_label = "response time, \u00b5s";
    charts::Series p99{"p99 response time", {}, {}, false, true, 1};
    charts::Series mean{"mean response time", {}, {}, true, true, 3};
    for (const Cell& c : v.cells) {
      p99.values.push_back(number(*c.json, "latency_p99_us"));
      mean.values.push_back(number(*c.json, "latency_mean_us"));
    }
    ch.series.push_back(p99);
    ch.series.push_back(mean);
  }
  if (const auto peak = number(v.row, "peak_at")) ch.marks.push_back({*peak, "peak"});
  if (const auto sat = number(v.row, "cpu_saturated_at"))
    ch.marks.push_back({*sat, "CPU \u2265 99%", true});
  return ch;
}

std::string row_table(const RowView& v) {
  const std::string sd = text(v.row, "service_demand_unit");
  const bool adapters = v.axis.name == "adapters";
  std::vector<std::string> head = {axis_title(v.axis), (v.rr ? "trans/s" : v.unit.name)};
  if (adapters) head.insert(head.end(), {"ideal", "scaling efficiency", "Jain's index, adapters"});
  if (v.rr) head.insert(head.end(), {"mean response, \u00b5s", "p99 response, \u00b5s"});
  head.insert(head.end(), {"client CPU", "server CPU", "client CPU, " + sd, "server CPU, " + sd});
  if (v.load_curve) head.push_back("marked");
  Table t(head, 1);
  const auto ideals = ideal(v.cells);
  const auto peak = number(v.row, "peak_at"), sat = number(v.row, "cpu_saturated_at");
  for (size_t i = 0; i < v.cells.size(); ++i) {
    const Cell& c = v.cells[i];
    const Json& j = *c.json;
    auto in_unit = [&](std::optional<double> x) {
      return v.rr ? grouped(x) : sig3(x ? std::optional<double>(*x / v.unit.divisor) : x);
    };
    std::vector<std::string> cells = {axis_value(v.axis, c.at), in_unit(c.value)};
    if (adapters) {
      const auto eff = number(j, "scaling_efficiency");
      cells.insert(cells.end(), {in_unit(ideals[i]), percent(eff ? *eff * 100 : eff),
                                 fixed(number(j, "jain_fairness_adapters"), 3)});
    }
    if (v.rr)
      cells.insert(cells.end(),
                   {sig3(number(j, "latency_mean_us")), sig3(number(j, "latency_p99_us"))});
    cells.insert(
        cells.end(),
        {percent(number(j, "local_cpu_percent")), percent(number(j, "remote_cpu_percent")),
         sig3(number(j, "local_service_demand")), sig3(number(j, "remote_service_demand"))});
    if (v.load_curve) {
      std::string mark = peak && *peak == c.at ? "peak" : "";
      if (sat && *sat == c.at) mark += (mark.empty() ? "" : ", ") + std::string("CPU \u2265 99%");
      cells.push_back(mark);
    }
    t.row(cells);
  }
  return t.str();
}

std::string sweep_row(const Json& row, const Axis& axis) {
  RowView v{row, axis, read_cells(row, axis), text(row, "figure") == "transaction_rate", {}, false};
  double largest = 0;
  for (const Cell& c : v.cells)
    largest = std::max(largest, c.value.value_or(0));
  v.unit = v.rr ? Unit{1, "trans/s"} : bps_unit(largest);
  v.load_curve = v.rr && axis.name == "flows";
  std::string caption = text(row, "label") + " over " + axis_title(axis) + ".";
  if (axis.name == "adapters")
    caption += " Dashed: the ideal, the first column's figure times n over its adapter count.";
  if (v.load_curve)
    caption +=
        " The load curve: transactions/s (left axis) and response time, mean and p99 "
        "(right axis), as parallel flows rise; the peak and the first column where either "
        "host's CPU reached 99% (shaded from there) are marked.";
  if (!v.load_curve && (number(row, "peak_at") || number(row, "cpu_saturated_at")))
    caption += " The peak and the first CPU-saturated column are marked.";
  std::vector<std::string> errors;
  for (const Cell& c : v.cells)
    for (const Json& e : array(*c.json, "errors"))
      if (e.is_string()) errors.push_back(axis_value(axis, c.at) + ": " + e.get<std::string>());
  return heading(3, text(row, "label")) + figure(charts::line_chart(row_chart(v)), caption) +
         row_table(v) + error_list(errors);
}

}  // namespace

std::string sweep_section(const Json& doc) {
  const Json& sweep = at(doc, "sweep");
  const Axis axis = read_axis(sweep);
  std::string values;
  for (double v : axis.values)
    values += (values.empty() ? "" : ", ") + axis_value(axis, v);
  std::string out = meta(fmt::format("Transport {}, {}; {} s per test; {}: {}.",
                                     text(sweep, "transport"), text(sweep, "hosts"),
                                     sig3(number(sweep, "length_s")), axis_title(axis), values));
  for (const Json& row : array(sweep, "rows"))
    out += sweep_row(row, axis);
  return out;
}

}  // namespace mtperf::html
