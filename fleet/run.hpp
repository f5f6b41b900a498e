#pragma once
// One `mtperf fleet` process from its parsed options to its end: this rank's server and member
// and, on rank 0, the coordinator and the rendezvous record, with a watcher that turns an
// interrupt (SIGINT, SIGTERM) into a stop at every part's next wait. The command layer only
// parses and prints.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fleet/groups.hpp"
#include "fleet/launcher.hpp"
#include "fleet/model.hpp"
#include "fleet/pattern.hpp"
#include "harness/request.hpp"

namespace mtperf::fleet {

struct FleetRun {
  Launch launch;
  std::string key;    // "" = none: the command allows it on loopback alone, or with --insecure
  std::string bind;   // this rank's address ("" = any)
  uint16_t port = 0;  // the coordinator's, where the launcher names none
  RunRequest run;     // every pair's test (its transport set per pair)
  std::vector<std::string> transports;  // one matrix each
  int join_timeout_ms = 60000;
  int pair_timeout_ms = 60000;
  bool need_all = false;
  std::string pattern = "all-pairs";
  std::string pairs_text, pairs_name;  // --pairs FILE: its text and name
  GroupsSource groups;                 // --groups FILE | slurm
  Concurrency concurrency = Concurrency::round;
  // --retest N: the pairs to run again after the plan (indexes into the document's results),
  // asked before each of up to `retests` passes.
  std::function<std::vector<size_t>(const FleetDoc&)> retest;
  uint32_t retests = 1;
  std::optional<double> line_rate_bps;  // --line-rate, bits/s
  std::string results_log;              // --results-log FILE (rank 0): JSON Lines as they come
};

struct FleetOutcome {
  bool coordinated = false;  // rank 0: `doc` is the fleet's document
  FleetDoc doc;
  std::string member_error;  // this rank's own part failed ("" when it reached FINISH)
  bool interrupted = false;
};

// Runs this rank to the fleet's end (or `stop`, or an interrupt). Throws std::runtime_error
// when rank 0's coordinator cannot start (its port, the rendezvous file); a thread that cannot
// be started is such an error too, naming the limit.
FleetOutcome run(const FleetRun& r, std::atomic<bool>& stop);

// The transports this host can run a fleet's pairs over (not the line transports).
std::vector<std::string> usable_transports();

}  // namespace mtperf::fleet
