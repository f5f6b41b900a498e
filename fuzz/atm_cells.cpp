// Fuzz target: a stream of 53-byte cells decoded PDU by PDU, as `mtperf atm decode` does with
// the cells a driver under test produced — HEC, VC, PTI, AAL5 reassembly and CRC, the
// encapsulation (decode_cell_stream).
//
// Input: one byte of options (bit 0: NNI headers; bits 1-2: auto, llc, vcmux or lane; bits 3-4:
// the LANE maximum frame), then the cells back to back (a partial cell at the end is ignored).
//
// Findings beyond crashes and sanitizer reports: any exception; a decoded PDU or an error that
// names cells outside the input; a decoded PDU that is not decoded the same after
// make_pdu_cells() encodes it again.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "atmlink/pdu_tool.hpp"
#include "fuzz/fuzz_support.hpp"

namespace mtperf::fuzz {
namespace {

using namespace mtperf::atm;

// The PDU encoded again from what was decoded, and decoded once more, is the same PDU.
void check_round_trip(const DecodedPdu& pdu, const DecodeOptions& o) {
  PduCellsSpec spec;
  spec.vc = pdu.vc;
  spec.format = o.format;
  spec.encap = pdu.encap;
  if (pdu.encap == Encap::kLlcSnap) spec.ethertype = pdu.ethertype;
  spec.lecid = pdu.encap == Encap::kLane ? pdu.lecid : kMinLecid;
  spec.lane_max_frame = o.lane_max_frame;
  std::vector<Cell> cells;
  try {
    cells = make_pdu_cells(spec, pdu.payload);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "fuzz: %s\n", e.what());
    check(false, "a decoded PDU that make_pdu_cells() refuses");
  }
  DecodeOptions again = o;
  again.encap = pdu.encap;
  const CellStreamResult r = decode_cell_stream(cells, again);
  check(!r.error && r.pdus.size() == 1, "a PDU from make_pdu_cells() that does not decode");
  const DecodedPdu& back = r.pdus[0];
  check(back.vc == pdu.vc && back.encap == pdu.encap, "a VC or encapsulation changed");
  check(back.ethertype == pdu.ethertype && back.lecid == pdu.lecid, "a header field changed");
  // LANE pads a short frame to the Ethernet minimum on the way in; the padding stays.
  const auto& a = pdu.payload;
  const auto& b = back.payload;
  check(b.size() >= a.size() && std::equal(a.begin(), a.end(), b.begin()), "the payload changed");
  check(
      std::all_of(b.begin() + std::ptrdiff_t(a.size()), b.end(), [](uint8_t v) { return v == 0; }),
      "padding that is not zero");
  check(pdu.encap == Encap::kLane || b.size() == a.size(), "padding outside LANE");
}

void run(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  const uint8_t opt = in.u8();
  DecodeOptions o;
  o.format = (opt & 1) ? HeaderFormat::kNni : HeaderFormat::kUni;
  switch ((opt >> 1) & 3) {
    case 1:
      o.encap = Encap::kLlcSnap;
      break;
    case 2:
      o.encap = Encap::kVcMux;
      break;
    case 3:
      o.encap = Encap::kLane;
      break;
    default:
      break;  // auto
  }
  o.lane_max_frame = kLaneMaxFrameSizes[(opt >> 3) & 3];
  std::vector<Cell> cells(in.left() / kCellBytes);
  for (Cell& c : cells) {
    const auto bytes = in.take(kCellBytes);
    std::memcpy(c.data(), bytes.data(), kCellBytes);
  }

  const CellStreamResult r = decode_cell_stream(cells, o);
  check(r.error.has_value() || !cells.empty(), "no cells, yet no error");
  if (r.error) check(r.error->cell <= cells.size(), "an error at a cell past the input");
  size_t next = 1;
  for (const DecodedPdu& pdu : r.pdus) {
    check(pdu.first_cell == next && pdu.cells >= 1, "PDUs that do not follow each other");
    next = pdu.first_cell + pdu.cells;
    check(next - 1 <= cells.size(), "a PDU past the input");
    const size_t head = pdu.encap == Encap::kLlcSnap ? kLlcSnapHeaderBytes
                        : pdu.encap == Encap::kLane  ? kLecidBytes
                                                     : 0;
    check(aal5_cell_count(head + pdu.payload.size()) == pdu.cells,
          "a PDU whose cells do not match its length");
    check(pdu.payload.size() <= kAal5MaxSduBytes, "a payload larger than an AAL5 SDU");
    check_round_trip(pdu, o);
  }
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mtperf::fuzz::run(data, size);
  return 0;
}
