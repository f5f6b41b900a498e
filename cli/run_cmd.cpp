#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "control/local_server.hpp"
#include "harness/hosts_run.hpp"
#include "harness/run.hpp"
#include "platform/interrupt.hpp"
#include "report/render.hpp"

namespace mtperf::cli {
namespace {

void write_histogram(const std::string& where, const Histogram& h) {
  std::string text = "# latency histogram, ns: lo hi count\n";
  h.for_each_bucket(
      [&](uint64_t lo, uint64_t hi, uint64_t n) { text += fmt::format("{} {} {}\n", lo, hi, n); });
  if (where == "-") {
    std::fputs(text.c_str(), stdout);
    return;
  }
  std::ofstream out(where);
  if (!(out << text)) throw std::runtime_error("cannot write the histogram to " + where);
}

std::string render(const Report& r, Format f, const std::vector<CheckResult>& checks) {
  switch (f) {
    case Format::text:
      return report_text(r) + (checks.empty() ? "" : checks_text(checks));
    case Format::json: {
      nlohmann::json j = report_json(r);
      if (!checks.empty()) j["checks"] = checks_json(checks);
      return j.dump(2) + "\n";
    }
    case Format::csv:
      return report_csv(r, true);
    case Format::csv_flows:
      return report_flows_csv(r);
    case Format::junit:
      return checks_junit(r, checks);
  }
  return "";
}

void write_report(const std::string& text, const std::string& output) {
  if (output.empty()) {
    std::fputs(text.c_str(), stdout);
  } else {
    std::ofstream out(output);
    if (!(out << text)) throw std::runtime_error("cannot write " + output);
  }
}

// The exit status of a run that ended on its own, with a line on stderr for each thing that went
// wrong: flows that did not connect, an early stop, failed checks, errors.
int run_status(const Summary& s, const std::vector<CheckResult>& checks) {
  // Flows that did not connect do not fail the run (without --need-all it goes on with the
  // others, and --check flows_not_connected==0 fails it), but never pass unsaid.
  if (const auto& lost = s.flows_not_connected; !lost.empty()) {
    std::fprintf(stderr,
                 "mtperf run: %zu of %u flows did not connect (first: flow %u: %s); the figures "
                 "are those of the others (--need-all fails such a run)\n",
                 lost.size(), s.flows_asked, lost.front().flow, lost.front().error.c_str());
  }
  const auto& stop = s.stopped_early;
  if (stop) {
    std::fprintf(stderr, "mtperf run: stopped early at %.2f s (--stop-on-error): %s\n", stop->at_s,
                 stop->why.c_str());
  }
  if (s.errors.empty()) {
    // A run stopped at a counted error or a --verify mismatch failed, whatever the checks say;
    // one stopped at a failed interval check failed a check.
    bool stopped_at_error = stop && stop->cause != StopCause::check;
    if (all_passed(checks) && !stop) return 0;
    std::string failed;
    for (const auto& c : checks)
      if (!c.passed) failed += (failed.empty() ? "" : ", ") + c.check.text + " (" + c.detail + ")";
    if (!failed.empty()) std::fprintf(stderr, "mtperf run: checks failed: %s\n", failed.c_str());
    return stopped_at_error ? 1 : kExitCheckFailed;
  }
  // The report says everything; the exit status and one line on stderr say that it failed.
  const auto& errors = s.errors;
  std::string more =
      errors.size() > 1 ? " (and " + std::to_string(errors.size() - 1) + " more errors)" : "";
  std::fprintf(stderr, "mtperf run: the test failed: %s%s\n", errors.front().c_str(), more.c_str());
  return 1;
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  RunOptions o;
  try {
    o = parse_run_options(args);
  } catch (const UsageError& e) {
    return usage_error(run_spec(), std::cerr, e.what());
  }
  if (o.help) {
    std::fputs(run_usage().c_str(), stdout);
    return 0;
  }
  catch_interrupts();
  try {
    std::unique_ptr<control::LocalServer> server;
    Report r = run_where_told(o, server);
    const std::vector<CheckResult> checks = evaluate_checks(o.checks, r);
    write_report(render(r, o.format, checks), o.output);
    if (!o.histogram.empty()) write_histogram(o.histogram, r.summary.latency_histogram);
    if (interrupts() > 0) {
      std::fprintf(stderr, "mtperf run: interrupted; the report is a partial result\n");
      return kExitInterrupted;
    }
    return run_status(r.summary, checks);
  } catch (const UsageError& e) {  // found once the hosts were known: a testbed of another kind
    return usage_error(run_spec(), std::cerr, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtperf run: %s\n", e.what());
    return interrupts() > 0 ? kExitInterrupted : 1;
  }
}

}  // namespace mtperf::cli
