#pragma once
#include "transports/api/registry.hpp"

namespace mtperf {
// RDMA verbs (rdma-core: libibverbs, librdmacm) over RC queue pairs that rdma_cm connects.
const TransportEntry& rdma_transport_entry();
}  // namespace mtperf
