// The run document's section: latency percentiles, the CPU split per host, per-flow bars and
// the summary figures (run.schema.json).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/charts.hpp"
#include "report/html_parts.hpp"
#include "workloads/kind.hpp"

namespace mtperf::html {

namespace {

bool transactional(const Json& test) {
  const std::string w = text(test, "workload");
  const WorkloadKind* k = find_kind(w);
  return k != nullptr && k->request_response;
}

// "90", "99", "99.9" for 1, 2, 3 nines; "0" for none.
std::string nines_label(int nines) {
  if (nines <= 0) return "0";
  if (nines == 1) return "90";
  return "99" + (nines > 2 ? "." + std::string(static_cast<size_t>(nines - 2), '9') : "");
}

std::string latency_chart(const Json& lat) {
  struct Point {
    const char* key;
    const char* name;
    double nines;  // -log10(1 - percentile)
  };
  const double count = number(lat, "count").value_or(0);
  // The largest of `count` round trips stands at 1 in count: log10(count) nines.
  const double max_at = std::clamp(std::log10(std::max(count, 1.0)), 3.5, 9.0);
  const Point points[] = {{"min", "min", 0},     {"p50", "p50", std::log10(2.0)},
                          {"p90", "p90", 1},     {"p99", "p99", 2},
                          {"p99_9", "p99.9", 3}, {"max", "max", max_at}};
  charts::LineChart ch;
  ch.title = "Round-trip latency by percentile";
  ch.y_log = true;
  ch.x_label = "percentile (on a scale of nines: each step ten times rarer)";
  ch.y_label = "latency, \u00b5s (log scale)";
  charts::Series s{"latency", {}, {}, false, false, 0};
  for (const Point& p : points) {
    ch.x.push_back(p.nines);
    s.values.push_back(number(lat, p.key));
    const auto v = number(lat, p.key);
    s.notes.push_back(v ? fmt::format("{} {} \u00b5s", p.name, sig3(*v)) : "");
  }
  if (std::none_of(s.values.begin(), s.values.end(), [](auto v) { return v.has_value(); }))
    return "";
  for (int n = 0; n <= static_cast<int>(max_at); ++n)
    ch.x_ticks.push_back({static_cast<double>(n), nines_label(n)});
  ch.series.push_back(s);
  if (const auto mean = number(lat, "mean")) {
    charts::Series m{
        fmt::format("mean {} \u00b5s", sig3(*mean)), {}, {}, true, false, charts::kGrey};
    m.values.assign(ch.x.size(), *mean);
    ch.series.push_back(m);
  }
  return figure(charts::line_chart(ch),
                fmt::format("Round-trip latency over {} round trips, log scale: the smallest, the "
                            "percentiles 50, 90, 99 and 99.9, and the largest (placed at 1 in {}). "
                            "Percentiles come from a log-linear histogram (error under 1/256).",
                            grouped(count), grouped(count)));
}

charts::StackRow cpu_row(const std::string& label, const Json& cpu) {
  charts::StackRow r{label, {}};
  for (const char* part : {"user", "sys", "irq", "softirq", "iowait", "steal"})
    r.parts.push_back(number(cpu, part));
  return r;
}

std::string cpu_chart(const Json& summary) {
  const Json& local = at(summary, "local_cpu");
  const Json& remote = at(summary, "remote_cpu");
  if (!local.is_object() && !remote.is_object()) return "";
  const bool one =
      at(summary, "one_process").is_boolean() && at(summary, "one_process").get<bool>();
  charts::StackChart ch;
  ch.title = "CPU time by state, per host";
  ch.part_names = {"user", "sys", "irq", "softirq", "iowait", "steal"};
  ch.x_label = "percent of the host's CPUs (the rest is idle)";
  if (local.is_object()) ch.rows.push_back(cpu_row("client host", local));
  if (remote.is_object())
    ch.rows.push_back(cpu_row(one ? "server (same host)" : "server host", remote));
  const Json& per_cpu = array(local, "per_cpu");
  if (per_cpu.size() <= 16)
    for (const Json& c : per_cpu)
      ch.rows.push_back(cpu_row(fmt::format("client cpu{}", number(c, "cpu").value_or(-1)), c));
  std::string caption = fmt::format(
      "Each host's CPU time over the measured window by state, in percent of its {} CPU(s) "
      "(user includes nice). Utilization: client {}, server {}.",
      grouped(number(local, "cpus")), percent(number(local, "util_percent")),
      percent(number(remote, "util_percent")));
  if (one) caption += " Client and server ran in one process on this host, so both rows read it.";
  return figure(charts::stack_chart(ch), caption);
}

// What the per-flow and host figures cover: with several iterations, the last one alone.
std::string last_of(size_t iterations) {
  return iterations > 1 ? fmt::format(", the last iteration ({0} of {0})", iterations) : "";
}

std::string flow_chart(const Json& summary, bool rr, size_t iterations) {
  const Json& flows = array(summary, "flows");
  if (flows.empty()) return "";
  double largest = 0;
  for (const Json& f : flows)
    largest = std::max(largest, number(f, rr ? "transaction_rate" : "throughput_bps").value_or(0));
  const Unit unit = rr ? Unit{1, "trans/s"} : bps_unit(largest);
  charts::BarChart ch;
  ch.title =
      "Per-flow " + std::string(rr ? "transaction rate" : "throughput") + last_of(iterations);
  ch.y_label = (rr ? "transaction rate, " : "throughput, ") + unit.name;
  charts::Series s{rr ? "transaction rate" : "throughput", {}, {}, false, false, 0};
  for (const Json& f : flows) {
    const std::string dir = text(f, "direction");
    const auto id = number(f, "id");
    ch.categories.push_back(fmt::format("{}{}{}", flows.size() <= 8 ? "flow " : "",
                                        id ? fmt::format("{:.0f}", *id) : "?",
                                        dir == "c2s" || dir == "s2c" ? " " + dir : ""));
    const auto v = number(f, rr ? "transaction_rate" : "throughput_bps");
    s.values.push_back(v ? std::optional<double>(*v / unit.divisor) : std::nullopt);
    s.notes.push_back(at(f, "error").is_string() ? "error" : "");
  }
  ch.series.push_back(s);
  return figure(charts::bar_chart(ch),
                fmt::format("Each flow's share (flow id, and its direction in bidir). Jain's "
                            "fairness index J = {} over {} flow(s): 1 when all flows get equal "
                            "shares, 1/n when one takes everything; slowest / fastest = {}.",
                            fixed(number(summary, "jain_fairness"), 3), flows.size(),
                            fixed(number(summary, "min_max_ratio"), 3)));
}

std::string demand(const Json& sd) {
  const auto v = number(sd, "value");
  return v ? sig3(v) + " " + text(sd, "unit") : dash();
}

std::string summary_table(const Json& doc, bool rr) {
  const Json& s = at(doc, "summary");
  const Json& lat = at(s, "latency_us");
  // With several iterations, each figure says what it covers (report/summary.cpp finish_report).
  const size_t n = array(doc, "iterations").size();
  const std::string mean = n > 1 ? fmt::format(" (mean of {} iterations)", n) : "";
  const std::string all = n > 1 ? fmt::format(" (all {} iterations)", n) : "";
  const std::string last = n > 1 ? fmt::format(" (the last of {} iterations)", n) : "";
  Table t({"figure", "value"});
  t.row({"measured window" + last, fixed(number(s, "window_s"), 3) + " s"});
  t.row({"throughput, all directions" + mean, bps(number(s, "throughput_bps"))});
  t.row({"client to server" + mean, bps(number(s, "throughput_c2s_bps"))});
  t.row({"server to client" + mean, bps(number(s, "throughput_s2c_bps"))});
  if (rr) {
    t.row({"transactions" + last, grouped(number(s, "transactions"))});
    t.row({"transaction rate, /s" + mean, grouped(number(s, "transaction_rate"))});
    for (const char* k : {"mean", "p50", "p90", "p99", "p99_9", "max"})
      t.row({std::string("latency ") + k + ", \u00b5s" + all, sig3(number(lat, k))});
  }
  t.row({"Jain's fairness index" + mean, fixed(number(s, "jain_fairness"), 3)});
  t.row({"client host CPU" + last, percent(number(at(s, "local_cpu"), "util_percent"))});
  t.row({"server host CPU" + last, percent(number(at(s, "remote_cpu"), "util_percent"))});
  t.row({"service demand, client", demand(at(at(s, "service_demand"), "local"))});
  t.row({"service demand, server", demand(at(at(s, "service_demand"), "remote"))});
  t.row({"mtperf process CPU, client", percent(number(s, "local_process_cpu_percent"))});
  if (const auto loss = number(s, "udp_loss_percent")) t.row({"UDP loss", percent(loss)});
  const Json& ci = at(doc, "confidence");
  if (ci.is_object()) {
    const double f = rr ? 1.0 : 1e-6;
    t.row({fmt::format("{}% interval of the mean over {} iterations{}",
                       fixed(number(ci, "level").value_or(0) * 100, 0),
                       grouped(number(ci, "iterations")), rr ? ", /s" : ", Mbit/s"),
           fixed(number(ci, "low").value_or(NAN) * f, 1) + " .. " +
               fixed(number(ci, "high").value_or(NAN) * f, 1)});
  }
  return t.str();
}

std::string run_meta(const Json& doc) {
  const Json& t = at(doc, "test");
  const Json& env = at(doc, "environment");
  const bool rr = transactional(t);
  const std::string sizes =
      rr ? fmt::format("request {} B, response {} B", grouped(number(t, "request_size")),
                       grouped(number(t, "response_size")))
         : "message " + size_text(number(t, "message_size").value_or(NAN)) + " B";
  return meta(fmt::format(
      "{} flow(s), {} s window after {} s warm-up, {}, {} iteration(s). "
      "Client host {} ({}, {} CPUs, kernel {}), mtperf {}.",
      grouped(number(t, "flows")), sig3(number(t, "duration_s")), sig3(number(t, "warmup_s")),
      sizes, array(doc, "iterations").size(), text(env, "host"), text(env, "machine"),
      grouped(number(env, "cpus")), text(env, "kernel"), text(env, "mtperf_version")));
}

// The flows that did not connect, the first ten by id and cause; "" when every flow connected.
std::string not_connected_meta(const Json& s) {
  const Json& lost = array(s, "flows_not_connected");
  if (lost.empty()) return "";
  std::string names;
  for (size_t i = 0; i < lost.size() && i < 10; ++i) {
    names += fmt::format("{}{} ({})", i ? ", " : "", grouped(number(lost[i], "flow")),
                         text(lost[i], "error"));
  }
  if (lost.size() > 10) names += fmt::format(", and {} more", lost.size() - 10);
  return meta(fmt::format("{} of {} flows did not connect; the figures are the others': {}.",
                          lost.size(), grouped(number(s, "flows_asked")), names));
}

}  // namespace

std::string run_section(const Json& doc) {
  const Json& s = at(doc, "summary");
  const bool rr = transactional(at(doc, "test"));
  std::string out = run_meta(doc);
  if (at(s, "interrupted").is_boolean() && at(s, "interrupted").get<bool>())
    out += meta("Interrupted: a partial result.");
  out += not_connected_meta(s);
  if (rr) out += latency_chart(at(s, "latency_us"));
  out += cpu_chart(s) + flow_chart(s, rr, array(doc, "iterations").size());
  out += heading(3, "Summary") + summary_table(doc, rr);
  std::vector<std::string> errors;
  for (const Json& e : array(s, "errors"))
    if (e.is_string()) errors.push_back(e.get<std::string>());
  return out + error_list(errors);
}

}  // namespace mtperf::html
