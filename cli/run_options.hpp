#pragma once
// `mtperf run` options: parsed and checked here, before anything is set up. A bad option throws
// UsageError (cli/command_line.hpp) naming the option; run_command prints it and exits with 2.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/command_line.hpp"
#include "control/client.hpp"
#include "platform/placement.hpp"
#include "report/checks.hpp"
#include "stats/confidence.hpp"
#include "workloads/spec.hpp"

namespace mtperf::cli {

enum class Format { text, json, csv, junit };

struct RunOptions {
  TestSpec spec;
  control::ClientOptions client;
  bool embedded = true;  // no -H: an in-process server on 127.0.0.1
  Format format = Format::text;
  std::string output;         // -o FILE, "" = stdout
  std::string histogram;      // --histogram FILE|-: the latency buckets
  std::vector<Check> checks;  // --check: the run's verdict (exit 3 when one fails)
  IterationRule rule;
  // --adapters/--per-controller/--bind: which adapters carry the flows (-P flows each) and where
  // their workers run. Absent: no placement, the flows go to -H's address.
  std::optional<PlacementRequest> placement;
  // --testbed [NAME]: client in the near namespace, server in the far one, over the testbed's
  // links; a testbed of that name that is not up is built for the run and removed after.
  std::optional<std::string> testbed;
  // -T clip|lane: the emulated ATM line built for the run (when no --testbed names one).
  std::string atm_rate = "oc12";  // oc3 | oc12 | cells/s
  bool atm_rate_given = false;    // --atm-rate on the command line (not the default)
  int atm_mtu = 0;                // 0: 9180 for CLIP, 1500 for LANE
  bool quiet = false;
  bool help = false;
};

RunOptions parse_run_options(const std::vector<std::string>& args);
// The command `mtperf run`: its synopsis and options (sweep lists them as its own run options).
CommandSpec run_spec();
std::string run_usage();

// "64K" -> 65536 (K, M, G are powers of 1024 for sizes)
uint64_t parse_size(const std::string& option, const std::string& text);
// "100M" -> 1e8 (k, M, G are powers of 1000 for rates, bits/s)
double parse_rate(const std::string& option, const std::string& text);

}  // namespace mtperf::cli
