#pragma once
// `mtperf run -T clip|lane`: the test over the emulated ATM line. With --testbed NAME and an
// `mtperf atm up --name NAME` testbed up, over its links; otherwise over a testbed built for the
// run in this process (one adapter pair, or as many as --adapters auto:N asks for, at
// --atm-rate and --atm-mtu), removed after the run.
#include <string>

#include "cli/run_options.hpp"
#include "report/summary.hpp"

namespace mtperf::cli {

bool is_atm_transport(const std::string& name);
Report run_on_atm(const RunOptions& o);

}  // namespace mtperf::cli
