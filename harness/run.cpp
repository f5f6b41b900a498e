#include "harness/run.hpp"

#include <unistd.h>

#include <cstdio>

#include "control/local_server.hpp"
#include "harness/hosts_run.hpp"
#include "harness/line_run.hpp"
#include "harness/peer_run.hpp"
#include "platform/interrupt.hpp"
#include "report/render.hpp"
#include "workloads/kind.hpp"

namespace mtperf {
namespace {

// An interim line: the interval's figure in the workload's own unit, as its headline:
// transactions for rr/crr, bits for the streams (whose byte counts mean nothing as a rate of
// transactions, and vice versa), then the verdict of each check the interval can judge.
void print_interim(bool rr, const IntervalSample& s, const std::vector<CheckResult>& judged) {
  double dt = s.end_s - s.start_s;
  std::string verdicts = interval_checks_text(judged);
  if (rr) {
    std::fprintf(stderr, "  [%6.2f-%6.2f s] %10.1f trans/s%s\n", s.start_s, s.end_s,
                 double(s.sum.transactions) / dt, verdicts.c_str());
    return;
  }
  double mbps = double(s.sum.bytes_sent + s.sum.bytes_recv) * 8 / dt / 1e6;
  std::fprintf(stderr, "  [%6.2f-%6.2f s] %10.2f Mbit/s (sent+received here)%s\n", s.start_s,
               s.end_s, mbps, verdicts.c_str());
}

// What the clock thread calls at each interval's end: the interim line on stderr (unless quiet
// or another format keeps stderr for errors) and the interval's checks; returns the first check
// the interval failed, which ends the run under --stop-on-error.
IntervalCallback interval_watch(const RunRequest& o) {
  if (o.spec.interval_s <= 0) return {};
  const bool lines = !o.quiet && o.interim_lines;
  std::vector<Check> judged;
  for (const Check& c : o.checks)
    if (judged_per_interval(c)) judged.push_back(c);
  if (!lines && judged.empty()) return {};
  const bool rr = kind_of(o.spec.workload).headline == Headline::transactions;
  return [rr, lines, judged](const IntervalSample& s) -> std::string {
    if (s.end_s - s.start_s <= 0) return {};
    auto results = evaluate_interval_checks(judged, s);
    if (lines) print_interim(rr, s, results);
    for (const CheckResult& r : results) {
      if (!r.passed) {
        char when[64];
        std::snprintf(when, sizeof when, " in [%.2f-%.2f s]", s.start_s, s.end_s);
        return r.check.text + ": " + r.detail + when;
      }
    }
    return {};
  };
}

}  // namespace

Report run_iterations(const RunRequest& o, const control::ClientOptions& client,
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
    auto outcome = control::run_test(o.spec, client, interval_watch(o));
    r.spec.flow_servers = outcome.flow_servers;  // the test as it went to the server
    if (i == 0 && outcome.client.started_realtime_ns != 0)
      r.data_started_ns = outcome.client.started_realtime_ns;
    r.iterations.push_back(summarize(o.spec, outcome, placement));
    samples.push_back(headline(o.spec, r.iterations.back()));
    if (iterations_done(samples, o.rule) || interrupts() > 0) break;
    if (r.iterations.back().stopped_early) break;  // --stop-on-error: the first failure ends it
  }
  if (progress) std::fprintf(stderr, "\r%60s\r", "");
  finish_report(r);
  return r;
}

Report run_where_told(const RunRequest& o, std::unique_ptr<control::LocalServer>& local) {
  if (!o.peer.empty()) return run_with_peer(o);
  // A transport that brings its own line: the one --testbed names, or one built for the run.
  if (const LineHook* line = line_hook_of(o.spec.transport); line && (o.testbed || o.embedded))
    return run_on_line(o, *line);
  if (o.testbed) return run_on_testbed(o, *o.testbed);
  control::ClientOptions client = o.client;
  if (o.embedded) {
    if (!local)
      local =
          std::make_unique<control::LocalServer>(control::own_server_options(o.client.max_memory));
    control::aim_at_own_server(client, local->address());
  }
  return run_placed(o, client);
}

std::string where_told(const RunRequest& o) {
  if (const LineHook* line = line_hook_of(o.spec.transport); line && (o.testbed || o.embedded))
    return line->where(o.testbed);
  if (o.testbed) return "testbed " + *o.testbed;
  if (!o.peer.empty()) return o.peer + " server " + o.client.server;
  return o.embedded ? "loopback, an in-process server" : "server " + o.client.server;
}

}  // namespace mtperf
