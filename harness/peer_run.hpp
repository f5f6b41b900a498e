#pragma once
// `mtperf run --peer NAME -H HOST`: the run against another tool's server (peers/), its
// iterations and its report, with the peer's own counts beside this side's (report/peer.hpp).
#include "harness/request.hpp"
#include "report/summary.hpp"

namespace mtperf {

// Checks that the peer can run o (RequestError, exit 2, before anything connects: an unknown
// peer, a workload or option it has no equivalent for, no -H).
void check_peer_request(const RunRequest& o);
Report run_with_peer(const RunRequest& o);

}  // namespace mtperf
