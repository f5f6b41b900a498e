#include "atmlink/encap.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include "atmlink/bytes.hpp"

namespace mtperf::atm {
namespace {

constexpr std::uint8_t kLlcSnapRoutedPrefix[6] = {0xAA, 0xAA, 0x03, 0x00, 0x00, 0x00};

bool known_ethertype(std::uint16_t t) {
  return t == kEtherTypeIpv4 || t == kEtherTypeIpv6 || t == kEtherTypeArp;
}

EncapStatus encapsulate_lane(const EncapParams& p, std::span<const std::uint8_t> frame,
                             std::span<std::uint8_t, kMaxEncapHeaderBytes> head, SduParts& out) {
  if (frame.size() < kEthernetHeaderBytes) return EncapStatus::kTooShort;
  if (p.lecid < kMinLecid || p.lecid > kMaxLecid) return EncapStatus::kBadLecid;
  const std::size_t tail =
      frame.size() < kEthernetMinFrameBytes ? kEthernetMinFrameBytes - frame.size() : 0;
  if (kLecidBytes + frame.size() + tail > p.lane_max_frame) return EncapStatus::kFrameTooLarge;
  head[0] = static_cast<std::uint8_t>(p.lecid >> 8);
  head[1] = static_cast<std::uint8_t>(p.lecid & 0xFF);
  out = SduParts{head.first(kLecidBytes), frame, tail};
  return EncapStatus::kOk;
}

Decapsulated decapsulate_lane(const EncapParams& p, std::span<const std::uint8_t> sdu) {
  Decapsulated d;
  if (sdu.size() < kLecidBytes) return {EncapStatus::kTooShort, {}, 0, 0};
  d.lecid = load_be16(sdu.data());
  if (d.lecid == kLaneControlMarker) return {EncapStatus::kControlFrame, {}, 0, d.lecid};
  if (sdu.size() < kLecidBytes + kEthernetHeaderBytes) {
    return {EncapStatus::kTooShort, {}, 0, d.lecid};
  }
  if (d.lecid < kMinLecid || d.lecid > kMaxLecid) return {EncapStatus::kBadLecid, {}, 0, d.lecid};
  if (sdu.size() > p.lane_max_frame) return {EncapStatus::kFrameTooLarge, {}, 0, d.lecid};
  d.payload = sdu.subspan(kLecidBytes);
  d.ethertype = load_be16(d.payload.data() + 12);
  return d;
}

}  // namespace

const char* to_string(Encap encap) {
  switch (encap) {
    case Encap::kLlcSnap:
      return "llc";
    case Encap::kVcMux:
      return "vcmux";
    case Encap::kLane:
      return "lane";
  }
  return "?";
}

Encap parse_encap(std::string_view name) {
  if (name == "llc") return Encap::kLlcSnap;
  if (name == "vcmux") return Encap::kVcMux;
  if (name == "lane") return Encap::kLane;
  throw std::invalid_argument("unknown encapsulation '" + std::string(name) +
                              "': use llc (RFC 2684 LLC/SNAP), vcmux (RFC 2684 VC multiplexing) "
                              "or lane (LAN Emulation data frames)");
}

void validate(const EncapParams& p) {
  if (p.encap == Encap::kLlcSnap && !known_ethertype(p.ethertype)) {
    throw std::invalid_argument(
        "LLC/SNAP EtherType must be 0x0800 (IPv4), 0x86DD (IPv6) or "
        "0x0806 (ATMARP)");
  }
  if (p.encap != Encap::kLane) return;
  if (p.lecid < kMinLecid || p.lecid > kMaxLecid) {
    throw std::invalid_argument("LECID " + std::to_string(p.lecid) +
                                " is out of range: LANE assigns 1..65279 (0x0001..0xFEFF)");
  }
  if (std::find(kLaneMaxFrameSizes.begin(), kLaneMaxFrameSizes.end(), p.lane_max_frame) ==
      kLaneMaxFrameSizes.end()) {
    throw std::invalid_argument("LANE maximum frame size " + std::to_string(p.lane_max_frame) +
                                " is not one of LANE v1's 1516, 4544, 9234 or 18190 bytes");
  }
}

const char* to_string(EncapStatus status) {
  switch (status) {
    case EncapStatus::kOk:
      return "ok";
    case EncapStatus::kSduTooLarge:
      return "encapsulated SDU exceeds 65535 bytes";
    case EncapStatus::kTooShort:
      return "SDU shorter than the encapsulation header";
    case EncapStatus::kNotLlcSnapRouted:
      return "SDU does not start with the LLC/SNAP routed header AA AA 03 00 00 00";
    case EncapStatus::kUnknownEtherType:
      return "LLC/SNAP EtherType is not IPv4 (0x0800), IPv6 (0x86DD) or ARP (0x0806)";
    case EncapStatus::kFrameTooLarge:
      return "LANE frame exceeds the maximum frame size";
    case EncapStatus::kControlFrame:
      return "LANE control frame (marker 0xFF00), not a data frame";
    case EncapStatus::kBadLecid:
      return "LECID outside 0x0001..0xFEFF";
  }
  return "?";
}

EncapStatus encapsulate(const EncapParams& p, std::span<const std::uint8_t> payload,
                        std::span<std::uint8_t, kMaxEncapHeaderBytes> head, SduParts& out) {
  switch (p.encap) {
    case Encap::kLlcSnap:
      if (payload.size() + kLlcSnapHeaderBytes > kAal5MaxSduBytes) {
        return EncapStatus::kSduTooLarge;
      }
      if (!known_ethertype(p.ethertype)) return EncapStatus::kUnknownEtherType;
      std::copy(std::begin(kLlcSnapRoutedPrefix), std::end(kLlcSnapRoutedPrefix), head.begin());
      head[6] = static_cast<std::uint8_t>(p.ethertype >> 8);
      head[7] = static_cast<std::uint8_t>(p.ethertype & 0xFF);
      out = SduParts{head.first(kLlcSnapHeaderBytes), payload, 0};
      return EncapStatus::kOk;
    case Encap::kVcMux:
      if (payload.size() > kAal5MaxSduBytes) return EncapStatus::kSduTooLarge;
      out = SduParts{{}, payload, 0};
      return EncapStatus::kOk;
    case Encap::kLane:
      return encapsulate_lane(p, payload, head, out);
  }
  return EncapStatus::kTooShort;
}

Decapsulated decapsulate(const EncapParams& p, std::span<const std::uint8_t> sdu) {
  switch (p.encap) {
    case Encap::kLlcSnap: {
      if (sdu.size() < kLlcSnapHeaderBytes) return {EncapStatus::kTooShort, {}, 0, 0};
      if (!std::equal(std::begin(kLlcSnapRoutedPrefix), std::end(kLlcSnapRoutedPrefix),
                      sdu.begin())) {
        return {EncapStatus::kNotLlcSnapRouted, {}, 0, 0};
      }
      const std::uint16_t type = load_be16(sdu.data() + 6);
      if (!known_ethertype(type)) return {EncapStatus::kUnknownEtherType, {}, type, 0};
      return {EncapStatus::kOk, sdu.subspan(kLlcSnapHeaderBytes), type, 0};
    }
    case Encap::kVcMux:
      return {EncapStatus::kOk, sdu, p.ethertype, 0};
    case Encap::kLane:
      return decapsulate_lane(p, sdu);
  }
  return {EncapStatus::kTooShort, {}, 0, 0};
}

}  // namespace mtperf::atm
