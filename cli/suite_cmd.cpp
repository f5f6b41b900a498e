// `mtperf suite`: the main job on the embedded default — every workload on every transport
// usable here, against an in-process server on 127.0.0.1 (clip and lane over their emulated
// line between two namespaces), side by side.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "control/local_server.hpp"
#include "harness/atm_run.hpp"
#include "harness/hosts_run.hpp"
#include "harness/run.hpp"
#include "platform/interrupt.hpp"
#include "report/render.hpp"
#include "report/suite.hpp"
#include "transports/api/registry.hpp"

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
  bool rr = r.spec.workload == Workload::rr || r.spec.workload == Workload::crr;
  std::string v = rr ? fmt::format("{:.0f} t/s", s.transaction_rate)
                     : fmt::format("{:.1f} Mb/s", s.throughput_bps / 1e6);
  if (s.udp_loss_percent) v += fmt::format(" {:.2f}%loss", *s.udp_loss_percent);
  if (!s.errors.empty()) v += " ERR";
  return v + " cpu " + cpu;
}

}  // namespace

int suite_command(const std::vector<std::string>& args) {
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
  std::vector<std::string> names;
  std::vector<std::string> no_udp;  // transports whose probe lists no "udp" (rdma: RC only)
  for (const TransportEntry& e : transports()) {
    ProbeResult p = e.probe("/");
    if (p.usable) {
      names.emplace_back(e.name);
      if (std::find(p.features.begin(), p.features.end(), "udp") == p.features.end()) {
        no_udp.emplace_back(e.name);
      }
    } else {
      suite.unusable.push_back({std::string(e.name), p.why});
      if (text)
        std::printf("transport %s: not usable here: %s\n", std::string(e.name).c_str(),
                    p.why.c_str());
    }
  }
  suite.transports = names;
  std::string head = fmt::format("{:<22}", "workload");
  for (auto& n : names)
    head += fmt::format(" | {:<32}", n);
  if (text)
    std::printf(
        "mtperf suite: every workload on every usable transport (loopback; clip and lane "
        "over an emulated OC-12c line between two namespaces), %s s each\n%s\n%s\n",
        length.c_str(), head.c_str(), std::string(head.size(), '-').c_str());
  control::LocalServer server(control::own_server_options());
  control::ClientOptions client;
  client.server = server.address();
  int failures = 0;
  catch_interrupts();
  for (const Case& c : cases()) {
    if (interrupts() > 0) break;
    std::string row = fmt::format("{:<22}", c.label);
    SuiteCase& result = suite.cases.emplace_back(SuiteCase{c.label, c.args, {}});
    for (auto& n : names) {
      if (interrupts() > 0) {
        result.results.push_back({n, SuiteStatus::interrupted, std::nullopt, ""});
        row += fmt::format(" | {:<32}", "(interrupted)");
        continue;
      }
      std::vector<std::string> a = c.args;
      bool udp = std::find(a.begin(), a.end(), "udp") != a.end();
      if (udp && std::find(no_udp.begin(), no_udp.end(), n) != no_udp.end()) {
        result.results.push_back({n, SuiteStatus::skipped, std::nullopt, "no UDP"});
        row += fmt::format(" | {:<32}", "n/a (no UDP)");
        continue;
      }
      a.insert(a.end(), {"-T", n, "-l", length, "--warmup", "0.3", "-q"});
      try {
        RunOptions o = parse_run_options(a);
        // The emulated ATM transports run between two namespaces over their own line (built
        // for each case), never over loopback.
        Report r = is_atm_transport(n) ? run_on_atm(o) : run_iterations(o, client);
        failures += r.summary.errors.empty() ? 0 : 1;
        row += fmt::format(" | {:<32}", figure(r));
        SuiteStatus status = r.summary.errors.empty() ? SuiteStatus::ok : SuiteStatus::failed;
        result.results.push_back({n, status, std::move(r), ""});
      } catch (const std::exception& e) {
        ++failures;
        result.results.push_back({n, SuiteStatus::failed, std::nullopt, e.what()});
        row += fmt::format(" | {:<32}", std::string("FAILED: ") + e.what()).substr(0, 35);
      }
    }
    if (text) std::printf("%s\n", row.c_str());
    std::fflush(stdout);
  }
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
