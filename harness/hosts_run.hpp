#pragma once
// Runs over chosen adapters: placement (which adapters, which CPU per flow, which local address
// per flow) on this host's topology or a testbed's, and the testbed run itself (client in the
// near namespace, server on a thread in the far one).
#include <string>
#include <vector>

#include "harness/request.hpp"
#include "platform/netns.hpp"
#include "platform/placement.hpp"
#include "platform/topology.hpp"
#include "report/summary.hpp"

namespace mtperf {

// A placement made concrete for the client: per placement flow, its source address and CPU.
struct PlannedFlows {
  Placement placement;
  std::vector<std::string> sources;  // per placement flow
  std::vector<int> cpus;             // per flow of flows_total(): the worker's CPU, -1 = unpinned
};

// The adapters of a testbed's near host, as a topology: veth links are virtual adapters without
// IRQs; emulated links carry their controller and interrupt CPUs.
Topology topology_of_hosts(const TestHosts& hosts);

// Places the request on `topology` and finds each adapter's address among `addresses` (the first
// IPv4 one, else a global IPv6 one). Throws std::invalid_argument when an adapter has none.
PlannedFlows plan_flows(const PlacementRequest& request, const Topology& topology,
                        const std::vector<InterfaceAddress>& addresses, const TestSpec& spec);

// The iterations of one test against client.server (harness/run.cpp). With `placement`, its
// flows' sources and CPUs are in `client` already and the report carries it.
Report run_iterations(const RunRequest& o, const control::ClientOptions& client,
                      const Placement* placement = nullptr);

// `run --adapters` on this host (no testbed): the embedded server or -H.
Report run_placed(const RunRequest& o, const control::ClientOptions& client);

// The whole run between a testbed's two hosts. Without o.placement the flows use the first link.
Report run_on_hosts(const RunRequest& o, const TestHosts& hosts);

// --testbed NAME: the hosts of the testbed of that name when it is up; otherwise builds a veth
// testbed with as many links as the placement asks for (auto:N, else 1), runs, and removes it.
Report run_on_testbed(const RunRequest& o, const std::string& name);

}  // namespace mtperf
