#pragma once
// LAN Emulation v1 (ATM Forum af-lane-0021) control frames and a small LE server (LES) model.
//
// Every control frame has the same 108-byte layout (integers big-endian); the fields that an
// operation does not use are zero:
//    0 MARKER 0xFF00 (2)         2 PROTOCOL 0x01 (1)          3 VERSION 0x01 (1)
//    4 OP-CODE (2)               6 STATUS (2)                 8 TRANSACTION-ID (4)
//   12 REQUESTER-LECID (2)      14 FLAGS (2)                 16 SOURCE-LAN-DESTINATION (8)
//   24 TARGET-LAN-DESTINATION (8)                            32 SOURCE-ATM-ADDRESS (20)
//   52 LAN-TYPE (1)             53 MAXIMUM-FRAME-SIZE (1)    54 NUMBER-TLVS (1)
//   55 ELAN-NAME-SIZE (1)       56 TARGET-ATM-ADDRESS (20)   76 ELAN-NAME (32)
// A LAN destination is a 2-byte tag (0 none, 1 MAC address, 2 route descriptor) and 6 bytes.
// Any TLVs after byte 108 are skipped.
//
// Exchanges with the LES of one emulated LAN:
//   LEC --- LE_JOIN_REQUEST (my ATM address, my MAC) ---------> LES
//   LEC <-- LE_JOIN_RESPONSE (status, LECID, frame size) ------ LES
//   LEC --- LE_ARP_REQUEST (target MAC) ----------------------> LES
//   LEC <-- LE_ARP_RESPONSE (target's ATM address) ------------ LES   (unknown: no answer here;
//                                                                     a real LES floods it)
//   LEC --- LE_FLUSH_REQUEST (over the old path, via the BUS) --> peer LEC
//   LEC <-- LE_FLUSH_RESPONSE --------------------------------- peer LEC, then data-direct VC
//
// Op-codes follow the LANE v1 table: LE_CONFIGURE is 0x0001 and LE_JOIN 0x0002 (responses add
// 0x0100). Decoding throws std::invalid_argument naming the field; this is the control path.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace mtperf::atm {

inline constexpr std::size_t kLaneControlFrameBytes = 108;
inline constexpr std::uint8_t kLaneProtocol = 0x01;
inline constexpr std::uint8_t kLaneVersion = 0x01;
inline constexpr std::uint8_t kLaneTypeEthernet = 0x01;
inline constexpr std::size_t kElanNameMaxBytes = 32;
inline constexpr std::uint16_t kLaneFlagRemoteAddress = 0x0001;  // LE_ARP: not a local client
inline constexpr std::uint16_t kLaneFlagProxy = 0x0080;          // JOIN: proxy (bridge) LEC

enum class LaneOp : std::uint16_t {
  kConfigureRequest = 0x0001,
  kConfigureResponse = 0x0101,
  kJoinRequest = 0x0002,
  kJoinResponse = 0x0102,
  kRegisterRequest = 0x0004,
  kRegisterResponse = 0x0104,
  kArpRequest = 0x0006,
  kArpResponse = 0x0106,
  kFlushRequest = 0x0007,
  kFlushResponse = 0x0107,
};
const char* to_string(LaneOp op);

enum class LaneStatus : std::uint16_t {
  kSuccess = 0,
  kVersionNotSupported = 1,
  kInvalidRequestParameters = 2,
  kDuplicateLanDestination = 4,
  kDuplicateAtmAddress = 5,
  kInsufficientResources = 6,
  kInvalidRequesterId = 8,
  kInvalidAtmAddress = 10,
};

using Mac = std::array<std::uint8_t, 6>;
inline constexpr Mac kBroadcastMac = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
using AtmAddress = std::array<std::uint8_t, 20>;

struct LanDestination {
  std::uint16_t tag = 0;  // 0 not present, 1 MAC address, 2 route descriptor
  Mac mac{};
  static LanDestination of_mac(const Mac& mac) { return {1, mac}; }
  friend bool operator==(const LanDestination&, const LanDestination&) = default;
};

