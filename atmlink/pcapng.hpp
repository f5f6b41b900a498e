#pragma once
// pcapng blocks (IETF draft-ietf-opsawg-pcapng) and the ATM record layouts Wireshark reads, as
// plain byte encoders: no I/O, no allocation beyond the caller's vector's growth.
//
//   file      = SHB, then one IDB per emulated line (interface id = adapter index), then EPBs
//   SHB       = type 0x0A0D0D0A | total length | 0x1A2B3C4D | 1.0 | section length -1 |
//               shb_userappl "mtperf" | end | total length
//   IDB       = type 1 | total length | link type (2) | 0 (2) | snaplen (4) |
//               if_name, if_description, if_tsresol = 9 (ns) | end | total length
//   EPB       = type 6 | total length | interface (4) | ts high (4) | ts low (4) | captured (4) |
//               original (4) | data, zero-padded to 4 bytes | epb_flags (4) | end | total length
//
// All fields are written little-endian (the SHB's byte-order magic says so), whatever the host.
// The direction goes in epb_flags bits 0-1 (1 inbound, 2 outbound) as seen from the near host.
//
// Record layouts (the EPB's data):
//   SUNATM (link type 123): flags (1: bit 7 direction, low nibble 0 raw / 1 LANE / 2 LLC),
//     VPI (1), VCI (2, big-endian), then the SDU (no pad, no trailer).
//   ERF (link type 197): the 16-byte ERF header: timestamp (8, little-endian, seconds << 32 |
//     binary fraction), type (1: 3 one cell, 4 an AAL5 PDU), flags (1: bits 0-1 the interface,
//     bit 2 varying length), rlen (2, big-endian: header and all that follows, as captured),
//     loss counter (2), wlen (2, big-endian: cell header + payload on the wire); then the
//     4-byte cell header without HEC (GFC/VPI/VCI/PTI/CLP), then the CPCS-PDU with pad and
//     trailer (type 4) or the 48-byte cell payload (type 3).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace mtperf::atm::pcapng {

inline constexpr std::uint32_t kShbType = 0x0A0D0D0A;
inline constexpr std::uint32_t kIdbType = 1;
inline constexpr std::uint32_t kEpbType = 6;
inline constexpr std::uint32_t kByteOrderMagic = 0x1A2B3C4D;
inline constexpr std::uint16_t kLinkTypeSunAtm = 123;
inline constexpr std::uint16_t kLinkTypeErf = 197;
inline constexpr std::size_t kSunAtmHeaderBytes = 4;
inline constexpr std::size_t kErfHeaderBytes = 16;
inline constexpr std::size_t kErfCellHeaderBytes = 4;
// ERF's lengths are 16 bits: the most CPCS-PDU an AAL5 record can hold (65,515 bytes).
inline constexpr std::size_t kErfMaxAal5PduBytes = 65535 - kErfHeaderBytes - kErfCellHeaderBytes;
inline constexpr std::uint8_t kErfTypeAtmCell = 3;
inline constexpr std::uint8_t kErfTypeAal5 = 4;
inline constexpr std::uint8_t kErfFlagVarLen = 0x04;
inline constexpr std::uint8_t kSunAtmDirection = 0x80;  // set: the near host's line (outbound)
inline constexpr std::uint8_t kSunAtmRaw = 0, kSunAtmLane = 1, kSunAtmLlc = 2;
inline constexpr std::uint32_t kEpbInbound = 1, kEpbOutbound = 2;
// An EPB's bytes besides its data: 28 fixed, epb_flags 8, end of options 4, length 4.
inline constexpr std::size_t kEpbOverheadBytes = 28 + 8 + 4 + 4;

constexpr std::size_t pad4(std::size_t n) {
  return (n + 3) & ~std::size_t(3);
}

void append_shb(std::vector<std::uint8_t>& out);
void append_idb(std::vector<std::uint8_t>& out, std::uint16_t link_type, std::uint32_t snaplen,
                std::string_view name, std::string_view description);

// An EPB of the concatenation of `parts`, cut at `snaplen` bytes (0: no cut); `original` is the
// record's length before the cut. ts_ns: ns since the Unix epoch (the IDB says ns resolution).
// Returns the block's length.
std::size_t append_epb(std::vector<std::uint8_t>& out, std::uint32_t interface, std::uint64_t ts_ns,
                       std::span<const std::span<const std::uint8_t>> parts, std::size_t original,
                       std::uint32_t snaplen, std::uint32_t epb_flags);

// The EPB's size for data of `captured` bytes.
constexpr std::size_t epb_bytes(std::size_t captured) {
  return kEpbOverheadBytes + pad4(captured);
}

// The SUNATM pseudo-header.
void sunatm_header(std::span<std::uint8_t, kSunAtmHeaderBytes> out, bool near_line,
                   std::uint8_t traffic, std::uint8_t vpi, std::uint16_t vci);

// The ERF header and the 4-byte cell header after it (ERF's timestamp is its own 32.32 fixed
// point). rlen is clamped to 65535 (a longer record must be cut by the caller), wlen likewise.
void erf_header(std::span<std::uint8_t, kErfHeaderBytes + kErfCellHeaderBytes> out,
                std::uint64_t ts_ns, std::uint8_t type, std::uint8_t interface, std::size_t rlen,
                std::size_t wlen, std::span<const std::uint8_t, 4> cell_header);

// ERF's 64-bit timestamp of ns since the epoch: seconds in the high 32 bits, the binary fraction
// of a second in the low 32.
std::uint64_t erf_timestamp(std::uint64_t ts_ns);

}  // namespace mtperf::atm::pcapng
