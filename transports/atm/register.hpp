#pragma once
#include "transports/api/registry.hpp"

namespace mtperf {
// Kernel TCP/UDP sockets over the emulated ATM link: Classical IP (RFC 2225) over TUN devices
// (clip), or LAN Emulation (LANE v1) over TAP devices (lane). The data path is the socket
// transport's; what differs is the link underneath, which their line hook (hook.hpp) builds
// for `mtperf run -T clip|lane` (or finds with --testbed).
const TransportEntry& clip_transport_entry();
const TransportEntry& lane_transport_entry();
}  // namespace mtperf
