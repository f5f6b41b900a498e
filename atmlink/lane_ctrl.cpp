#include "atmlink/lane_ctrl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include "atmlink/bytes.hpp"

namespace mtperf::atm {
namespace {

constexpr std::array<std::size_t, 4> kFrameSizes = {1516, 4544, 9234, 18190};

void put_lan(std::uint8_t* p, const LanDestination& d) {
  store_be16(p, d.tag);
  std::memcpy(p + 2, d.mac.data(), d.mac.size());
}

LanDestination get_lan(const std::uint8_t* p) {
  LanDestination d;
  d.tag = load_be16(p);
  std::memcpy(d.mac.data(), p + 2, d.mac.size());
  return d;
}

bool known_op(std::uint16_t op) {
  switch (static_cast<LaneOp>(op)) {
    case LaneOp::kConfigureRequest:
    case LaneOp::kConfigureResponse:
    case LaneOp::kJoinRequest:
    case LaneOp::kJoinResponse:
    case LaneOp::kRegisterRequest:
    case LaneOp::kRegisterResponse:
    case LaneOp::kArpRequest:
    case LaneOp::kArpResponse:
    case LaneOp::kFlushRequest:
    case LaneOp::kFlushResponse:
      return true;
  }
  return false;
}

}  // namespace

const char* to_string(LaneOp op) {
  switch (op) {
    case LaneOp::kConfigureRequest:
      return "LE_CONFIGURE_REQUEST";
    case LaneOp::kConfigureResponse:
      return "LE_CONFIGURE_RESPONSE";
    case LaneOp::kJoinRequest:
      return "LE_JOIN_REQUEST";
    case LaneOp::kJoinResponse:
      return "LE_JOIN_RESPONSE";
    case LaneOp::kRegisterRequest:
      return "LE_REGISTER_REQUEST";
    case LaneOp::kRegisterResponse:
      return "LE_REGISTER_RESPONSE";
    case LaneOp::kArpRequest:
      return "LE_ARP_REQUEST";
    case LaneOp::kArpResponse:
      return "LE_ARP_RESPONSE";
    case LaneOp::kFlushRequest:
      return "LE_FLUSH_REQUEST";
    case LaneOp::kFlushResponse:
      return "LE_FLUSH_RESPONSE";
  }
  return "?";
}

std::array<std::uint8_t, kLaneControlFrameBytes> encode_lane_control(const LaneControlFrame& f) {
  if (f.elan_name.size() > kElanNameMaxBytes) {
    throw std::invalid_argument(
        fmt::format("ELAN name '{}' is {} bytes; LANE allows 32", f.elan_name, f.elan_name.size()));
  }
  std::array<std::uint8_t, kLaneControlFrameBytes> b{};
  store_be16(&b[0], 0xFF00);
  b[2] = kLaneProtocol;
  b[3] = kLaneVersion;
  store_be16(&b[4], static_cast<std::uint16_t>(f.op));
  store_be16(&b[6], static_cast<std::uint16_t>(f.status));
  for (int i = 0; i < 4; ++i)
    b[8 + i] = static_cast<std::uint8_t>(f.transaction_id >> (24 - 8 * i));
  store_be16(&b[12], f.requester_lecid);
  store_be16(&b[14], f.flags);
  put_lan(&b[16], f.source_lan);
  put_lan(&b[24], f.target_lan);
  std::copy(f.source_atm.begin(), f.source_atm.end(), b.begin() + 32);
  b[52] = f.lan_type;
  b[53] = f.max_frame_code;
  b[54] = f.number_tlvs;
  b[55] = static_cast<std::uint8_t>(f.elan_name.size());
  std::copy(f.target_atm.begin(), f.target_atm.end(), b.begin() + 56);
  std::copy(f.elan_name.begin(), f.elan_name.end(), b.begin() + 76);
  return b;
}

LaneControlFrame decode_lane_control(std::span<const std::uint8_t> b) {
  if (b.size() < kLaneControlFrameBytes) {
    throw std::invalid_argument(fmt::format(
        "LANE control frame of {} bytes is shorter than the 108-byte control header", b.size()));
  }
  if (load_be16(&b[0]) != 0xFF00) {
    throw std::invalid_argument(
        fmt::format("LANE control frame marker is 0x{:04x}, expected 0xff00", load_be16(&b[0])));
  }
  if (b[2] != kLaneProtocol || b[3] != kLaneVersion) {
    throw std::invalid_argument(fmt::format(
        "LANE control frame protocol/version {}/{}; only LANE v1 (1/1) is handled", b[2], b[3]));
  }
  if (!known_op(load_be16(&b[4]))) {
    throw std::invalid_argument(
        fmt::format("LANE control op-code 0x{:04x} is not handled here", load_be16(&b[4])));
  }
  if (b[55] > kElanNameMaxBytes) {
    throw std::invalid_argument(
        fmt::format("LANE ELAN-NAME-SIZE {} exceeds 32 bytes", static_cast<unsigned>(b[55])));
  }
  LaneControlFrame f;
  f.op = static_cast<LaneOp>(load_be16(&b[4]));
  f.status = static_cast<LaneStatus>(load_be16(&b[6]));
  f.transaction_id = (std::uint32_t{b[8]} << 24) | (std::uint32_t{b[9]} << 16) |
                     (std::uint32_t{b[10]} << 8) | std::uint32_t{b[11]};
  f.requester_lecid = load_be16(&b[12]);
  f.flags = load_be16(&b[14]);
  f.source_lan = get_lan(&b[16]);
  f.target_lan = get_lan(&b[24]);
  std::copy(b.begin() + 32, b.begin() + 52, f.source_atm.begin());
  f.lan_type = b[52];
  f.max_frame_code = b[53];
  f.number_tlvs = b[54];
  std::copy(b.begin() + 56, b.begin() + 76, f.target_atm.begin());
  f.elan_name.assign(reinterpret_cast<const char*>(&b[76]), b[55]);
  return f;
}

std::uint8_t lane_max_frame_code(std::size_t max_frame_bytes) {
  const auto it = std::find(kFrameSizes.begin(), kFrameSizes.end(), max_frame_bytes);
  if (it == kFrameSizes.end()) {
    throw std::invalid_argument(
        fmt::format("LANE maximum frame size {} is not one of 1516, 4544, 9234 or 18190 bytes",
                    max_frame_bytes));
  }
  return static_cast<std::uint8_t>(it - kFrameSizes.begin() + 1);
}

std::size_t lane_max_frame_bytes(std::uint8_t code) {
  return (code >= 1 && code <= kFrameSizes.size()) ? kFrameSizes[code - 1] : 0;
}

LaneControlFrame make_join_request(std::uint32_t transaction_id, const AtmAddress& own_atm,
                                   const Mac& own_mac, std::string_view elan_name,
                                   std::size_t max_frame_bytes) {
  LaneControlFrame f;
  f.op = LaneOp::kJoinRequest;
  f.transaction_id = transaction_id;
  f.source_lan = LanDestination::of_mac(own_mac);
  f.source_atm = own_atm;
  f.lan_type = kLaneTypeEthernet;
  f.max_frame_code = lane_max_frame_code(max_frame_bytes);
  f.elan_name = std::string(elan_name);
  return f;
}

LaneControlFrame make_le_arp_request(std::uint32_t transaction_id, std::uint16_t lecid,
                                     const Mac& own_mac, const AtmAddress& own_atm,
                                     const Mac& target_mac) {
  LaneControlFrame f;
  f.op = LaneOp::kArpRequest;
  f.transaction_id = transaction_id;
  f.requester_lecid = lecid;
  f.source_lan = LanDestination::of_mac(own_mac);
  f.target_lan = LanDestination::of_mac(target_mac);
  f.source_atm = own_atm;
  return f;
}

LaneControlFrame make_flush_response(const LaneControlFrame& request) {
  LaneControlFrame f = request;
  f.op = LaneOp::kFlushResponse;
  f.status = LaneStatus::kSuccess;
  return f;
}

}  // namespace mtperf::atm
