#include "atmlink/cell.hpp"

#include <stdexcept>
#include <string>

namespace mtperf::atm {
namespace {

constexpr std::uint8_t kCrc8Poly = 0x07;  // x^8 + x^2 + x + 1, the x^8 term implied

constexpr std::array<std::uint8_t, 256> make_crc8_table() {
  std::array<std::uint8_t, 256> table{};
  for (unsigned i = 0; i < 256; ++i) {
    auto r = static_cast<std::uint8_t>(i);
    for (int bit = 0; bit < 8; ++bit) {
      r = (r & 0x80) ? static_cast<std::uint8_t>((r << 1) ^ kCrc8Poly)
                     : static_cast<std::uint8_t>(r << 1);
    }
    table[i] = r;
  }
  return table;
}

constexpr auto kCrc8Table = make_crc8_table();

constexpr std::uint8_t crc8_of_4(const std::uint8_t* p) {
  std::uint8_t r = 0;
  for (int i = 0; i < 4; ++i)
    r = kCrc8Table[r ^ p[i]];
  return r;
}

constexpr std::uint8_t kNoBit = 0xFF;

// The code is linear, so the syndrome (received HEC XOR recomputed HEC) of a single flipped bit
// depends only on the bit's position. Bits 0..31 are the first four bytes (MSB first), 32..39
// the HEC byte itself. Every syndrome is distinct and non-zero, which is what makes
// single-bit correction possible with this polynomial over 40 bits.
constexpr std::array<std::uint8_t, 256> make_syndrome_table() {
  std::array<std::uint8_t, 256> table{};
  for (auto& t : table)
    t = kNoBit;
  for (unsigned pos = 0; pos < 40; ++pos) {
    std::uint8_t bytes[5] = {0, 0, 0, 0, 0};
    bytes[pos / 8] = static_cast<std::uint8_t>(0x80u >> (pos % 8));
    const std::uint8_t syndrome = crc8_of_4(bytes) ^ bytes[4];
    table[syndrome] = static_cast<std::uint8_t>(pos);
  }
  return table;
}

constexpr auto kSyndromeTable = make_syndrome_table();

}  // namespace

std::uint8_t crc8(std::span<const std::uint8_t> bytes) {
  std::uint8_t r = 0;
  for (std::uint8_t b : bytes)
    r = kCrc8Table[r ^ b];
  return r;
}

std::uint8_t hec(std::span<const std::uint8_t, 4> header_bytes) {
  return crc8_of_4(header_bytes.data()) ^ kHecCoset;
}

void pack_header(const CellHeader& h, HeaderFormat format, std::span<std::uint8_t, 5> out) {
  const unsigned vci = h.vc.vci;
  if (format == HeaderFormat::kUni) {
    const unsigned vpi = h.vc.vpi & 0xFFu;
    out[0] = static_cast<std::uint8_t>(((h.gfc & 0x0Fu) << 4) | (vpi >> 4));
    out[1] = static_cast<std::uint8_t>(((vpi & 0x0Fu) << 4) | (vci >> 12));
  } else {
    const unsigned vpi = h.vc.vpi & 0xFFFu;
    out[0] = static_cast<std::uint8_t>(vpi >> 4);
    out[1] = static_cast<std::uint8_t>(((vpi & 0x0Fu) << 4) | (vci >> 12));
  }
  out[2] = static_cast<std::uint8_t>(vci >> 4);
  out[3] =
      static_cast<std::uint8_t>(((vci & 0x0Fu) << 4) | ((h.pti & 0x7u) << 1) | (h.clp ? 1 : 0));
  out[4] = hec(out.first<4>());
}

VcAddress header_vc(std::span<const std::uint8_t, 5> in, HeaderFormat format) {
  VcAddress vc;
  const unsigned high = (format == HeaderFormat::kUni) ? (in[0] & 0x0Fu) : in[0];
  vc.vpi = static_cast<std::uint16_t>((high << 4) | (in[1] >> 4));
  vc.vci = static_cast<std::uint16_t>(((in[1] & 0x0Fu) << 12) | (in[2] << 4) | (in[3] >> 4));
  return vc;
}

CellHeader unpack_header(std::span<const std::uint8_t, 5> in, HeaderFormat format) {
  CellHeader h;
  h.gfc = (format == HeaderFormat::kUni) ? static_cast<std::uint8_t>(in[0] >> 4) : 0;
  h.vc = header_vc(in, format);
  h.pti = static_cast<std::uint8_t>((in[3] >> 1) & 0x7u);
  h.clp = (in[3] & 0x1u) != 0;
  return h;
}

const char* to_string(HecStatus status) {
  switch (status) {
    case HecStatus::kOk:
      return "ok";
    case HecStatus::kCorrected:
      return "corrected";
    case HecStatus::kError:
      return "HEC error";
  }
  return "?";
}

HecStatus check_hec(std::span<std::uint8_t, 5> header, bool correct_single_bit) {
  const std::uint8_t syndrome = crc8_of_4(header.data()) ^ kHecCoset ^ header[4];
  if (syndrome == 0) return HecStatus::kOk;
  if (!correct_single_bit) return HecStatus::kError;
  const std::uint8_t pos = kSyndromeTable[syndrome];
  if (pos == kNoBit) return HecStatus::kError;
  header[pos / 8] ^= static_cast<std::uint8_t>(0x80u >> (pos % 8));
  return HecStatus::kCorrected;
}

void validate_vc(VcAddress vc, HeaderFormat format) {
  const unsigned max_vpi = (format == HeaderFormat::kUni) ? 255 : 4095;
  if (vc.vpi > max_vpi) {
    throw std::invalid_argument("VPI " + std::to_string(vc.vpi) + " is out of range: a " +
                                (format == HeaderFormat::kUni ? "UNI" : "NNI") +
                                " header carries VPI 0.." + std::to_string(max_vpi));
  }
  if (vc.vci < 32) {
    throw std::invalid_argument("VCI " + std::to_string(vc.vci) +
                                " is reserved (VCIs 0..31 carry idle cells, signalling, OAM and "
                                "ILMI); use VCI 32 or above");
  }
}

}  // namespace mtperf::atm
