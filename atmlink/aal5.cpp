#include "atmlink/aal5.hpp"

#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include "atmlink/bytes.hpp"

namespace mtperf::atm {
namespace {

// Zero bytes fed to the CRC for the pad and any zero tail, in chunks of this size.
constexpr std::uint8_t kZeros[64] = {};

// Copies a byte stream into the payload part of consecutive cells whose headers are already
// written; the stream arrives in pieces (encapsulation header, body, zeros, trailer).
class CellPayloadWriter {
 public:
  explicit CellPayloadWriter(std::uint8_t* cells) : cell_(cells + kHeaderBytes) {}

  void write(const std::uint8_t* src, std::size_t n) {
    while (n > 0) {
      const std::size_t chunk = std::min(n, kCellPayloadBytes - offset_);
      std::memcpy(cell_ + offset_, src, chunk);
      advance(chunk);
      src += chunk;
      n -= chunk;
    }
  }

  void zero(std::size_t n) {
    while (n > 0) {
      const std::size_t chunk = std::min(n, kCellPayloadBytes - offset_);
      std::memset(cell_ + offset_, 0, chunk);
      advance(chunk);
      n -= chunk;
    }
  }

 private:
  void advance(std::size_t chunk) {
    offset_ += chunk;
    if (offset_ == kCellPayloadBytes) {
      offset_ = 0;
      cell_ += kCellBytes;
    }
  }

