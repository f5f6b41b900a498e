#pragma once
// ATMARP and InATMARP for Classical IP over ATM (RFC 2225), IPv4 only.
//
// Packet (carried in LLC/SNAP with EtherType 0x0806), all integers big-endian:
//   ar$hrd 2 (0x0013 = ATM Forum) | ar$pro 2 (0x0800) | ar$shtl 1 | ar$sstl 1 | ar$op 2 |
//   ar$spln 1 | ar$thtl 1 | ar$tstl 1 | ar$tpln 1 |
//   ar$sha (shtl) | ar$ssa (sstl) | ar$spa (spln) | ar$tha (thtl) | ar$tsa (tstl) | ar$tpa (tpln)
// A type-and-length byte: bit 0x80 reserved (0), bit 0x40 = E.164 (else ATM Forum NSAPA),
// bits 0x3F = length in bytes. A protocol address is 4 bytes or absent (length 0).
//
// Exchanges on a logical IP subnet (LIS) with one ATMARP server:
//   client  --- opens VC to the server -------------------------------->  server
//   client  <-- InATMARP_Request (who are you?) ------------------------  server
//   client  --- InATMARP_Reply (my IP, my ATM address) ---------------->  server: registers
//   client  --- ATMARP_Request (source = me, target IP = B) ------------>  server
//   client  <-- ATMARP_Reply (B's ATM address) or ATMARP_NAK (unknown)  server
// A client may also register by an ATMARP_Request for its own IP address.
//
// Encoding and decoding are control-path functions: decode throws std::invalid_argument with
// the offending field named. The server is single-threaded.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace mtperf::atm {

inline constexpr std::uint16_t kAtmArpHardwareType = 0x0013;
inline constexpr std::uint16_t kAtmArpProtocolIpv4 = 0x0800;
inline constexpr std::size_t kAtmArpFixedBytes = 12;
inline constexpr std::size_t kMaxAtmNumberBytes = 20;  // an NSAP-format address
// RFC 2225: a server ages its entries after at least 20 minutes.
inline constexpr std::uint64_t kAtmArpServerEntryLifetimeNs = 20ull * 60 * 1'000'000'000;

enum class AtmArpOp : std::uint16_t {
  kRequest = 1,
  kReply = 2,
  kInRequest = 8,
  kInReply = 9,
  kNak = 10,
};
const char* to_string(AtmArpOp op);

// An ATM number or subaddress; length 0 means absent.
struct AtmNumber {
  bool e164 = false;  // else ATM Forum NSAPA format
  std::uint8_t length = 0;
  std::array<std::uint8_t, kMaxAtmNumberBytes> bytes{};

  static AtmNumber nsap(const std::array<std::uint8_t, 20>& address);
  bool empty() const { return length == 0; }
  std::span<const std::uint8_t> view() const { return {bytes.data(), length}; }
  friend bool operator==(const AtmNumber& a, const AtmNumber& b) {
    return a.e164 == b.e164 && a.length == b.length &&
           std::equal(a.bytes.begin(), a.bytes.begin() + a.length, b.bytes.begin());
  }
};

using Ipv4 = std::uint32_t;  // host byte order: 192.168.1.2 is 0xC0A80102

struct AtmArpPacket {
  AtmArpOp op = AtmArpOp::kRequest;
  AtmNumber source_atm, source_subaddress;
  std::optional<Ipv4> source_ip;
  AtmNumber target_atm, target_subaddress;
  std::optional<Ipv4> target_ip;
};

std::vector<std::uint8_t> encode_atmarp(const AtmArpPacket& packet);
AtmArpPacket decode_atmarp(std::span<const std::uint8_t> bytes);

// Client-side packets.
AtmArpPacket make_atmarp_request(const AtmNumber& own_atm, Ipv4 own_ip, Ipv4 target_ip);
AtmArpPacket make_inatmarp_reply(const AtmArpPacket& in_request, const AtmNumber& own_atm,
                                 Ipv4 own_ip);
// An ATMARP_NAK is the request sent back with the operation code changed (RFC 2225 8.7.5).
AtmArpPacket make_atmarp_nak(const AtmArpPacket& request);

struct AtmArpServerConfig {
  Ipv4 subnet = 0;  // the LIS, e.g. 0xC0A80A00 with prefix_length 24 for 192.168.10.0/24
  unsigned prefix_length = 24;
  std::uint64_t entry_lifetime_ns = kAtmArpServerEntryLifetimeNs;
};

struct AtmArpServerStats {
  std::uint64_t registrations = 0;  // new or refreshed entries
  std::uint64_t replies = 0;
  std::uint64_t naks = 0;
  std::uint64_t conflicts = 0;  // registrations refused: IP held by another live ATM address
  std::uint64_t ignored = 0;    // packets that need no answer or were malformed for a server
};

// The ATMARP server of one LIS. Time is passed in (any monotonic ns clock).
class AtmArpServer {
 public:
  // Throws std::invalid_argument if own_ip lies outside the subnet or the prefix is > 32.
  AtmArpServer(const AtmNumber& own_atm, Ipv4 own_ip, const AtmArpServerConfig& config);

  // Answers one received packet; nullopt when no answer is due (replies, InATMARP replies).
  std::optional<AtmArpPacket> handle(const AtmArpPacket& in, std::uint64_t now_ns);
  // Sent on each new VC from a client so the client announces itself (InATMARP).
  AtmArpPacket make_inatmarp_request(const AtmNumber& peer_atm) const;

  std::optional<AtmNumber> resolve(Ipv4 ip, std::uint64_t now_ns) const;
  // Removes entries past their lifetime; returns how many.
  std::size_t expire(std::uint64_t now_ns);
  std::size_t size() const { return table_.size(); }
  const AtmArpServerStats& stats() const { return stats_; }
  bool in_subnet(Ipv4 ip) const;

 private:
  struct Entry {
    AtmNumber atm;
    std::uint64_t expires_ns = 0;
  };
  void learn(const AtmArpPacket& in, std::uint64_t now_ns);

  AtmNumber own_atm_;
  Ipv4 own_ip_;
  AtmArpServerConfig config_;
  Ipv4 mask_;
  std::map<Ipv4, Entry> table_;
  AtmArpServerStats stats_;
};

}  // namespace mtperf::atm
