#pragma once
// AAL5 (ITU-T I.363.5): CPCS-PDU framing, segmentation into cells, and reassembly per VC.
//
//   CPCS-PDU = SDU | PAD (0..47 zero bytes) | CPCS-UU(1) CPI(1) LENGTH(2) CRC-32(4)
//
// The PDU is a multiple of 48 bytes and travels as ceil((len + 8) / 48) cells; the last cell
// has PTI bit 0 (AUU) set. LENGTH is the SDU length in bytes (big-endian), 0..65,535. The CRC-32
// covers the whole PDU up to the CRC field, with the CRC-32/BZIP2 parameters (poly 0x04C11DB7,
// init and final XOR 0xFFFFFFFF, not reflected, check 0xFC891918, residue 0xC704DD7B); it is
// computed by ISA-L's crc32_ieee(), which has exactly these parameters.
//
// Nothing here allocates, throws or formats per cell or per PDU, except the Reassembler
// constructor, which allocates the one reassembly buffer of its VC and validates its config.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "atmlink/cell.hpp"
#include "atmlink/counters.hpp"

namespace mtperf::atm {

inline constexpr std::size_t kAal5TrailerBytes = 8;
inline constexpr std::size_t kAal5MaxSduBytes = 65535;
inline constexpr std::uint32_t kAal5CrcResidue = 0xC704DD7B;

// Cells needed for an SDU of sdu_bytes bytes.
constexpr std::size_t aal5_cell_count(std::size_t sdu_bytes) {
  return (sdu_bytes + kAal5TrailerBytes + kCellPayloadBytes - 1) / kCellPayloadBytes;
}
inline constexpr std::size_t kAal5MaxCells = aal5_cell_count(kAal5MaxSduBytes);  // 1366

// CRC-32/BZIP2 of bytes; aal5_crc32_update() continues a CRC over more bytes, so that
// aal5_crc32_update(aal5_crc32(a), b) == aal5_crc32(a || b). Run over a whole CPCS-PDU,
// CRC field included, a good PDU gives ~kAal5CrcResidue.
std::uint32_t aal5_crc32(std::span<const std::uint8_t> bytes);
std::uint32_t aal5_crc32_update(std::uint32_t crc, std::span<const std::uint8_t> bytes);

// An SDU gathered from parts, so an encapsulation header and a padded frame need no copy:
// the SDU is head, then body, then zero_tail zero bytes.
struct SduParts {
  std::span<const std::uint8_t> head;
  std::span<const std::uint8_t> body;
  std::size_t zero_tail = 0;
  std::size_t size() const { return head.size() + body.size() + zero_tail; }
};

struct SegmentParams {
  VcAddress vc;
  HeaderFormat format = HeaderFormat::kUni;
  std::uint8_t gfc = 0;
  bool clp = false;
  bool efci = false;  // mark every cell "congestion experienced" (PTI bit 1)
  std::uint8_t cpcs_uu = 0;
  std::uint8_t cpi = 0;  // I.363.5 requires 0; other values are for negative tests
};

enum class SegmentStatus : std::uint8_t { kOk, kSduTooLarge, kBufferTooSmall };
const char* to_string(SegmentStatus status);

struct SegmentResult {
  SegmentStatus status = SegmentStatus::kOk;
  std::size_t cells = 0;  // cells written to out (0 unless kOk)
};

// Writes the cells of one CPCS-PDU into out (53 bytes each, back to back), which must hold at
// least aal5_cell_count(sdu.size()) * 53 bytes. The SDU is at most 65,535 bytes.
SegmentResult aal5_segment(const SduParts& sdu, const SegmentParams& params,
                           std::span<std::uint8_t> out);
inline SegmentResult aal5_segment(std::span<const std::uint8_t> sdu, const SegmentParams& params,
                                  std::span<std::uint8_t> out) {
  return aal5_segment(SduParts{{}, sdu, 0}, params, out);
}

struct ReassemblerConfig {
  HeaderFormat format = HeaderFormat::kUni;
  std::size_t max_sdu_bytes = kAal5MaxSduBytes;  // 0..65,535
  std::uint64_t timeout_ns = 0;  // a partial PDU older than this is abandoned; 0 = no timer
  bool correct_hec = false;      // repair single-bit header errors instead of discarding
};

// What became of one cell handed to Reassembler::push().
enum class CellStatus : std::uint8_t {
  kAccepted,     // stored; the PDU is not complete yet
  kPduComplete,  // last cell of a good PDU: see Reassembler::pdu()
  kHecError,     // header error: cell discarded
  kWrongVc,      // VPI/VCI of another VC: cell discarded
  kNotUserData,  // OAM/RM cell (PTI 4..7): not for AAL5, cell discarded
  kCrcError,     // last cell of a PDU whose CRC-32 failed: PDU discarded
  kLengthError,  // last cell of a PDU whose length field disagrees with its size
  kOversize,     // the PDU outgrew max_sdu_bytes: PDU discarded
  kDiscarding,   // cell of a PDU already discarded as oversize
};
const char* to_string(CellStatus status);

struct Aal5Pdu {
  std::span<const std::uint8_t> sdu;  // points into the reassembler's buffer
  std::uint8_t cpcs_uu = 0;
  std::uint8_t cpi = 0;
  std::size_t cells = 0;
};

// Reassembles the CPCS-PDUs of one VC. Single-threaded: one thread calls push() and poll();
// counters() may be read from any thread.
//
// Counters: cells counts every cell pushed; hec_errors, crc_errors, length_errors, oversize and
// timeouts count events; drops counts cells discarded without reaching a PDU check (another
// VC, OAM cells, the cells of an oversize PDU and of a timed-out partial PDU).
class Reassembler {
 public:
  // Allocates the reassembly buffer (the whole maximum PDU) once. Throws std::invalid_argument
  // when the config is out of range.
  explicit Reassembler(VcAddress vc, const ReassemblerConfig& config = {});

  // now_ns: any monotonic clock, used only for the reassembly timeout.
  CellStatus push(std::span<const std::uint8_t, kCellBytes> cell, std::uint64_t now_ns);

  // Abandons a partial PDU older than the timeout; true when one was abandoned.
  bool poll(std::uint64_t now_ns);

  // The PDU completed by the last push() that returned kPduComplete; valid until the next push.
  const Aal5Pdu& pdu() const { return pdu_; }
  // The whole CPCS-PDU (pad and trailer, CRC as received) of the last push() that ended a PDU
  // (kPduComplete, kCrcError, kLengthError); valid until the next push. For captures.
  std::span<const std::uint8_t> last_cpcs() const { return {buffer_.data(), last_bytes_}; }
  const VcCounters& counters() const { return counters_; }
  VcAddress vc() const { return vc_; }
  bool in_pdu() const { return filled_ > 0; }
  // Drops any partial PDU without counting it.
  void reset();

 private:
  CellStatus finish_pdu(std::size_t cells);
  void abandon_partial();

  VcAddress vc_;
  ReassemblerConfig config_;
  std::vector<std::uint8_t> buffer_;  // max cells * 48 bytes, allocated once
  std::size_t filled_ = 0;            // bytes of the partial PDU in buffer_
  std::size_t last_bytes_ = 0;        // bytes of the last PDU that ended
  std::uint64_t first_cell_ns_ = 0;
  bool discarding_ = false;
  Aal5Pdu pdu_;
  VcCounters counters_;
};

}  // namespace mtperf::atm
