#pragma once
// ATM cells (ITU-T I.361): the 5-byte UNI and NNI headers and the header error control (HEC,
// ITU-T I.432.1). Pure functions on caller-owned bytes; no allocation, no exceptions except in
// validate_vc(), which is meant for set-up paths.
//
//   UNI: | GFC(4) VPI(8) | VCI(16) | PTI(3) CLP(1) | HEC(8) |
//   NNI: |    VPI(12)    | VCI(16) | PTI(3) CLP(1) | HEC(8) |
//
// HEC = CRC-8 (poly x^8+x^2+x+1, init 0, not reflected) over the first four header bytes, XOR
// the coset 0x55. The CRC-8 check value of "123456789" is 0xF4; with the coset applied it is
// 0xA1 (the catalogued CRC-8/I-432-1). The idle cell header 00 00 00 01 carries HEC 0x52.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace mtperf::atm {

inline constexpr std::size_t kCellBytes = 53;
inline constexpr std::size_t kHeaderBytes = 5;
inline constexpr std::size_t kCellPayloadBytes = 48;
inline constexpr std::uint8_t kHecCoset = 0x55;

using Cell = std::array<std::uint8_t, kCellBytes>;

enum class HeaderFormat : std::uint8_t { kUni, kNni };

// Payload type identifier bits (I.361): bit 2 set = OAM/RM cell, not user data; for user data
// bit 1 is the EFCI congestion mark and bit 0 the ATM-user-to-ATM-user indication, which AAL5
// uses to mark the last cell of a CPCS-PDU.
inline constexpr std::uint8_t kPtiNotUserData = 0x4;
inline constexpr std::uint8_t kPtiCongestion = 0x2;
inline constexpr std::uint8_t kPtiEndOfPdu = 0x1;

// A virtual channel. VPI is 0..255 on a UNI and 0..4095 on an NNI; VCI is 0..65535.
struct VcAddress {
  std::uint16_t vpi = 0;
  std::uint16_t vci = 0;
  friend constexpr bool operator==(VcAddress, VcAddress) = default;
};

struct CellHeader {
  std::uint8_t gfc = 0;  // UNI only, 4 bits; ignored for NNI
  VcAddress vc;
  std::uint8_t pti = 0;  // 3 bits
  bool clp = false;      // cell loss priority: true = may be discarded first
};

// Plain CRC-8, poly 0x07, init 0 (table-driven). hec() is crc8() of 4 bytes XOR kHecCoset.
std::uint8_t crc8(std::span<const std::uint8_t> bytes);
std::uint8_t hec(std::span<const std::uint8_t, 4> header_bytes);

// Writes the 5 header bytes, HEC included. Fields out of range for the format are masked to
// their width; call validate_vc() at set-up to reject them with a message instead.
void pack_header(const CellHeader& header, HeaderFormat format, std::span<std::uint8_t, 5> out);
// Reads the fields of the first four bytes; the HEC is not checked (see check_hec()).
CellHeader unpack_header(std::span<const std::uint8_t, 5> in, HeaderFormat format);

// The VC of a packed header, without unpacking the other fields.
VcAddress header_vc(std::span<const std::uint8_t, 5> in, HeaderFormat format);

enum class HecStatus : std::uint8_t {
  kOk,
  kCorrected,  // a single-bit error was found and repaired in place
  kError,      // uncorrectable (or correction disabled): the cell must be discarded
};
const char* to_string(HecStatus status);

// Checks the HEC of a received header. With correct_single_bit, a header whose syndrome
// matches exactly one flipped bit among the 40 header bits is repaired in place (I.432.1
// correction mode); otherwise any mismatch is kError.
HecStatus check_hec(std::span<std::uint8_t, 5> header, bool correct_single_bit);

// Throws std::invalid_argument naming the field when vc does not fit the format.
void validate_vc(VcAddress vc, HeaderFormat format);

}  // namespace mtperf::atm
