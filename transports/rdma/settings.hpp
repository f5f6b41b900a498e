#pragma once
// The capabilities the rdma transport's options give (transport.hpp's Caps). The options
// themselves, parsed into RdmaSettings and listed for the registry, are verbs/settings.hpp's.
// Pure, unit-tested on hosts without RDMA.
#include "transports/api/transport.hpp"
#include "verbs/settings.hpp"

namespace mtperf::rdma {

// The capabilities of a transport with these settings. max_inline is the cap asked for; the
// device's own limit is known only once a queue pair exists.
Caps rdma_caps(const RdmaSettings& s);

}  // namespace mtperf::rdma
