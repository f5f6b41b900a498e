#pragma once
// `mtperf topology [--root DIR] [--format text|json]`: prints every network adapter with its PCI
// controller, NUMA node, IRQs and interrupt CPUs. Returns 0, 1 on a read error, 2 on bad usage.
#include <ostream>
#include <string>
#include <vector>

namespace mtperf {

int topology_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace mtperf
