#pragma once
// Placement policy: which adapters a test uses and which CPU each flow's worker runs on. Pure: it
// reads a Topology and a request, touches nothing, and is therefore tested on fixture trees.
//
// Adapters: an explicit list, or auto:N — N adapters spread round-robin over PCI controllers
// (controller order by name, adapters within a controller by PCI address), at most K per
// controller. auto skips loopback, adapters that are down, and virtual adapters unless
// allow_virtual (emulated adapters, which name an emulated controller, count as real ones); a
// virtual adapter without a controller counts as its own controller.
//
// Binding (per flow): irq — the CPU that takes the adapter's packet interrupts (flows of one
// adapter spread over its IRQ CPUs; an adapter without IRQs takes the fallback CPUs, or stays
// unbound, and says why in `reason`); numa — every CPU of the adapter's NUMA node; cpus — the
// given list, round-robin over all flows; none — no binding.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "platform/topology.hpp"

namespace mtperf {

enum class BindMode { irq, numa, cpus, none };
std::string to_string(BindMode mode);  // "irq", "numa", "cpus", "none"

struct PlacementRequest {
  std::vector<std::string> adapters;  // explicit list; empty: choose auto_count adapters
  int auto_count = 0;                 // N of auto:N
  int per_controller = 0;             // K: at most K adapters per controller; 0 = no limit
  BindMode bind = BindMode::irq;
  std::vector<int> bind_cpus;      // the list for BindMode::cpus
  std::vector<int> fallback_cpus;  // BindMode::irq, adapters without IRQs: round-robin over these
  int flows_per_adapter = 1;       // P
  bool allow_virtual = false;      // auto may pick virtual adapters (veth testbeds)
};

inline constexpr int kMaxAdapters = 256;
inline constexpr int kMaxFlowsPerAdapter = 4096;

// "auto:4" or "eth0,eth1" into the request's adapters/auto_count; throws std::invalid_argument
// naming the text when it is malformed or out of bounds.
void parse_adapter_selection(std::string_view text, PlacementRequest& request);
// "irq", "numa", "none" or a CPU list such as "0-3,8"; throws std::invalid_argument.
void parse_bind(std::string_view text, PlacementRequest& request);

struct FlowPlacement {
  int flow = 0;          // 0-based over the whole test
  int adapter_flow = 0;  // 0-based within its adapter
  std::string adapter;
  std::string controller;     // "" when the adapter has none
  std::vector<int> irq_cpus;  // the adapter's packet-interrupt CPUs
  std::vector<int> irqs;      // the adapter's IRQ numbers (all of them), for its interrupt rate
  int numa_node = -1;
  int worker_cpu = -1;           // the one CPU the worker is pinned to; -1: not a single CPU
  std::vector<int> worker_cpus;  // the CPU set the worker may run on; empty: unbound
  std::string reason;            // why it was bound so (or not bound)
};

struct Placement {
  BindMode bind = BindMode::irq;
  std::vector<std::string> adapters;  // chosen, in order
  std::vector<FlowPlacement> flows;   // adapter-major: all flows of adapters[0], then [1], ...
  std::vector<std::string> notes;     // e.g. CPUs shared by several adapters
};

// Throws std::invalid_argument for a request that cannot be met (unknown adapter, fewer than N
// qualifying adapters, K exceeded by an explicit list), with the reason and what qualifies.
Placement place(const Topology& topology, const PlacementRequest& request);

nlohmann::json to_json(const Placement& placement);
std::string render_text(const Placement& placement);

}  // namespace mtperf
