#include "harness/hosts_run.hpp"

#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "control/local_server.hpp"
#include "control/server.hpp"
#include "platform/request_error.hpp"
#include "transports/api/registry.hpp"

namespace mtperf {
namespace {

std::string address_of(const std::string& adapter, const std::vector<InterfaceAddress>& all) {
  const InterfaceAddress* v6 = nullptr;
  for (const auto& a : all) {
    if (a.interface != adapter) continue;
    if (a.family == AF_INET) return a.address;
    if (a.family == AF_INET6 && !a.address.starts_with("fe80:") && v6 == nullptr) v6 = &a;
  }
  if (v6 != nullptr) return v6->address;
  throw std::invalid_argument("adapter " + adapter + " has no IPv4 or global IPv6 address");
}

}  // namespace

Topology topology_of_hosts(const TestHosts& hosts) {
  Topology t;
  t.root = "(testbed " + hosts.near_ns + ")";
  std::map<std::string, PciController> controllers;
  for (const auto& l : hosts.links) {
    Adapter a;
    a.name = l.near_if;
    a.ifindex = l.index + 1;
    a.type = LinkType::virtual_link;
    a.kind = hosts.device_kind;
    a.admin_up = a.up = true;
    a.operstate = "up";
    if (!l.controller.empty()) mark_emulated(a, l.controller, l.cpus);
    if (!a.controller.empty()) {
      PciController& c = controllers[a.controller];
      c.name = a.controller;
      c.emulated = true;
      c.adapters.push_back(a.name);
    }
    t.adapters.push_back(std::move(a));
  }
  for (auto& [name, c] : controllers)
    t.controllers.push_back(std::move(c));
  return t;
}

PlannedFlows plan_flows(const PlacementRequest& request, const Topology& topology,
                        const std::vector<InterfaceAddress>& addresses, const TestSpec& spec) {
  PlannedFlows p;
  p.placement = place(topology, request);
  std::map<std::string, std::string> source_of;
  for (const auto& name : p.placement.adapters)
    source_of[name] = address_of(name, addresses);
  for (const auto& f : p.placement.flows)
    p.sources.push_back(source_of[f.adapter]);
  if (p.placement.flows.size() != spec.flows)
    throw std::invalid_argument("placement has " + std::to_string(p.placement.flows.size()) +
                                " flows for a test of " + std::to_string(spec.flows));
  for (uint32_t i = 0; i < spec.flows_total(); ++i) {
    const FlowPlacement& f = p.placement.flows[i % p.placement.flows.size()];
    int cpu = f.worker_cpu;
    // A flow bound to a set (its NUMA node) takes one CPU of it, in turn.
    if (cpu < 0 && !f.worker_cpus.empty())
      cpu = f.worker_cpus[size_t(f.adapter_flow) % f.worker_cpus.size()];
    p.cpus.push_back(cpu);
  }
  return p;
}

namespace {

Report run_planned(const RunRequest& o, control::ClientOptions client, const Topology& topology) {
  PlannedFlows plan = plan_flows(*o.placement, topology, interface_addresses(), o.spec);
  client.flow_sources = plan.sources;
  client.cpus = plan.cpus;
  return run_iterations(o, client, &plan.placement);
}

}  // namespace

Report run_placed(const RunRequest& o, const control::ClientOptions& client) {
  if (!o.placement) return run_iterations(o, client);
  return run_planned(o, client, read_topology("/"));
}

Report run_on_hosts(const RunRequest& o, const TestHosts& hosts) {
  if (hosts.links.empty()) throw std::invalid_argument("the testbed has no links");
  control::NamespaceServer server(hosts.far_ns);
  Report report;
  run_in(hosts.near_ns, [&] {
    control::ClientOptions client = o.client;
    // In its namespace, but in this process.
    control::aim_at_own_server(client,
                               hosts.links[0].far_addr + ":" + std::to_string(server.port()));
    if (!o.placement) {
      report = run_iterations(o, client);
      return;
    }
    PlacementRequest request = *o.placement;
    request.allow_virtual = true;
    RunRequest placed = o;
    placed.placement = request;
    report = run_planned(placed, client, topology_of_hosts(hosts));
  });
  return report;
}

Report run_on_testbed(const RunRequest& o, const std::string& name) {
  check_testbed_name(name);
  // A transport's line that is up under that name: measuring a veth testbed built beside it
  // would be a silent substitute.
  for (const LineHook* hook : line_hooks()) {
    const std::optional<LineUp> up = hook->line_up(name);
    if (!up) continue;
    const std::string& t = up->transport;
    throw RequestError("option --testbed: '" + name + "' is " + up->what +
                       (t.empty() ? " whose state file cannot be read"
                                  : " (" + t + "): run over it with -T " + t));
  }
  if (std::filesystem::exists(testbed_state_path(name)))
    return run_on_hosts(o, hosts_from_state(read_testbed_state(name)));
  TestbedOptions options;
  if (o.placement)
    options.adapters =
        o.placement->adapters.empty() ? o.placement->auto_count : int(o.placement->adapters.size());
  if (options.adapters < 1 || options.adapters > kMaxTestbedAdapters)
    throw std::invalid_argument("a testbed has 1.." + std::to_string(kMaxTestbedAdapters) +
                                " links");
  options.tag = name;
  Testbed bed(options);  // removed when this returns or throws
  return run_on_hosts(o, bed.hosts());
}

}  // namespace mtperf
