#pragma once
// Classical IP over ATM (RFC 2225) stations of an AtmLink: the hosts' ATMARP clients and the
// LIS's ATMARP server. Internal to the link (see link.hpp).
//
//   host                                   ATMARP server (at the switch)
//     <── InATMARP_Request (on the new VC) ──
//     ── InATMARP_Reply (my IP, my ATM) ───>   registers the host
//     ── ATMARP_Request (target = my IP) ──>   confirms the registration
//     <── ATMARP_Reply (my ATM address) ────   host is ready
//   first packet to B: held (bounded), then
//     ── ATMARP_Request (target = B) ──────>
//     <── ATMARP_Reply (B's ATM) or NAK ─────   reply: the switch routes B's ATM address to the
//                                               data VC; held packets go. NAK: they are dropped.
// With inatmarp_pvc, each host instead sends InATMARP_Request on its PVC to the other host and
// learns the address from the InATMARP_Reply; no server is involved.
#include <memory>

#include "atmlink/link.hpp"

namespace mtperf::atm {

std::unique_ptr<Station> make_clip_host(const LinkConfig& config, int self, HostCounters& counters);
std::unique_ptr<Station> make_atmarp_server_station(const LinkConfig& config);

}  // namespace mtperf::atm
