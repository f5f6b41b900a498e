#include "report/checks.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "report/svg.hpp"  // svg::escape: the one markup escaping, for HTML and XML

namespace mtperf {

namespace {

constexpr std::string_view kMetrics[] = {"throughput",
                                         "throughput_c2s",
                                         "throughput_s2c",
                                         "transaction_rate",
                                         "latency_mean",
                                         "latency_p50",
                                         "latency_p90",
                                         "latency_p99",
                                         "latency_p99_9",
                                         "latency_max",
                                         "loss",
                                         "retransmits",
                                         "errors",
                                         "verify",
                                         "jain",
                                         "local_cpu",
                                         "remote_cpu",
                                         "longest_stall",
                                         "flows_not_connected"};

Check to_check(const CheckTerm& t) {
  bool known = false;
  for (auto m : kMetrics)
    known = known || m == t.subject;
  if (!known) {
    std::string list;
    for (auto m : kMetrics)
      list += (list.empty() ? "" : ", ") + std::string(m);
    throw std::invalid_argument("check '" + t.text + "': unknown figure '" + t.subject +
                                "' (one of " + list + ")");
  }
  return Check{t.subject, t.op, t.value, t.text};
}

}  // namespace

namespace {

// The figure a metric names, or why the run has none.
std::optional<double> figure(const std::string& m, const Report& r, std::string& why) {
  const Summary& s = r.summary;
  if (m == "throughput") return s.throughput_bps;
  if (m == "throughput_c2s") return s.throughput_c2s_bps;
  if (m == "throughput_s2c") return s.throughput_s2c_bps;
  if (m == "transaction_rate") return s.transaction_rate;
  if (m.starts_with("latency_")) {
    if (!s.latency) {
      why = "no latency measured (rr and crr measure round trips)";
      return std::nullopt;
    }
    const LatencyFigures& l = *s.latency;
    if (m == "latency_mean") return l.mean_us;
    if (m == "latency_p50") return l.p50_us;
    if (m == "latency_p90") return l.p90_us;
    if (m == "latency_p99") return l.p99_us;
    if (m == "latency_p99_9") return l.p999_us;
    return l.max_us;
  }
  if (m == "loss") {
    if (!s.udp_loss_percent) why = "no loss measured (UDP streams count it)";
    return s.udp_loss_percent;
  }
  if (m == "retransmits") {
    double sum = 0;
    bool any = false;
    for (const auto& f : s.flows) {
      if (f.retransmits) {
        sum += *f.retransmits;
        any = true;
      }
    }
    if (!any) why = "no TCP_INFO from the senders";
    return any ? std::optional<double>(sum) : std::nullopt;
  }
  if (m == "errors") return double(s.errors.size());
  if (m == "verify") {
    if (!s.verify) why = "the run did not verify its payload (add --verify)";
    return s.verify ? std::optional<double>(double(s.verify->bad_receives)) : std::nullopt;
  }
  if (m == "jain") return s.jain_fairness;
  if (m == "longest_stall") return s.longest_stall_s;
  if (m == "flows_not_connected") return double(s.flows_not_connected.size());
  const auto& cpu = m == "local_cpu" ? s.local_cpu : s.remote_cpu;
  if (!cpu) why = "no CPU figure for that host";
  return cpu ? std::optional<double>(cpu->host.total.util) : std::nullopt;
}

// 11030000000 -> "11.03G"; small figures as they are.
std::string human(double v) {
  double a = std::fabs(v);
  if (a >= 1e12) return fmt::format("{:.4g}T", v / 1e12);
  if (a >= 1e9) return fmt::format("{:.4g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.4g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.4g}K", v / 1e3);
  return fmt::format("{:.6g}", v);
}

}  // namespace

std::vector<Check> parse_checks(std::string_view list) {
  std::vector<Check> out;
  for (const CheckTerm& t : parse_check_terms(list))
    out.push_back(to_check(t));
  return out;
}

std::vector<CheckResult> evaluate_checks(const std::vector<Check>& checks, const Report& r) {
  std::vector<CheckResult> out;
  for (const Check& c : checks) {
    CheckResult res;
    res.check = c;
    std::string why;
    res.measured = figure(c.metric, r, why);
    if (res.measured) {
      res.passed = check_holds(*res.measured, c.op, c.value);
      res.detail = "measured " + human(*res.measured);
    } else {
      res.detail = why;
    }
    out.push_back(std::move(res));
  }
  return out;
}

bool judged_per_interval(const Check& c) {
  const std::string& m = c.metric;
  return m == "throughput" || m == "throughput_c2s" || m == "throughput_s2c" ||
         m == "transaction_rate" || m == "errors";
}

std::vector<CheckResult> evaluate_interval_checks(const std::vector<Check>& checks,
                                                  const IntervalSample& s) {
  std::vector<CheckResult> out;
  double dt = s.end_s - s.start_s;
  for (const Check& c : checks) {
    if (!judged_per_interval(c)) continue;
    const std::string& m = c.metric;
    const CounterValues& v = s.sum;
    double bytes = m == "throughput"       ? double(v.bytes_sent + v.bytes_recv)
                   : m == "throughput_c2s" ? double(v.bytes_sent)
                                           : double(v.bytes_recv);
    double x = m == "errors"             ? double(v.errors)
               : dt <= 0                 ? 0
               : m == "transaction_rate" ? double(v.transactions) / dt
                                         : bytes * 8 / dt;
    CheckResult r;
    r.check = c;
    r.measured = x;
    r.passed = check_holds(x, c.op, c.value);
    r.detail = "measured " + human(x);
    out.push_back(std::move(r));
  }
  return out;
}

std::string interval_checks_text(const std::vector<CheckResult>& results) {
  std::string out;
  for (const auto& r : results) {
    out += " " + r.check.text + (r.passed ? " ok" : " FAIL (" + r.detail + ")");
  }
  return out;
}

bool all_passed(const std::vector<CheckResult>& results) {
  for (const auto& r : results)
    if (!r.passed) return false;
  return true;
}

std::string checks_text(const std::vector<CheckResult>& results) {
  std::string out;
  for (const auto& r : results)
    out += fmt::format("  check {:<28} {:<4} {}\n", r.check.text, r.passed ? "pass" : "FAIL",
                       r.detail);
  out += fmt::format("  verdict            {}\n", all_passed(results) ? "PASS" : "FAIL");
  return out;
}

nlohmann::json checks_json(const std::vector<CheckResult>& results) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : results) {
    list.push_back({{"check", r.check.text},
                    {"metric", r.check.metric},
                    {"limit", r.check.value},
                    {"measured", r.measured ? nlohmann::json(*r.measured) : nlohmann::json()},
                    {"passed", r.passed},
                    {"detail", r.detail}});
  }
  return list;
}

std::string checks_junit(const Report& r, const std::vector<CheckResult>& results) {
  size_t failures = 0;
  for (const auto& c : results)
    failures += !c.passed;
  std::string suite = fmt::format("mtperf run {} {} over {}", to_string(r.spec.workload),
                                  to_string(r.spec.proto), r.spec.transport);
  double t = r.summary.window_s * double(std::max<size_t>(1, r.iterations.size()));
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites tests=\"{}\" failures=\"{}\">\n", results.size(), failures);
  out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n",
                     svg::escape(suite), results.size(), failures, t);
  for (const auto& c : results) {
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"",
                       svg::escape(suite), svg::escape(c.check.text), t);
    if (c.passed) {
      out += fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n",
                         svg::escape(c.detail));
    } else {
      out += fmt::format(">\n      <failure message=\"{}\">{}: {}</failure>\n    </testcase>\n",
                         svg::escape(c.detail), svg::escape(c.check.text), svg::escape(c.detail));
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace mtperf
