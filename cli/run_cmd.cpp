#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "cli/atm_run.hpp"
#include "cli/commands.hpp"
#include "cli/hosts_run.hpp"
#include "cli/run_options.hpp"
#include "control/local_server.hpp"
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
    case Format::junit:
      return checks_junit(r, checks);
  }
  return "";
}

IntervalCallback interim_printer(const RunOptions& o) {
  if (o.quiet || o.spec.interval_s <= 0 || o.format != Format::text) return {};
  // Each line in the workload's own unit, as its headline: transactions for rr/crr, bits for
  // the streams (whose byte counts mean nothing as a rate of transactions, and vice versa).
  const bool rr = o.spec.workload == Workload::rr || o.spec.workload == Workload::crr;
  return [rr](const IntervalSample& s) {
    double dt = s.end_s - s.start_s;
    if (dt <= 0) return;
    if (rr) {
      std::fprintf(stderr, "  [%6.2f-%6.2f s] %10.1f trans/s\n", s.start_s, s.end_s,
                   double(s.sum.transactions) / dt);
      return;
    }
    double mbps = double(s.sum.bytes_sent + s.sum.bytes_recv) * 8 / dt / 1e6;
    std::fprintf(stderr, "  [%6.2f-%6.2f s] %10.2f Mbit/s (sent+received here)\n", s.start_s,
                 s.end_s, mbps);
  };
}

}  // namespace

Report run_iterations(const RunOptions& o, const control::ClientOptions& client,
                      const Placement* placement) {
  Report r;
  r.spec = o.spec;
  if (placement) r.placement = *placement;
  r.rule = o.rule;
  r.environment = environment_json(MTPERF_VERSION);
  bool progress = !o.quiet && isatty(STDERR_FILENO) &&
                  (o.spec.duration_s + o.spec.warmup_s) * o.rule.max_iterations > 3;
  std::vector<double> samples;
  for (int i = 0; i < o.rule.max_iterations; ++i) {
    if (progress) {
      std::fprintf(stderr, "\r  iteration %d of at most %d (%.0f s each)...", i + 1,
                   o.rule.max_iterations, o.spec.duration_s + o.spec.warmup_s);
    }
    auto outcome = control::run_test(o.spec, client, interim_printer(o));
    r.spec.flow_servers = outcome.flow_servers;  // the test as it went to the server
    r.iterations.push_back(summarize(o.spec, outcome, placement));
    samples.push_back(headline(o.spec, r.iterations.back()));
    if (iterations_done(samples, o.rule) || interrupts() > 0) break;
  }
  if (progress) std::fprintf(stderr, "\r%60s\r", "");
  finish_report(r);
  return r;
}

Report run_where_told(const RunOptions& o, std::unique_ptr<control::LocalServer>& local) {
  if (is_atm_transport(o.spec.transport) && (o.testbed || o.embedded))
    return run_on_atm(o);  // the emulated ATM line: its own testbed, or the one --testbed names
  if (o.testbed) return run_on_testbed(o, *o.testbed);
  control::ClientOptions client = o.client;
  if (o.embedded) {
    if (!local)
      local =
          std::make_unique<control::LocalServer>(control::own_server_options(o.client.max_memory));
    client.server = local->address();
  }
  return run_placed(o, client);
}

std::string where_told(const RunOptions& o) {
  if (is_atm_transport(o.spec.transport) && (o.testbed || o.embedded))
    return o.testbed ? "the emulated ATM testbed " + *o.testbed
                     : "an emulated ATM line between two namespaces, built for each run";
  if (o.testbed) return "testbed " + *o.testbed;
  return o.embedded ? "loopback, an in-process server" : "server " + o.client.server;
}

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
    std::string text = render(r, o.format, checks);
    if (o.output.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      std::ofstream out(o.output);
      if (!(out << text)) throw std::runtime_error("cannot write " + o.output);
    }
    if (!o.histogram.empty()) write_histogram(o.histogram, r.summary.latency_histogram);
    if (interrupts() > 0) {
      std::fprintf(stderr, "mtperf run: interrupted; the report is a partial result\n");
      return kExitInterrupted;
    }
    if (r.summary.errors.empty()) {
      if (all_passed(checks)) return 0;
      std::string failed;
      for (const auto& c : checks)
        if (!c.passed)
          failed += (failed.empty() ? "" : ", ") + c.check.text + " (" + c.detail + ")";
      std::fprintf(stderr, "mtperf run: checks failed: %s\n", failed.c_str());
      return kExitCheckFailed;
    }
    // The report says everything; the exit status and one line on stderr say that it failed.
    const auto& errors = r.summary.errors;
    std::string more =
        errors.size() > 1 ? " (and " + std::to_string(errors.size() - 1) + " more errors)" : "";
    std::fprintf(stderr, "mtperf run: the test failed: %s%s\n", errors.front().c_str(),
                 more.c_str());
    return 1;
  } catch (const UsageError& e) {  // found once the hosts were known: a testbed of another kind
    return usage_error(run_spec(), std::cerr, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtperf run: %s\n", e.what());
    return interrupts() > 0 ? kExitInterrupted : 1;
  }
}

}  // namespace mtperf::cli
