#include "atmlink/pdu_tool.hpp"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

namespace mtperf::atm {
namespace {

std::span<const std::uint8_t, 5> header_of(const Cell& c) {
  return std::span<const std::uint8_t, 5>(c.data(), kHeaderBytes);
}

std::string vc_text(VcAddress vc) {
  return fmt::format("{}/{}", vc.vpi, vc.vci);
}

// The CRC-32 a PDU's cells carry and the one they should carry, to explain a CRC error.
std::string crc_detail(std::span<const Cell> pdu_cells) {
  std::uint32_t crc = 0;
  for (std::size_t i = 0; i < pdu_cells.size(); ++i) {
    const std::size_t n = kCellPayloadBytes - (i + 1 == pdu_cells.size() ? 4 : 0);
    crc = aal5_crc32_update(crc, {pdu_cells[i].data() + kHeaderBytes, n});
  }
  const std::uint8_t* t = pdu_cells.back().data() + kCellBytes - 4;
  const std::uint32_t carried = (std::uint32_t{t[0]} << 24) | (std::uint32_t{t[1]} << 16) |
                                (std::uint32_t{t[2]} << 8) | std::uint32_t{t[3]};
  return fmt::format("computed 0x{:08x}, trailer carries 0x{:08x}", crc, carried);
}

std::string length_detail(std::span<const Cell> pdu_cells) {
  const std::uint8_t* t = pdu_cells.back().data() + kCellBytes - kAal5TrailerBytes;
  const std::size_t length = static_cast<std::size_t>((t[2] << 8) | t[3]);
  return fmt::format("length field {} needs {} cells, the PDU has {}", length,
                     aal5_cell_count(length), pdu_cells.size());
}

std::string cell_error(CellStatus status, const Cell& cell, std::span<const Cell> pdu_cells,
                       HeaderFormat format) {
  switch (status) {
    case CellStatus::kHecError:
      return fmt::format(
          "HEC error: header {:02x} {:02x} {:02x} {:02x} carries HEC 0x{:02x}, "
          "expected 0x{:02x}",
          cell[0], cell[1], cell[2], cell[3], cell[4],
          hec(std::span<const std::uint8_t, 4>(cell.data(), 4)));
    case CellStatus::kNotUserData:
      return fmt::format("OAM/RM cell (PTI {}), not AAL5 user data",
                         unpack_header(header_of(cell), format).pti);
    case CellStatus::kCrcError:
      return fmt::format("CRC-32 error in the PDU ending here ({})", crc_detail(pdu_cells));
    case CellStatus::kLengthError:
      return fmt::format("length error in the PDU ending here: {}", length_detail(pdu_cells));
    default:
      return to_string(status);
  }
}

// Fills pdu from the reassembled SDU; returns an error text when the encapsulation is wrong.
std::optional<std::string> decapsulate_into(const DecodeOptions& o, const Aal5Pdu& a,
                                            DecodedPdu& pdu) {
  EncapParams p;
  p.lane_max_frame = o.lane_max_frame;
  p.ethertype = 0;
  if (o.encap) {
    p.encap = *o.encap;
  } else {
    const bool llc = a.sdu.size() >= kLlcSnapHeaderBytes && a.sdu[0] == 0xAA && a.sdu[1] == 0xAA &&
                     a.sdu[2] == 0x03;
    p.encap = llc ? Encap::kLlcSnap : Encap::kVcMux;
  }
  const Decapsulated d = decapsulate(p, a.sdu);
  if (d.status != EncapStatus::kOk) {
    return fmt::format("{} SDU of {} bytes: {}", to_string(p.encap), a.sdu.size(),
                       to_string(d.status));
  }
  pdu.encap = p.encap;
  pdu.ethertype = d.ethertype;
  pdu.lecid = d.lecid;
  pdu.cpcs_uu = a.cpcs_uu;
  pdu.cpi = a.cpi;
  pdu.payload.assign(d.payload.begin(), d.payload.end());
  return std::nullopt;
}

}  // namespace

std::vector<Cell> make_pdu_cells(const PduCellsSpec& spec, std::span<const std::uint8_t> payload) {
  validate_vc(spec.vc, spec.format);
  EncapParams p;
  p.encap = spec.encap;
  p.ethertype = spec.ethertype.value_or(
      !payload.empty() && (payload[0] >> 4) == 6 ? kEtherTypeIpv6 : kEtherTypeIpv4);
  p.lecid = spec.lecid;
  p.lane_max_frame = spec.lane_max_frame;
  validate(p);
  std::uint8_t head[kMaxEncapHeaderBytes];
  SduParts parts;
  const EncapStatus es = encapsulate(p, payload, std::span<std::uint8_t, 8>(head, 8), parts);
  if (es != EncapStatus::kOk) {
    throw std::invalid_argument(fmt::format("cannot encapsulate a {}-byte payload as {}: {}",
                                            payload.size(), to_string(spec.encap), to_string(es)));
  }
  std::vector<Cell> cells(aal5_cell_count(parts.size()));
  SegmentParams sp;
  sp.vc = spec.vc;
  sp.format = spec.format;
  sp.clp = spec.clp;
  const SegmentResult r = aal5_segment(
      parts, sp, {reinterpret_cast<std::uint8_t*>(cells.data()), cells.size() * kCellBytes});
  if (r.status != SegmentStatus::kOk) {
    throw std::invalid_argument(
        fmt::format("cannot segment a {}-byte SDU: {}", parts.size(), to_string(r.status)));
  }
  return cells;
}

CellStreamResult decode_cell_stream(std::span<const Cell> cells, const DecodeOptions& o) {
  CellStreamResult result;
  if (cells.empty()) {
    result.error = CellStreamError{0, "no cells in the input"};
    return result;
  }
  ReassemblerConfig config;
  config.format = o.format;
  std::unique_ptr<Reassembler> r;
  std::size_t first = 0;  // index of the current PDU's first cell
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Cell& cell = cells[i];
    const VcAddress vc = header_vc(header_of(cell), o.format);
    if (!r || !r->in_pdu()) {
      if (!r || r->vc() != vc) r = std::make_unique<Reassembler>(vc, config);
      first = i;
    }
    const CellStatus s = r->push(std::span<const std::uint8_t, kCellBytes>(cell), 0);
    if (s == CellStatus::kAccepted) continue;
    const auto pdu_cells = cells.subspan(first, i - first + 1);
    if (s == CellStatus::kWrongVc) {
      result.error = CellStreamError{
          i + 1, fmt::format("VPI/VCI {} differs from {}, the VC of the PDU begun at cell {}",
                             vc_text(vc), vc_text(r->vc()), first + 1)};
      return result;
    }
    if (s != CellStatus::kPduComplete) {
      result.error = CellStreamError{i + 1, cell_error(s, cell, pdu_cells, o.format)};
      return result;
    }
    DecodedPdu pdu;
    pdu.vc = vc;
    pdu.first_cell = first + 1;
    pdu.cells = pdu_cells.size();
    if (auto err = decapsulate_into(o, r->pdu(), pdu)) {
      result.error = CellStreamError{i + 1, *err};
      return result;
    }
    result.pdus.push_back(std::move(pdu));
  }
  if (r && r->in_pdu()) {
    result.error = CellStreamError{
        cells.size(), fmt::format("input ended inside a PDU: cells {}..{} carry no end-of-PDU "
                                  "mark (PTI bit 0 of the last cell)",
                                  first + 1, cells.size())};
  }
  return result;
}

}  // namespace mtperf::atm
