#pragma once
#include "transports/api/registry.hpp"

namespace mtperf {
// Kernel TCP/UDP sockets (and MPTCP where the kernel has it), blocking or under epoll.
const TransportEntry& socket_transport_entry();
}  // namespace mtperf
