// `mtperf suite`: the main job on the embedded default — every workload on every transport
// usable here, against an in-process server on 127.0.0.1 (clip and lane over their emulated
// line between two namespaces), side by side.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "harness/suite_run.hpp"
#include "platform/command_line.hpp"
#include "platform/interrupt.hpp"
#include "report/render.hpp"
#include "report/suite.hpp"
#include "workloads/kind.hpp"

namespace mtperf::cli {

namespace {

struct Case {
  const char* label;
  std::vector<std::string> args;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"TCP stream 64K", {"-w", "stream"}},
      {"TCP maerts 64K", {"-w", "maerts"}},
      {"TCP bidir 64K", {"-w", "bidir"}},
      {"TCP rr 1/1", {"-w", "rr", "-r", "1,1"}},
      {"TCP rr 1/1 x4 flows", {"-w", "rr", "-r", "1,1", "-P", "4"}},
      {"UDP rr 1K/2K", {"-w", "rr", "-p", "udp", "-r", "1024,2048"}},
      {"TCP crr 1/1", {"-w", "crr"}},
      {"UDP stream 100M", {"-w", "stream", "-p", "udp", "--rate", "100M"}},
  };
  return all;
}

std::string figure(const Report& r) {
  const Summary& s = r.summary;
  std::string cpu = s.local_cpu ? fmt::format("{:.0f}%", s.local_cpu->host.total.util) : "n/a";
  bool rr = kind_of(r.spec.workload).headline == Headline::transactions;
  std::string v = rr ? fmt::format("{:.0f} t/s", s.transaction_rate)
                     : fmt::format("{:.1f} Mb/s", s.throughput_bps / 1e6);
  if (s.udp_loss_percent) v += fmt::format(" {:.2f}%loss", *s.udp_loss_percent);
  if (!s.errors.empty()) v += " ERR";
  return v + " cpu " + cpu;
}

// Every case's run on every usable transport; none where the transport cannot run the case (UDP
// over rdma). Adds the cases to `suite`.
std::vector<std::vector<std::optional<RunRequest>>> suite_requests(Suite& suite,
                                                                   const std::string& length) {
  std::vector<std::vector<std::optional<RunRequest>>> requests;
  for (const Case& c : cases()) {
    suite.cases.push_back(SuiteCase{c.label, c.args, {}});
    auto& row = requests.emplace_back();
    const bool udp = std::find(c.args.begin(), c.args.end(), "udp") != c.args.end();
    for (const auto& n : suite.transports) {
      if (udp && !transport_has_udp(n)) {
        row.emplace_back();
        continue;
      }
      std::vector<std::string> a = c.args;
      a.insert(a.end(), {"-T", n, "-l", length, "--warmup", "0.3", "-q"});
      row.emplace_back(parse_run_options(a));
    }
  }
  return requests;
}

std::string cell_text(const SuiteResult& r) {
  switch (r.status) {
    case SuiteStatus::ok:
    case SuiteStatus::failed:
      if (r.report) return figure(*r.report);
      return ("FAILED: " + r.message).substr(0, 32);
    case SuiteStatus::skipped:
      return "n/a (" + r.message + ")";
    case SuiteStatus::interrupted:
      return "(interrupted)";
  }
  return "?";
}

CommandSpec suite_spec() {
  CommandSpec spec("suite", "[-l SECONDS] [--format text|json]",
                   "Runs every workload on every transport usable here against an in-process "
                   "server, side by side.");
  spec.options.add_options()(
      "length,l",
      boost::program_options::value<std::string>()->default_value("2", "2")->value_name("SECONDS"),
      "measured window of each case")(
      "format",
      boost::program_options::value<std::string>()
          ->default_value("text", "text")
          ->value_name("FORMAT"),
      "text (a table, row by row as the cases run) | json (one document at the end)");
  return spec;
}

// The text table's title and head: a column per usable transport.
void print_head(const Suite& suite, const std::string& length) {
  std::string head = fmt::format("{:<22}", "workload");
  for (auto& n : suite.transports)
    head += fmt::format(" | {:<32}", n);
  std::printf(
      "mtperf suite: every workload on every usable transport (loopback; clip and lane "
      "over an emulated OC-12c line between two namespaces), %s s each\n%s\n%s\n",
      length.c_str(), head.c_str(), std::string(head.size(), '-').c_str());
}

}  // namespace

int suite_command(const std::vector<std::string>& args) {
  const CommandSpec spec = suite_spec();
  int rc = 0;
  const auto cl = read_command_line(spec, args, std::cout, std::cerr, rc);
  if (!cl) return rc;
  const std::string length = cl->get<std::string>("length");
  const std::string format = cl->get<std::string>("format");
  if (format != "text" && format != "json")
    return usage_error(spec, std::cerr,
                       "option " + cl->typed("format") + ": '" + format + "' is not text or json");
  const bool text = format == "text";
  Suite suite;
  try {
    suite.length_s = parse_run_options({"-l", length}).spec.duration_s;  // checked before any case
  } catch (const UsageError& e) {
    return usage_error(spec, std::cerr, e.what());
  }
  find_usable_transports(suite);
  if (text)
    for (const auto& u : suite.unusable)
      std::printf("transport %s: not usable here: %s\n", u.transport.c_str(), u.why.c_str());
  // Every case's run on every transport, checked before the first one starts.
  std::vector<std::vector<std::optional<RunRequest>>> requests;
  try {
    requests = suite_requests(suite, length);
  } catch (const UsageError& e) {
    return usage_error(spec, std::cerr, e.what());
  }
  if (text) print_head(suite, length);
  int failures = 0;
  catch_interrupts();
  run_suite(suite, requests, "no UDP", [&](const SuiteCase& sc) {
    std::string row = fmt::format("{:<22}", sc.label);
    for (const SuiteResult& r : sc.results) {
      failures += r.status == SuiteStatus::failed ? 1 : 0;
      row += fmt::format(" | {:<32}", cell_text(r));
    }
    if (text) std::printf("%s\n", row.c_str());
    std::fflush(stdout);
  });
  if (text)
    std::printf("(Mb/s = 10^6 bits/s; t/s = transactions/s; cpu = client host CPU utilization)\n");
  else
    std::printf("%s\n", suite_json(suite).dump(2).c_str());
  if (interrupts() > 0) {
    std::fprintf(stderr, "mtperf suite: interrupted; the table holds the cases measured so far\n");
    return kExitInterrupted;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace mtperf::cli
