#pragma once
// What a run is asked to do, as the run layer takes it: the test, where it goes (in-process
// server, -H, a testbed, a line the transport brings), over which adapters, how many iterations.
// The command line (cli/) parses options into one; this layer sets the hosts up, runs and tears
// down, and hands back the report (report/summary.hpp) for cli/ to render.
//
// Layers: cli -> harness -> report, control -> workloads -> transports -> platform, stats.
#include <optional>
#include <string>

#include "control/client.hpp"
#include "platform/placement.hpp"
#include "platform/request_error.hpp"
#include "report/checks.hpp"
#include "stats/confidence.hpp"
#include "transports/api/line.hpp"
#include "workloads/spec.hpp"

namespace mtperf {

struct RunRequest {
  TestSpec spec;
  control::ClientOptions client;
  bool embedded = true;  // no -H: an in-process server on 127.0.0.1
  // --peer NAME: -H runs another tool's server, spoken to in its own protocol (peers/: "iperf3").
  std::string peer;
  // --count N: with a peer whose servers run a fixed number of iterations (perftest's -n), the
  // messages (stream) or round trips (rr) to run; 0: not given.
  uint64_t count = 0;
  // --get-server-output: with --peer iperf3, the server's own report of the test, shown after
  // this side's.
  bool peer_server_output = false;
  IterationRule rule;
  // --adapters/--per-controller/--pin: which adapters carry the flows (-P flows each) and where
  // their workers run. Absent: no placement, the flows go to -H's address.
  std::optional<PlacementRequest> placement;
  // --testbed [NAME]: client in the near namespace, server in the far one, over the testbed's
  // links; a testbed of that name that is not up is built for the run and removed after.
  std::optional<std::string> testbed;
  // A transport that brings its own line (transports/api/line.hpp): the options of the line built
  // for the run, or checked against the one --testbed names; only those given ("rate" from
  // --atm-rate, "mtu" from --atm-mtu), the line's defaults for the rest.
  LineOptions line_options;
  bool quiet = false;         // no progress or interim lines on stderr
  bool interim_lines = true;  // --interval lines on stderr (the text report's)
  // --check: the run's verdict (cli evaluates it on the report); with --interval the checks an
  // interval can judge are also shown on each interim line, and with client.stop_on_error a
  // failing one ends the run (spec.stop_on_error).
  std::vector<Check> checks;
};

}  // namespace mtperf
