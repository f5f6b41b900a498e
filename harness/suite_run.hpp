#pragma once
// The runs of `mtperf suite`: every case on every transport usable here, against an in-process
// server on 127.0.0.1 (clip and lane over their emulated line between two namespaces, built for
// each case).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/request.hpp"
#include "report/suite.hpp"

namespace mtperf {

// Probes every registered transport: the usable ones into s.transports (the columns), the others
// with the probe's reason into s.unusable.
void find_usable_transports(Suite& s);

// Whether the transport's probe lists UDP (rdma: reliable connections only).
bool transport_has_udp(const std::string& name);

// Runs requests[case][transport] (in the order of s.cases and s.transports) into each case's
// results; an absent request is a case the transport cannot run (`skipped`, the reason in
// skip_reason). `on_case` is called after each case, for the row printed as it goes. SIGINT/
// SIGTERM marks the cases not yet run `interrupted`.
void run_suite(Suite& s, const std::vector<std::vector<std::optional<RunRequest>>>& requests,
               const std::string& skip_reason,
               const std::function<void(const SuiteCase&)>& on_case);

}  // namespace mtperf
