#pragma once
// Encapsulations carried in AAL5 SDUs:
//   - RFC 2684 LLC/SNAP, routed PDUs: AA AA 03 | OUI 00 00 00 | EtherType (2) | packet
//     (0x0800 IPv4, 0x86DD IPv6, 0x0806 for ATMARP packets, RFC 2225).
//   - RFC 2684 VC multiplexing: the packet alone; the VC implies the protocol.
//   - LANE v1 data frames: LECID (2, big-endian) | 802.3 frame without FCS, the frame padded
//     with zeros to the 60-byte Ethernet minimum. LANE's maximum frame sizes (1516, 4544, 9234,
//     18190 bytes) bound the whole AAL5 SDU, LECID included: 1516 = 2 + 14 + 1500.
// encapsulate()/decapsulate() are data-path functions: they return a status, never throw or
// allocate. validate() is for set-up and throws.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "atmlink/aal5.hpp"

namespace mtperf::atm {

enum class Encap : std::uint8_t { kLlcSnap, kVcMux, kLane };
const char* to_string(Encap encap);  // "llc", "vcmux", "lane"
// Accepts "llc", "vcmux", "lane"; throws std::invalid_argument otherwise.
Encap parse_encap(std::string_view name);

inline constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr std::uint16_t kEtherTypeArp = 0x0806;
inline constexpr std::uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr std::size_t kLlcSnapHeaderBytes = 8;
inline constexpr std::size_t kLecidBytes = 2;
inline constexpr std::size_t kEthernetHeaderBytes = 14;
inline constexpr std::size_t kEthernetMinFrameBytes = 60;  // without the FCS
inline constexpr std::size_t kMaxEncapHeaderBytes = 8;
inline constexpr std::array<std::size_t, 4> kLaneMaxFrameSizes = {1516, 4544, 9234, 18190};
// The first two bytes of a LANE control frame, where a data frame has its LECID.
inline constexpr std::uint16_t kLaneControlMarker = 0xFF00;
inline constexpr std::uint16_t kMinLecid = 0x0001;
inline constexpr std::uint16_t kMaxLecid = 0xFEFF;

struct EncapParams {
  Encap encap = Encap::kLlcSnap;
  // LLC/SNAP: the EtherType written on encode (decode reads it from the header).
  // VC-mux: the protocol the VC carries, reported on decode.
  std::uint16_t ethertype = kEtherTypeIpv4;
  std::uint16_t lecid = kMinLecid;    // LANE: this client's LECID, 0x0001..0xFEFF
  std::size_t lane_max_frame = 1516;  // LANE: one of kLaneMaxFrameSizes
};

// Throws std::invalid_argument naming the field when params are unusable.
void validate(const EncapParams& params);

enum class EncapStatus : std::uint8_t {
  kOk,
  kSduTooLarge,       // encapsulated SDU would exceed 65,535 bytes
  kTooShort,          // shorter than the encapsulation's header
  kNotLlcSnapRouted,  // does not start with AA AA 03 00 00 00
  kUnknownEtherType,  // LLC/SNAP EtherType other than IPv4, IPv6 or ARP
  kFrameTooLarge,     // LANE SDU above the emulated LAN's maximum frame size
  kControlFrame,      // LANE SDU that starts with the 0xFF00 control marker
  kBadLecid,          // LANE LECID outside 0x0001..0xFEFF
};
const char* to_string(EncapStatus status);

// Builds the SDU for payload (an IP packet; for LANE an 802.3 frame without FCS) as gathered
// parts for aal5_segment(). head_storage receives the header bytes; out.head points into it and
// out.body at payload, so both must outlive the segmentation.
EncapStatus encapsulate(const EncapParams& params, std::span<const std::uint8_t> payload,
                        std::span<std::uint8_t, kMaxEncapHeaderBytes> head_storage, SduParts& out);

struct Decapsulated {
  EncapStatus status = EncapStatus::kOk;
  std::span<const std::uint8_t> payload;  // into the SDU: packet, or 802.3 frame for LANE
  std::uint16_t ethertype = 0;            // LLC/SNAP header, VC-mux config, or frame bytes 12-13
  std::uint16_t lecid = 0;                // LANE only
};

// Parses a reassembled SDU. A LANE frame keeps any padding: only the frame's own length/type
// and upper layer can tell the pad from the data.
Decapsulated decapsulate(const EncapParams& params, std::span<const std::uint8_t> sdu);

}  // namespace mtperf::atm
