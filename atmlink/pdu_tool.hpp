#pragma once
// Whole PDUs as cell lists, for driver validation and the `mtperf atm cells|decode` commands.
// These are tool paths: they allocate, and make_pdu_cells() throws std::invalid_argument with a
// message naming the bad input. decode_cell_stream() reports the first error it finds, by cell
// number (1-based), and what was wrong.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "atmlink/aal5.hpp"
#include "atmlink/cell.hpp"
#include "atmlink/encap.hpp"

namespace mtperf::atm {

struct PduCellsSpec {
  VcAddress vc;
  HeaderFormat format = HeaderFormat::kUni;
  Encap encap = Encap::kLlcSnap;
  // LLC/SNAP EtherType; nullopt = from the packet's IP version nibble (6: IPv6, else IPv4).
  std::optional<std::uint16_t> ethertype;
  std::uint16_t lecid = kMinLecid;    // LANE
  std::size_t lane_max_frame = 1516;  // LANE
  bool clp = false;
};

// The cells of one PDU carrying payload (an IP packet, or an 802.3 frame for LANE).
std::vector<Cell> make_pdu_cells(const PduCellsSpec& spec, std::span<const std::uint8_t> payload);

struct DecodeOptions {
  HeaderFormat format = HeaderFormat::kUni;
  // nullopt = LLC/SNAP when the SDU starts with the routed LLC/SNAP header, else VC-mux.
  std::optional<Encap> encap;
  std::size_t lane_max_frame = 1516;
};

struct DecodedPdu {
  VcAddress vc;
  Encap encap = Encap::kVcMux;
  std::uint16_t ethertype = 0;  // LLC/SNAP header or LANE frame; 0 for VC-mux
  std::uint16_t lecid = 0;      // LANE
  std::uint8_t cpcs_uu = 0;
  std::uint8_t cpi = 0;
  std::vector<std::uint8_t> payload;
  std::size_t first_cell = 0;  // 1-based
  std::size_t cells = 0;
};

struct CellStreamError {
  std::size_t cell = 0;  // 1-based; 0 when the input held no cell at all
  std::string what;
};

struct CellStreamResult {
  std::vector<DecodedPdu> pdus;          // every PDU decoded before the first error
  std::optional<CellStreamError> error;  // the first error, if any
};

CellStreamResult decode_cell_stream(std::span<const Cell> cells, const DecodeOptions& options);

}  // namespace mtperf::atm
