#pragma once
// `mtperf run -T clip|lane`: the test over the emulated ATM line. With --testbed NAME and an
// `mtperf atm up --name NAME` testbed up, over its links; otherwise over a testbed built for the
// run in this process (one adapter pair, or as many as --adapters auto:N asks for, at
// --atm-rate and --atm-mtu), removed after the run.
#include <memory>
#include <optional>
#include <string>

#include "harness/request.hpp"
#include "platform/netns.hpp"
#include "report/summary.hpp"

namespace mtperf {

// The transport runs over a line it emulates (its registry entry says so).
bool is_atm_transport(const std::string& name);
Report run_on_atm(const RunRequest& o);

// The hosts of the `mtperf atm up` testbed NAME when it is up (checked to be of the transport's
// kind); nothing when no such testbed is up.
std::optional<TestHosts> atm_testbed_hosts(const std::string& name, const std::string& kind);

// An emulated ATM testbed built in this process for o's transport, --atm-rate and --atm-mtu, with
// `adapters` adapter pairs; removed when the returned handle goes.
struct AtmHosts {
  std::shared_ptr<void> owner;  // keeps the testbed (and its emulator threads) alive
  TestHosts hosts;
};
AtmHosts build_atm_testbed(const RunRequest& o, int adapters);

}  // namespace mtperf
