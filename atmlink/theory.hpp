#pragma once
// Theoretical TCP goodput over AAL5 on a paced line.
//
// Each TCP segment fills one IP packet of mtu bytes, carried in one AAL5 SDU of
// mtu + encapsulation bytes; the CPCS-PDU adds the 8-byte trailer and pads to whole cells:
//   cells per packet = ceil((mtu + encap + 8) / 48)
//   goodput (bit/s)  = (mtu - tcp_ip_headers) * 8 * cells_per_s / cells per packet
// tcp_ip_headers is 20 (IPv4) + 20 (TCP) + 12 (timestamp option) = 52 bytes. Encapsulation:
// 8 for LLC/SNAP (CLIP), 0 for VC multiplexing, 2 + 14 = 16 for LANE (LECID and the Ethernet
// header; no FCS travels over ATM). ACKs are assumed to flow on the reverse direction of the
// full-duplex line and cost nothing here.
#include <cstdint>

namespace mtperf::atm {

inline constexpr std::uint32_t kTcpIpTimestampHeaderBytes = 52;
inline constexpr std::uint32_t kLlcSnapOverheadBytes = 8;
inline constexpr std::uint32_t kVcMuxOverheadBytes = 0;
inline constexpr std::uint32_t kLaneOverheadBytes = 2 + 14;

constexpr std::uint32_t cells_per_packet(std::uint32_t mtu_bytes, std::uint32_t encap_bytes) {
  return (mtu_bytes + encap_bytes + 8 + 47) / 48;
}

// Goodput in bit/s (10^6 bit/s = 1 Mbit/s). mtu_bytes must exceed tcp_ip_header_bytes.
constexpr double tcp_goodput_bps(std::uint32_t mtu_bytes, double cells_per_s,
                                 std::uint32_t encap_bytes = kLlcSnapOverheadBytes,
                                 std::uint32_t tcp_ip_header_bytes = kTcpIpTimestampHeaderBytes) {
  return static_cast<double>(mtu_bytes - tcp_ip_header_bytes) * 8.0 * cells_per_s /
         static_cast<double>(cells_per_packet(mtu_bytes, encap_bytes));
}

}  // namespace mtperf::atm
