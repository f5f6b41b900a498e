#pragma once
// Runs over a line the transport brings (its registry entry's line hook, transports/api/line.hpp):
// with --testbed NAME and a line of that name up, over it; otherwise over a line built for the run
// in this process (one adapter pair, or as many as --adapters auto:N asks for, with the request's
// line options), removed after the run. Nothing here knows what the line is.
#include <optional>
#include <string>

#include "harness/request.hpp"
#include "report/summary.hpp"
#include "transports/api/line.hpp"

namespace mtperf {

// The line hook of the transport named `transport`; nullptr when it runs over the hosts as they
// are. Throws std::invalid_argument for a transport this build does not have.
const LineHook* line_hook_of(const std::string& transport);

// The line o goes over: the one `testbed` (--testbed NAME) names when it is up (checked by the
// hook against o's transport and line options), else one built with `adapters` adapter pairs.
// Throws RequestError when o does not fit the line, std::exception when it cannot be built.
Line line_for(const RunRequest& o, const std::optional<std::string>& testbed, const LineHook& hook,
              int adapters);

// The whole run over o's line, between its two hosts.
Report run_on_line(const RunRequest& o, const LineHook& hook);

}  // namespace mtperf
