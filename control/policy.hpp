#pragma once
// The server's policy: what one test may make the server spend, beyond the protocol's own bounds
// (workloads/spec.hpp kLimits). Checked after the TEST is authenticated and validated, before
// anything is set up. Pure: the host's facts are passed in, so the check can be tested against
// any host and fuzzed.
#include <string>
#include <vector>

#include "control/server.hpp"
#include "workloads/spec.hpp"

namespace mtperf::control {

struct HostFacts {
  std::vector<int> online_cpus;
  // Congestion-control names a socket may choose here (platform/host_limits.hpp).
  std::vector<std::string> congestion;
};

// The host this process runs on, read under opts.proc_root. Throws std::runtime_error naming
// what it could not read.
HostFacts read_host_facts(const ServerOptions& opts);

// Throws std::invalid_argument "<field>: <what was asked> is over this server's limit of <n>
// (mtperf serve --<option>)" for the first rule the test breaks: flows (and so listeners),
// worker threads, transport threads (extra_threads_per_worker x workers), server CPUs not online
// or not offered, a congestion control the host does not allow.
void check_policy(const TestSpec& spec, const ServerOptions& opts, const HostFacts& host,
                  uint32_t extra_threads_per_worker);

// The congestion-control rule alone (a local run checks it too): an empty name is the kernel's
// default; any other must be in `allowed`.
void check_congestion(const std::string& name, const std::vector<std::string>& allowed);

}  // namespace mtperf::control