  std::uint8_t* cell_;
  std::size_t offset_ = 0;
};

std::uint32_t crc_of_zeros(std::uint32_t crc, std::size_t n) {
  while (n > 0) {
    const std::size_t chunk = std::min(n, sizeof(kZeros));
    crc = crc32_ieee(crc, kZeros, chunk);
    n -= chunk;
  }
  return crc;
}

void write_headers(const SegmentParams& p, std::size_t cells, std::uint8_t* out) {
  CellHeader h{p.gfc, p.vc, static_cast<std::uint8_t>(p.efci ? kPtiCongestion : 0), p.clp};
  std::uint8_t body_header[kHeaderBytes];
  pack_header(h, p.format, std::span<std::uint8_t, 5>(body_header, kHeaderBytes));
  for (std::size_t i = 0; i + 1 < cells; ++i) {
    std::memcpy(out + i * kCellBytes, body_header, kHeaderBytes);
  }
  h.pti |= kPtiEndOfPdu;
  pack_header(h, p.format, std::span<std::uint8_t, 5>(out + (cells - 1) * kCellBytes, 5));
}

}  // namespace

std::uint32_t aal5_crc32(std::span<const std::uint8_t> bytes) {
  return crc32_ieee(0, bytes.data(), bytes.size());
}

std::uint32_t aal5_crc32_update(std::uint32_t crc, std::span<const std::uint8_t> bytes) {
  return crc32_ieee(crc, bytes.data(), bytes.size());
}

const char* to_string(SegmentStatus status) {
  switch (status) {
    case SegmentStatus::kOk:
      return "ok";
    case SegmentStatus::kSduTooLarge:
      return "SDU larger than 65535 bytes";
    case SegmentStatus::kBufferTooSmall:
      return "cell buffer too small for the PDU";
  }
  return "?";
}

SegmentResult aal5_segment(const SduParts& sdu, const SegmentParams& params,
                           std::span<std::uint8_t> out) {
  const std::size_t length = sdu.size();
  if (length > kAal5MaxSduBytes) return {SegmentStatus::kSduTooLarge, 0};
  const std::size_t cells = aal5_cell_count(length);
  if (out.size() < cells * kCellBytes) return {SegmentStatus::kBufferTooSmall, 0};

  const std::size_t pad = cells * kCellPayloadBytes - kAal5TrailerBytes - length;
  std::uint8_t trailer[kAal5TrailerBytes] = {params.cpcs_uu, params.cpi,
                                             static_cast<std::uint8_t>(length >> 8),
                                             static_cast<std::uint8_t>(length & 0xFF)};
  std::uint32_t crc = crc32_ieee(0, sdu.head.data(), sdu.head.size());
  crc = crc32_ieee(crc, sdu.body.data(), sdu.body.size());
  crc = crc_of_zeros(crc, sdu.zero_tail + pad);
  crc = crc32_ieee(crc, trailer, 4);
  trailer[4] = static_cast<std::uint8_t>(crc >> 24);
  trailer[5] = static_cast<std::uint8_t>(crc >> 16);
  trailer[6] = static_cast<std::uint8_t>(crc >> 8);
  trailer[7] = static_cast<std::uint8_t>(crc);

  write_headers(params, cells, out.data());
  CellPayloadWriter writer(out.data());
  writer.write(sdu.head.data(), sdu.head.size());
  writer.write(sdu.body.data(), sdu.body.size());
  writer.zero(sdu.zero_tail + pad);
  writer.write(trailer, kAal5TrailerBytes);
  return {SegmentStatus::kOk, cells};
}

const char* to_string(CellStatus status) {
  switch (status) {
    case CellStatus::kAccepted:
      return "accepted";
    case CellStatus::kPduComplete:
      return "PDU complete";
    case CellStatus::kHecError:
      return "HEC error";
    case CellStatus::kWrongVc:
      return "cell of another VC";
    case CellStatus::kNotUserData:
      return "OAM/RM cell (PTI 4..7)";
    case CellStatus::kCrcError:
      return "CRC-32 error";
    case CellStatus::kLengthError:
      return "length field disagrees with the PDU size";
    case CellStatus::kOversize:
      return "PDU larger than the maximum SDU";
    case CellStatus::kDiscarding:
      return "cell of a discarded PDU";
  }
  return "?";
}

Reassembler::Reassembler(VcAddress vc, const ReassemblerConfig& config) : vc_(vc), config_(config) {
  if (config.max_sdu_bytes > kAal5MaxSduBytes) {
    throw std::invalid_argument("reassembler max SDU " + std::to_string(config.max_sdu_bytes) +
                                " bytes exceeds the AAL5 limit of 65535 bytes");
  }
  buffer_.resize(aal5_cell_count(config.max_sdu_bytes) * kCellPayloadBytes);
}

void Reassembler::reset() {
  filled_ = 0;
  discarding_ = false;
}

void Reassembler::abandon_partial() {
  counters_.timeouts.add();
  counters_.drops.add(filled_ / kCellPayloadBytes);
  filled_ = 0;
}

bool Reassembler::poll(std::uint64_t now_ns) {
  if (filled_ == 0 || config_.timeout_ns == 0) return false;
  if (now_ns <= first_cell_ns_ + config_.timeout_ns) return false;
  abandon_partial();
  return true;
}

CellStatus Reassembler::push(std::span<const std::uint8_t, kCellBytes> cell, std::uint64_t now_ns) {
  counters_.cells.add();
  std::uint8_t header[kHeaderBytes];
  std::memcpy(header, cell.data(), kHeaderBytes);
  const HecStatus hec_status =
      check_hec(std::span<std::uint8_t, 5>(header, kHeaderBytes), config_.correct_hec);
  if (hec_status == HecStatus::kError) {
    counters_.hec_errors.add();
    return CellStatus::kHecError;
  }
  if (hec_status == HecStatus::kCorrected) counters_.hec_corrected.add();
  const std::span<const std::uint8_t, 5> h(header, kHeaderBytes);
  if (header_vc(h, config_.format) != vc_) {
    counters_.drops.add();
    return CellStatus::kWrongVc;
  }
  const std::uint8_t pti = static_cast<std::uint8_t>((header[3] >> 1) & 0x7u);
  if (pti & kPtiNotUserData) {
    counters_.drops.add();
    return CellStatus::kNotUserData;
  }
  const bool last = (pti & kPtiEndOfPdu) != 0;
  poll(now_ns);
  if (discarding_) {
    counters_.drops.add();
    discarding_ = !last;
    return CellStatus::kDiscarding;
  }
  if (filled_ == 0) first_cell_ns_ = now_ns;
  if (filled_ + kCellPayloadBytes > buffer_.size()) {
    counters_.oversize.add();
    counters_.drops.add(filled_ / kCellPayloadBytes + 1);
    filled_ = 0;
    discarding_ = !last;
    return CellStatus::kOversize;
  }
  std::memcpy(buffer_.data() + filled_, cell.data() + kHeaderBytes, kCellPayloadBytes);
  filled_ += kCellPayloadBytes;
  if (!last) return CellStatus::kAccepted;
  const std::size_t cells = filled_ / kCellPayloadBytes;
  last_bytes_ = filled_;
  filled_ = 0;
  return finish_pdu(cells);
}

CellStatus Reassembler::finish_pdu(std::size_t cells) {
  const std::size_t bytes = cells * kCellPayloadBytes;
  const std::uint8_t* pdu = buffer_.data();
  if (crc32_ieee(0, pdu, bytes) != ~kAal5CrcResidue) {
    counters_.crc_errors.add();
    return CellStatus::kCrcError;
  }
  const std::uint8_t* trailer = pdu + bytes - kAal5TrailerBytes;
  const std::size_t length = load_be16(trailer + 2);
  if (aal5_cell_count(length) != cells) {
    counters_.length_errors.add();
    return CellStatus::kLengthError;
  }
  if (length > config_.max_sdu_bytes) {
    counters_.oversize.add();
    return CellStatus::kOversize;
  }
  counters_.pdus.add();
  counters_.sdu_bytes.add(length);
  pdu_ = Aal5Pdu{std::span<const std::uint8_t>(pdu, length), trailer[0], trailer[1], cells};
  return CellStatus::kPduComplete;
}

}  // namespace mtperf::atm
