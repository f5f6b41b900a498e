#pragma once
// One pair of a fleet: exactly what `mtperf run -H SERVER` runs (harness/), reduced to the
// figures the fleet's matrices hold.
#include <string>

#include "fleet/model.hpp"
#include "harness/request.hpp"
#include "report/summary.hpp"

namespace mtperf::fleet {

// The client side of `base` over `transport` against server (HOST:PORT), quietly. Never throws
// for a failed test: the result says why.
PairResult run_pair(const RunRequest& base, const std::string& transport,
                    const std::string& server);

// The report's figures as a pair result (ok when the report has no error).
PairResult reduce(const Report& r);

}  // namespace mtperf::fleet
