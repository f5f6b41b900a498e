// The compare document's section (compare.schema.json): per workload, a bar per configuration
// with its interval, samples and verdict; and the suite's (suite.schema.json): per case, a bar
// per transport.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/charts.hpp"
#include "report/html_parts.hpp"
#include "workloads/kind.hpp"

namespace mtperf::html {

namespace {

std::string join(const Json& words) {
  std::string s;
  if (!words.is_array()) return s;
  for (const Json& w : words)
    if (w.is_string()) s += (s.empty() ? "" : " ") + w.get<std::string>();
  return s;
}

// The verdict as a person says it: "faster 1.12× (p=0.003)", "no difference (p=0.41)".
std::string verdict_text(const Json& cell) {
  const std::string v = text(cell, "verdict");
  const std::string ratio = fixed(number(cell, "ratio"), 2) + "\u00d7";
  const std::string p = "p=" + p_value(number(cell, "p_value"));
  if (v == "faster" || v == "slower") return fmt::format("{} {} ({})", v, ratio, p);
  if (v == "no_difference") return fmt::format("no difference, {} ({})", ratio, p);
  if (v == "too_few") return "too few samples";
  return v;
}

int verdict_colour(const std::string& verdict) {
  if (verdict == "faster") return 2;
  if (verdict == "slower") return 4;
  if (verdict == "no_difference") return 0;
  return charts::kGrey;
}

struct RowUnit {
  Unit unit;
  std::string figure;  // "throughput" or "transaction rate"
};

RowUnit row_unit(const Json& row) {
  if (text(row, "figure") == "transaction_rate") return {{1, "trans/s"}, "transaction rate"};
  double largest = 0;
  for (const Json& c : array(row, "cells")) {
    largest = std::max(largest, number(c, "median").value_or(0));
    largest = std::max(largest, number(at(c, "interval"), "hi").value_or(0));
  }
  return {bps_unit(largest), "throughput"};
}

std::optional<double> scaled(std::optional<double> v, const Unit& u) {
  return v ? std::optional<double>(*v / u.divisor) : std::nullopt;
}

std::string compare_row(const Json& row, const Json& compare) {
  const RowUnit ru = row_unit(row);
  const std::string workload = text(row, "workload");
  const std::string sd_unit = text(row, "service_demand_unit");
  charts::HBarChart ch;
  ch.title = fmt::format("{}: {} (median)", workload, ru.figure);
  ch.x_label = ru.figure + ", " + ru.unit.name;
  Table t({"configuration", "median, " + ru.unit.name,
           fmt::format("{}% interval", fixed(number(compare, "level").value_or(0) * 100, 0)),
           "ratio", "verdict", "p", "client CPU, " + sd_unit, "server CPU, " + sd_unit, "samples"},
          1);
  std::vector<std::string> errors;
  for (const Json& c : array(row, "cells")) {
    const std::string name = text(c, "configuration");
    charts::HBar b{name,
                   scaled(number(c, "median"), ru.unit),
                   scaled(number(at(c, "interval"), "lo"), ru.unit),
                   scaled(number(at(c, "interval"), "hi"), ru.unit),
                   {},
                   verdict_text(c),
                   verdict_colour(text(c, "verdict"))};
    for (const Json& s : array(c, "samples")) {
      if (const auto v = number(s, "value")) b.samples.push_back(*v / ru.unit.divisor);
      for (const Json& e : array(s, "errors"))
        if (e.is_string()) errors.push_back(workload + " " + name + ": " + e.get<std::string>());
    }
    ch.bars.push_back(b);
    // A rate is never below 0: the table clips the interval there, as the chart's whisker does.
    const std::optional<double> lo = b.lo ? std::optional<double>(std::max(0.0, *b.lo)) : b.lo;
    t.row({name, sig3(b.value), sig3(lo) + " .. " + sig3(b.hi), fixed(number(c, "ratio"), 3),
           verdict_text(c), p_value(number(c, "p_value")), sig3(number(c, "local_service_demand")),
           sig3(number(c, "remote_service_demand")),
           fmt::format("{} ok, {} failed", grouped(number(c, "measured")),
                       grouped(number(c, "failed")))});
  }
  const std::string caption = fmt::format(
      "{}: the median of each configuration's runs (bar), the {}% confidence interval of the "
      "mean (whisker; clipped at 0), each run (dot), and Welch's t-test against {} beside it. "
      "CPU per unit: µs of CPU time per {} (service demand), median over the runs.",
      workload, fixed(number(compare, "level").value_or(0) * 100, 0), text(compare, "baseline"),
      sd_unit == "us/KB" ? "KB (1024 bytes)" : "transaction");
  return heading(3, workload) + figure(charts::hbar_chart(ch), caption) + t.str() +
         error_list(errors);
}

}  // namespace

std::string compare_section(const Json& doc) {
  const Json& cmp = at(doc, "compare");
  std::string configs;
  for (const Json& c : array(cmp, "configurations"))
    configs += (configs.empty() ? "" : "; ") + text(c, "name") + ": " + join(at(c, "args"));
  std::string out = meta(
      fmt::format("{} configuration(s), baseline {}; {} iterations of {} s each, interleaved; {}. "
                  "Configurations: {}. Options every run got: {}.",
                  array(cmp, "configurations").size(), text(cmp, "baseline"),
                  grouped(number(cmp, "iterations")), sig3(number(cmp, "length_s")),
                  text(cmp, "hosts"), configs, join(at(cmp, "common_args"))));
  for (const Json& row : array(cmp, "rows"))
    out += compare_row(row, cmp);
  return out;
}

namespace {

bool transactional_case(const Json& result) {
  const std::string w = text(at(at(result, "report"), "test"), "workload");
  const WorkloadKind* k = find_kind(w);
  return k != nullptr && k->request_response;
}

// A result's figure: bit/s or transactions/s; nullopt when it did not run.
std::optional<double> case_value(const Json& result, bool rr) {
  return number(at(at(result, "report"), "summary"), rr ? "transaction_rate" : "throughput_bps");
}

// A case's kind by its first result that ran; the workload named in its args otherwise.
bool case_is_rr(const Json& c) {
  for (const Json& r : array(c, "results"))
    if (at(r, "report").is_object()) return transactional_case(r);
  const std::string args = join(at(c, "args"));
  return args.find("-w rr") != std::string::npos || args.find("-w crr") != std::string::npos;
}

std::string suite_chart(const Json& suite, bool rr) {
  const Json& transports = array(suite, "transports");
  double largest = 0;
  charts::BarChart ch;
  for (const Json& c : array(suite, "cases"))
    if (case_is_rr(c) == rr)
      for (const Json& r : array(c, "results"))
        largest = std::max(largest, case_value(r, rr).value_or(0));
  const Unit unit = rr ? Unit{1, "trans/s"} : bps_unit(largest);
  ch.title = rr ? "Transaction cases" : "Throughput cases";
  ch.y_label = (rr ? "transaction rate, " : "throughput, ") + unit.name;
  for (const Json& t : transports)
    ch.series.push_back({t.is_string() ? t.get<std::string>() : "?", {}, {}, false, false, -1});
  for (const Json& c : array(suite, "cases")) {
    if (case_is_rr(c) != rr) continue;
    ch.categories.push_back(text(c, "label"));
    const Json& results = array(c, "results");
    for (size_t i = 0; i < ch.series.size(); ++i) {
      const Json& r = i < results.size() ? results[i] : at(Json(), "");
      const auto v = case_value(r, rr);
      ch.series[i].values.push_back(v ? std::optional<double>(*v / unit.divisor) : std::nullopt);
      ch.series[i].notes.push_back(text(r, "status"));
    }
  }
  if (ch.categories.empty()) return "";
  return figure(
      charts::bar_chart(ch),
      fmt::format("{} of each case, one bar per transport (one run of {} s each; a "
                  "missing bar says why: skipped, failed or interrupted).",
                  rr ? "Transactions per second" : "Throughput", sig3(number(suite, "length_s"))));
}

std::string suite_cell(const Json& r) {
  const std::string status = text(r, "status");
  const bool rr = transactional_case(r);
  const auto v = case_value(r, rr);
  if (!v) return status + (text(r, "message").empty() ? "" : ": " + text(r, "message"));
  const Json& s = at(at(r, "report"), "summary");
  return (rr ? grouped(v) + " t/s" : bps(v)) + ", CPU " +
         percent(number(at(s, "local_cpu"), "util_percent")) +
         (status == "ok" ? "" : " (" + status + ")");
}

}  // namespace

std::string suite_section(const Json& doc) {
  const Json& suite = at(doc, "suite");
  std::string names;
  std::vector<std::string> head = {"case"};
  for (const Json& t : array(suite, "transports")) {
    head.push_back(t.is_string() ? t.get<std::string>() : "?");
    names += (names.empty() ? "" : ", ") + head.back();
  }
  std::string out =
      meta(fmt::format("Every case on {}, one run of {} s each against an in-process server.",
                       names, sig3(number(suite, "length_s"))));
  std::vector<std::string> notes;
  for (const Json& u : array(suite, "unusable"))
    notes.push_back(text(u, "transport") + " not usable here: " + text(u, "why"));
  out += error_list(notes) + suite_chart(suite, false) + suite_chart(suite, true);
  Table t(head, head.size());
  std::vector<std::string> errors;
  for (const Json& c : array(suite, "cases")) {
    std::vector<std::string> cells = {text(c, "label")};
    for (const Json& r : array(c, "results")) {
      cells.push_back(suite_cell(r));
      for (const Json& e : array(at(at(r, "report"), "summary"), "errors"))
        if (e.is_string())
          errors.push_back(text(c, "label") + " on " + text(r, "transport") + ": " +
                           e.get<std::string>());
    }
    t.row(cells);
  }
  return out + heading(3, "Every case") + t.str() + error_list(errors);
}

}  // namespace mtperf::html
