#pragma once
#include "transports/api/registry.hpp"

namespace mtperf {
// Kernel TCP/UDP sockets over the emulated ATM link, Classical IP (RFC 2225) over TUN devices.
// The data path is the socket transport's; what differs is the link underneath, which
// `mtperf run -T clip` builds (or finds with --testbed). LAN Emulation (-T lane) is not built yet.
const TransportEntry& clip_transport_entry();
}  // namespace mtperf