struct LaneControlFrame {
  LaneOp op = LaneOp::kJoinRequest;
  LaneStatus status = LaneStatus::kSuccess;
  std::uint32_t transaction_id = 0;
  std::uint16_t requester_lecid = 0;
  std::uint16_t flags = 0;
  LanDestination source_lan, target_lan;
  AtmAddress source_atm{};
  std::uint8_t lan_type = 0;
  std::uint8_t max_frame_code = 0;  // 0 unspecified, 1..4 = 1516, 4544, 9234, 18190 bytes
  std::uint8_t number_tlvs = 0;
  AtmAddress target_atm{};
  std::string elan_name;  // at most 32 bytes
};

std::array<std::uint8_t, kLaneControlFrameBytes> encode_lane_control(const LaneControlFrame& f);
LaneControlFrame decode_lane_control(std::span<const std::uint8_t> bytes);

// 1516 -> 1, 4544 -> 2, 9234 -> 3, 18190 -> 4; throws std::invalid_argument otherwise.
std::uint8_t lane_max_frame_code(std::size_t max_frame_bytes);
std::size_t lane_max_frame_bytes(std::uint8_t code);  // 0 for an unknown code

// Client-side frames.
LaneControlFrame make_join_request(std::uint32_t transaction_id, const AtmAddress& own_atm,
                                   const Mac& own_mac, std::string_view elan_name,
                                   std::size_t max_frame_bytes);
LaneControlFrame make_le_arp_request(std::uint32_t transaction_id, std::uint16_t lecid,
                                     const Mac& own_mac, const AtmAddress& own_atm,
                                     const Mac& target_mac);
// The response a LEC returns to a flush request: the request with the response op-code.
LaneControlFrame make_flush_response(const LaneControlFrame& request);

struct LesConfig {
  std::uint8_t lan_type = kLaneTypeEthernet;
  std::size_t max_frame_bytes = 1516;
  std::string elan_name = "mtperf";
  std::uint64_t registration_lifetime_ns = 0;  // MAC registrations age out; 0 = never
};

struct LesStats {
  std::uint64_t joins = 0;
  std::uint64_t join_rejects = 0;
  std::uint64_t registrations = 0;
  std::uint64_t arp_resolved = 0;
  std::uint64_t arp_unresolved = 0;  // would be flooded by a real LES
};

// The LE server of one emulated LAN: assigns LECIDs, keeps MAC -> ATM address registrations
// and answers LE_ARP. Time is passed in (any monotonic ns clock). Single-threaded.
class Les {
 public:
  explicit Les(const LesConfig& config);  // throws std::invalid_argument on a bad config

  // The response to one control frame; nullopt when the LES gives none.
  std::optional<LaneControlFrame> handle(const LaneControlFrame& request, std::uint64_t now_ns);

  std::optional<AtmAddress> resolve(const Mac& mac, std::uint64_t now_ns) const;
  std::size_t expire(std::uint64_t now_ns);  // drops aged MAC registrations; returns how many
  void leave(std::uint16_t lecid);           // the client's control VC closed
  std::size_t clients() const { return clients_.size(); }
  const LesStats& stats() const { return stats_; }

 private:
  struct Registration {
    AtmAddress atm{};
    std::uint16_t lecid = 0;
    std::uint64_t expires_ns = 0;  // 0 = never
  };
  LaneControlFrame join(const LaneControlFrame& request, std::uint64_t now_ns);
  LaneControlFrame register_mac(const LaneControlFrame& request, std::uint64_t now_ns);
  std::optional<LaneControlFrame> le_arp(const LaneControlFrame& request, std::uint64_t now_ns);
  LaneStatus add_registration(const Mac& mac, const AtmAddress& atm, std::uint16_t lecid,
                              std::uint64_t now_ns);
  std::optional<std::uint16_t> next_lecid();

  LesConfig config_;
  std::uint8_t max_frame_code_;
  std::map<std::uint16_t, AtmAddress> clients_;  // LECID -> ATM address
  std::map<Mac, Registration> registrations_;
  std::uint16_t last_lecid_ = 0;
  LesStats stats_;
};

}  // namespace mtperf::atm
