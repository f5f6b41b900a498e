// The emulated LAN's servers over the link's VCs (see lane_stations.hpp): the LECS and the LES
// at one station, the BUS at another.
#include <array>
#include <stdexcept>

#include "atmlink/lane_stations.hpp"

namespace mtperf::atm {
namespace {

bool is_host(int station) {
  return station == kNearHost || station == kFarHost;
}

class LesStation final : public Station {
 public:
  LesStation(const LinkConfig& c, ElanCounters& counters)
      : les_atm_(station_atm_address(c.adapter, kServer)),
        bus_atm_(station_atm_address(c.adapter, kBus)),
        max_frame_code_(lane_max_frame_code(c.lane_max_frame)),
        elan_name_(c.elan_name),
        les_(LesConfig{kLaneTypeEthernet, c.lane_max_frame, c.elan_name, 0}),
        counters_(counters) {}

  void start(std::uint64_t, LinkPort&) override {}  // clients start every exchange

  void on_pdu(int from, std::span<const std::uint8_t> sdu, std::uint64_t now_ns,
              LinkPort& port) override {
    if (!is_host(from)) return;
    LaneControlFrame request;
    try {
      request = decode_lane_control(sdu);
    } catch (const std::invalid_argument&) {
      return counters_.bad_frames.add();  // no answer: the client retries
    }
    switch (request.op) {
      case LaneOp::kConfigureRequest:
        return configure(from, request, port);
      case LaneOp::kJoinRequest:
        return join(from, request, now_ns, port);
      case LaneOp::kArpRequest:
        return le_arp(from, request, now_ns, port);
      case LaneOp::kFlushResponse:
        return relay_flush_response(request, port);
      case LaneOp::kArpResponse:
        return relay_arp_response(from, request, port);
      default:
        if (auto answer = les_.handle(request, now_ns))
          send_lane_control(port, kServer, from, *answer);
        return;
    }
  }

  void on_timer(std::uint64_t now_ns, LinkPort&) override { les_.expire(now_ns); }

 private:
  // The LECS's part: which LES serves this client, and the emulated LAN's parameters.
  void configure(int from, const LaneControlFrame& request, LinkPort& port) {
    LaneControlFrame r = request;
    r.op = LaneOp::kConfigureResponse;
    r.status = LaneStatus::kSuccess;
    if ((request.lan_type != 0 && request.lan_type != kLaneTypeEthernet) ||
        (request.max_frame_code != 0 && request.max_frame_code < max_frame_code_))
      r.status = LaneStatus::kInvalidRequestParameters;
    r.lan_type = kLaneTypeEthernet;
    r.max_frame_code = max_frame_code_;
    r.elan_name = elan_name_;
    r.target_atm = les_atm_;
    counters_.configures.add();
    send_lane_control(port, kServer, from, r);
  }

  void join(int from, const LaneControlFrame& request, std::uint64_t now_ns, LinkPort& port) {
    // A join over a control direct VC that already has a member replaces it, so a client
    // whose join response was lost is not locked out by its own registration.
    if (lecid_of_[from] != 0) les_.leave(lecid_of_[from]);
    lecid_of_[from] = 0;
    const std::optional<LaneControlFrame> r = les_.handle(request, now_ns);
    if (!r) return;
    if (r->status == LaneStatus::kSuccess) {
      lecid_of_[from] = r->requester_lecid;
      counters_.joins.add();
    } else {
      counters_.join_rejects.add();
    }
    send_lane_control(port, kServer, from, *r);
  }

