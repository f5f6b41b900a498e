#pragma once
// LAN Emulation (LANE v1, af-lane-0021) stations of an AtmLink: each host's LE client (LEC), and
// the emulated LAN's LE configuration server (LECS, beside the LES), LE server (LES) and
// broadcast and unknown server (BUS). Internal to the link (see link.hpp). Real control frames
// (lane_ctrl.hpp) and data frames (LECID + 802.3 frame) cross the link's VCs as AAL5 cells.
//
// VCs (PVCs of the switch, standing in for the SVCs LANE would signal):
//   host -> LES  configuration direct and control direct      LES -> host  control distribute
//   host -> BUS  multicast send                               BUS -> host  multicast forward
//   host -> host data-direct (one per direction)
//
//   LEC                                   LECS/LES                     BUS            peer LEC
//    ── LE_CONFIGURE_REQUEST ─────────────>  (LECS: the LES's address, ELAN name, frame size)
//    <── LE_CONFIGURE_RESPONSE ────────────
//    ── LE_JOIN_REQUEST (ATM, MAC) ───────>  assigns the LECID, registers the MAC
//    <── LE_JOIN_RESPONSE (LECID) ─────────
//    ── LE_ARP_REQUEST (ff:ff:ff:ff:ff:ff)─>  the BUS's address: the LEC is operational
//    <── LE_ARP_RESPONSE ──────────────────
//   broadcast/multicast frame ─────────────────────────────────────────> ── to the others ──>
//   unicast to an unknown MAC: the first frame (LANE's Maximum Unknown Frame Count, 1 per
//   second) goes through the BUS, later ones are held (max_pending per host, preallocated),
//    ── LE_ARP_REQUEST (peer MAC) ────────>
//    <── LE_ARP_RESPONSE (peer ATM) ───────
//    ── LE_FLUSH_REQUEST (on the BUS path, behind the frames sent that way) ─> ──────────────>
//                                          <── LE_FLUSH_RESPONSE (control direct) ─────────────
//    <── LE_FLUSH_RESPONSE (control distribute)
//   now every frame sent through the BUS has arrived: held frames, then all later frames to
//   that MAC, go on the data-direct VC, in order.
//
// A LEC discards frames carrying its own LECID and unicast frames for another MAC. LE_ARP
// entries age after 300 s (LANE's Aging Time) and are revalidated while still in use. Requests
// that go unanswered are sent again after 1 s, five times, then the entry fails and its held
// frames are dropped (counted). Nothing on the per-frame path allocates.
#include <memory>

#include "atmlink/link.hpp"

namespace mtperf::atm {

std::unique_ptr<Station> make_lane_client(const LinkConfig& config, int self,
                                          HostCounters& counters);
std::unique_ptr<Station> make_les_station(const LinkConfig& config, ElanCounters& counters);
std::unique_ptr<Station> make_bus_station(ElanCounters& counters);

// Sends one 108-byte control frame as an AAL5 SDU of its own (control path: encodes, may throw
// for an over-long ELAN name). False when the line refused it.
bool send_lane_control(LinkPort& port, int from, int to, const LaneControlFrame& frame);

}  // namespace mtperf::atm
