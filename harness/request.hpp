#pragma once
// What a run is asked to do, as the run layer takes it: the test, where it goes (in-process
// server, -H, a testbed, an emulated ATM line), over which adapters, how many iterations. The
// command line (cli/) parses options into one; this layer sets the hosts up, runs and tears
// down, and hands back the report (report/summary.hpp) for cli/ to render.
//
// Layers: cli -> harness -> report, control -> workloads -> transports -> platform, stats.
#include <optional>
#include <string>

#include "control/client.hpp"
#include "harness/error.hpp"
#include "platform/placement.hpp"
#include "report/checks.hpp"
#include "stats/confidence.hpp"
#include "workloads/spec.hpp"

namespace mtperf {

struct RunRequest {
  TestSpec spec;
  control::ClientOptions client;
  bool embedded = true;  // no -H: an in-process server on 127.0.0.1
  IterationRule rule;
  // --adapters/--per-controller/--pin: which adapters carry the flows (-P flows each) and where
  // their workers run. Absent: no placement, the flows go to -H's address.
  std::optional<PlacementRequest> placement;
  // --testbed [NAME]: client in the near namespace, server in the far one, over the testbed's
  // links; a testbed of that name that is not up is built for the run and removed after.
  std::optional<std::string> testbed;
  // -T clip|lane: the emulated ATM line built for the run (when no --testbed names one).
  std::string atm_rate = "oc12";  // oc3 | oc12 | cells/s
  bool atm_rate_given = false;    // --atm-rate on the command line (not the default)
  int atm_mtu = 0;                // 0: 9180 for CLIP, 1500 for LANE
  bool quiet = false;             // no progress or interim lines on stderr
  bool interim_lines = true;      // --interval lines on stderr (the text report's)
  // --check: the run's verdict (cli evaluates it on the report); with --interval the checks an
  // interval can judge are also shown on each interim line, and with client.stop_on_error a
  // failing one ends the run (spec.stop_on_error).
  std::vector<Check> checks;
};

}  // namespace mtperf