  void le_arp(int from, const LaneControlFrame& request, std::uint64_t now_ns, LinkPort& port) {
    std::optional<LaneControlFrame> r;
    if (request.target_lan.tag == 1 && request.target_lan.mac == kBroadcastMac) {
      // The broadcast MAC resolves to the BUS: how a client finds its multicast send VC.
      r = request;
      r->op = LaneOp::kArpResponse;
      r->status = LaneStatus::kSuccess;
      r->target_atm = bus_atm_;
    } else {
      r = les_.handle(request, now_ns);
    }
    if (r) {
      counters_.arp_resolved.add();
      send_lane_control(port, kServer, from, *r);
      return;
    }
    // LANE v1: a request the LES cannot answer goes to every other LEC on its control
    // distribute VC; a LEC that represents the MAC (its own, or one behind a proxy LEC) answers,
    // and relay_arp_response() passes the answer on. Without one the client asks again, then
    // gives up.
    counters_.arp_unresolved.add();
    if (request.target_lan.tag != 1 || lecid_of_[from] == 0) return;
    bool flooded = false;
    for (const int host : {kNearHost, kFarHost}) {
      if (host == from || lecid_of_[host] == 0) continue;
      send_lane_control(port, kServer, host, request);
      flooded = true;
    }
    if (flooded) counters_.arp_flooded.add();
  }

  // A LEC's answer to a flooded LE_ARP request comes in on its control direct VC; the LES
  // passes it to the requester (named by its LECID) on the control distribute VC.
  void relay_arp_response(int from, const LaneControlFrame& response, LinkPort& port) {
    for (const int host : {kNearHost, kFarHost}) {
      if (host == from || lecid_of_[host] == 0 || lecid_of_[host] != response.requester_lecid)
        continue;
      send_lane_control(port, kServer, host, response);
      counters_.arp_relayed.add();
    }
  }

  // A flush response comes in on the responder's control direct VC; the LES passes it to the
  // requester (named by its LECID) on the control distribute VC.
  void relay_flush_response(const LaneControlFrame& response, LinkPort& port) {
    for (const int host : {kNearHost, kFarHost}) {
      if (lecid_of_[host] == 0 || lecid_of_[host] != response.requester_lecid) continue;
      send_lane_control(port, kServer, host, response);
      counters_.flushes_relayed.add();
    }
  }

  AtmAddress les_atm_, bus_atm_;
  std::uint8_t max_frame_code_;
  std::string elan_name_;
  Les les_;
  std::array<std::uint16_t, 2> lecid_of_{};  // [host station]: its LECID, 0 before it joined
  ElanCounters& counters_;
};

// The BUS forwards every frame from a client's multicast send VC onto the other clients'
// multicast forward VCs: broadcast and multicast frames, unicast frames whose destination the
// sender has not resolved yet, and flush requests. The sender's own copy is left out (a LEC
// would discard its own LECID anyway), which spares the sender's line the echo.
class BusStation final : public Station {
 public:
  explicit BusStation(ElanCounters& counters) : counters_(counters) {}

  void start(std::uint64_t, LinkPort&) override {}
  void on_timer(std::uint64_t, LinkPort&) override {}

  void on_pdu(int from, std::span<const std::uint8_t> sdu, std::uint64_t, LinkPort& port) override {
    if (!is_host(from)) return;
    for (const int host : {kNearHost, kFarHost}) {
      if (host == from) continue;
      if (port.send(kBus, host, SduParts{{}, sdu, 0})) {
        counters_.bus_forwarded.add();
      } else {
        counters_.bus_drops.add();
      }
    }
  }

 private:
  ElanCounters& counters_;
};

}  // namespace

bool send_lane_control(LinkPort& port, int from, int to, const LaneControlFrame& frame) {
  const std::array<std::uint8_t, kLaneControlFrameBytes> bytes = encode_lane_control(frame);
  return port.send(from, to, SduParts{{}, bytes, 0});
}

std::unique_ptr<Station> make_les_station(const LinkConfig& config, ElanCounters& counters) {
  return std::make_unique<LesStation>(config, counters);
}

std::unique_ptr<Station> make_bus_station(ElanCounters& counters) {
  return std::make_unique<BusStation>(counters);
}

}  // namespace mtperf::atm
