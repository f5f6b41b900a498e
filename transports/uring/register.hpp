#pragma once
#include "transports/api/registry.hpp"

namespace mtperf {
// Kernel TCP/UDP sockets driven through io_uring (liburing), one ring per worker thread.
const TransportEntry& uring_transport_entry();
}  // namespace mtperf
