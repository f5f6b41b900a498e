#pragma once
// How one worker's RDMA resources are sized (verbs/layout.hpp's Layout), from the workload's
// EngineConfig and the options. Pure (no verbs header), so the memory budget can be computed
// before anything is allocated, and tested on any host.
#include "transports/api/transport.hpp"
#include "verbs/layout.hpp"
#include "verbs/settings.hpp"

namespace mtperf::rdma {

// Throws std::invalid_argument when the worker would hold more slots than a completion's
// 16-bit buffer id can name.
Layout make_layout(const EngineConfig& cfg, const RdmaSettings& s, bool per_transaction);

}  // namespace mtperf::rdma
