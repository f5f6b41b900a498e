#pragma once
// A LinkPort for driving the emulated link's stations (CLIP hosts and ATMARP server, LANE
// clients, LES and BUS) with PDUs straight from the fuzzer, without the lines: what a station
// sends is kept for the target to check. The stations present, the PVCs between them, the
// largest PDU a line takes and the switch's routing (station_of) are the link's (link.cpp).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "atmlink/link.hpp"
#include "fuzz/fuzz_support.hpp"

namespace mtperf::fuzz {

struct SentPdu {
  int from = 0, to = 0;
  std::vector<std::uint8_t> sdu;
};

class FuzzPort final : public atm::LinkPort {
 public:
  explicit FuzzPort(const atm::LinkConfig& config) : config_(config) {
    const bool clip = config.mode == atm::LinkMode::kClip;
    for (int s = 0; s < atm::kStations; ++s)
      atm_[s] = atm::station_atm_address(config.adapter, s);
    present_ = {true, true, !clip || !config.inatmarp_pvc, !clip};
    const size_t host_sdu = clip ? config.mtu + atm::kMaxEncapHeaderBytes
                                 : std::max(config.lane_max_frame, atm::kLaneControlFrameBytes);
    max_sdu_ = std::max(host_sdu, atm::kLaneControlFrameBytes + 8);
  }

  // As the link: a PDU goes on a PVC that exists (hosts to each other and to the servers), while
  // the line has room, when it fits the line's largest PDU.
  bool send(int from, int to, const atm::SduParts& sdu) override {
    check(from >= 0 && from < atm::kStations && to >= 0 && to < atm::kStations,
          "a PDU to or from no station");
    check(present_[from], "a PDU from a station the link does not have");
    check(sdu.size() <= atm::kAal5MaxSduBytes, "a PDU larger than AAL5 carries");
    const bool servers = from >= atm::kServer && to >= atm::kServer;
    if (from == to || servers || !present_[to] || !room) return false;
    if (atm::aal5_cell_count(sdu.size()) > atm::aal5_cell_count(max_sdu_)) return false;
    SentPdu p{from, to, {}};
    p.sdu.reserve(sdu.size());
    p.sdu.insert(p.sdu.end(), sdu.head.begin(), sdu.head.end());
    p.sdu.insert(p.sdu.end(), sdu.body.begin(), sdu.body.end());
    p.sdu.insert(p.sdu.end(), sdu.zero_tail, 0);
    sent.push_back(std::move(p));
    return true;
  }
  bool line_has_room(int, int) const override { return room; }
  void deliver(atm::Side, std::span<const std::uint8_t> packet) override {
    check(packet.size() <= atm::kAal5MaxSduBytes, "a packet delivered larger than an SDU");
    ++delivered;
  }
  int station_of(const atm::AtmAddress& atm) const override {
    for (int s = 0; s < atm::kStations; ++s)
      if (present_[s] && atm_[s] == atm) return s;
    return -1;
  }
  const atm::LinkConfig& config() const override { return config_; }

  std::vector<SentPdu> sent;  // since the target last cleared it
  bool room = true;           // whether the lines take more
  std::uint64_t delivered = 0;

 private:
  atm::LinkConfig config_;
  std::array<atm::AtmAddress, atm::kStations> atm_{};
  std::array<bool, atm::kStations> present_{};
  size_t max_sdu_ = 0;
};

}  // namespace mtperf::fuzz
