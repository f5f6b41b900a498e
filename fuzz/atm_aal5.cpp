// Fuzz target: AAL5 reassembly of one VC and the encapsulations read from the reassembled SDU —
// the receive path of every emulated ATM adapter (Reassembler::push/poll, check_hec,
// decapsulate for LLC/SNAP, VC-mux and LANE).
//
// Input: a config (byte 0: bit 0 NNI, bit 1 HEC correction, bits 2-3 reassembly timeout; then
// the maximum SDU, 2 bytes; the VPI and VCI, 2 bytes each), then steps, each one byte of kind
// (bits 0-1) and time step (bits 2-7, in µs) followed by its data:
//   0: a raw cell (53 bytes);
//   1: a raw cell whose HEC is made right, so headers get past the HEC check;
//   2: an SDU (a 2-byte length, then its bytes) segmented into cells on the reassembler's VC
//      after reset(): it must come out exactly as it went in (or as oversize);
//   3: poll() for the reassembly timeout.
// Segmenting SDUs here lets the fuzzer reach the encapsulations behind a good CRC-32, which raw
// cells would almost never carry.
//
// Findings beyond crashes and sanitizer reports: a HEC "correction" that leaves a header wrong
// or changes more than one bit; a PDU larger than the configured maximum or whose cells do not
// match its length; an SDU segmented and reassembled that changed; a decapsulated payload
// outside its SDU; counters that disagree with what was pushed.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "atmlink/aal5.hpp"
#include "atmlink/encap.hpp"
#include "fuzz/fuzz_support.hpp"

namespace mtperf::fuzz {
namespace {

using namespace mtperf::atm;

constexpr uint64_t kTimeouts[] = {0, 1000, 1000000, 1000000000};

void check_hec_repair(std::span<const uint8_t, kCellBytes> cell) {
  std::array<uint8_t, 5> h;
  std::copy_n(cell.begin(), 5, h.begin());
  const HecStatus s = check_hec(h, true);
  if (s != HecStatus::kCorrected) return;
  int flipped = 0;
  for (size_t i = 0; i < 5; ++i)
    flipped += std::popcount(unsigned(h[i] ^ cell[i]));
  check(flipped == 1, "a HEC correction that changed more than one bit");
  check(check_hec(h, false) == HecStatus::kOk, "a HEC correction that left the header wrong");
}

void check_encapsulations(std::span<const uint8_t> sdu) {
  auto inside = [&](std::span<const uint8_t> p) {
    return p.empty() || (p.data() >= sdu.data() && p.data() + p.size() <= sdu.data() + sdu.size());
  };
  std::vector<EncapParams> all = {{Encap::kLlcSnap, kEtherTypeIpv4},
                                  {Encap::kVcMux, kEtherTypeIpv6}};
  for (size_t frame : kLaneMaxFrameSizes)
    all.push_back({Encap::kLane, 0, kMinLecid, frame});
  for (const EncapParams& p : all) {
    const Decapsulated d = decapsulate(p, sdu);
    if (d.status != EncapStatus::kOk) continue;
    check(inside(d.payload), "a decapsulated payload outside its SDU");
    if (p.encap == Encap::kLane) {
      check(d.payload.size() >= kEthernetHeaderBytes, "a LANE frame without an 802.3 header");
      check(d.lecid >= kMinLecid && d.lecid <= kMaxLecid, "a LANE data frame with a bad LECID");
      check(sdu.size() <= p.lane_max_frame, "a LANE frame over the maximum frame size");
    }
  }
}

struct Reader {
  Reassembler r;
  const ReassemblerConfig config;
  uint64_t pushed = 0, complete = 0;

  CellStatus push(std::span<const uint8_t, kCellBytes> cell, uint64_t now) {
    check_hec_repair(cell);
    const CellStatus s = r.push(cell, now);
    ++pushed;
    if (s == CellStatus::kPduComplete) {
      ++complete;
      const Aal5Pdu& pdu = r.pdu();
      check(pdu.sdu.size() <= config.max_sdu_bytes, "a PDU larger than the maximum SDU");
      check(aal5_cell_count(pdu.sdu.size()) == pdu.cells, "a PDU whose cells miss its length");
      check_encapsulations(pdu.sdu);
    }
    return s;
  }
};

// Segments sdu on the reassembler's VC and pushes it into a reset reassembler.
void segment_and_push(Reader& rd, std::span<const uint8_t> sdu, uint8_t kind, uint64_t now) {
  SegmentParams sp;
  sp.vc = rd.r.vc();
  sp.format = rd.config.format;
  sp.clp = kind & 0x40;
  sp.efci = kind & 0x80;
  sp.cpcs_uu = kind;
  std::vector<uint8_t> cells(aal5_cell_count(sdu.size()) * kCellBytes);
  const SegmentResult seg = aal5_segment(sdu, sp, cells);
  check(seg.status == SegmentStatus::kOk, "an SDU of at most 65535 bytes that does not segment");
  rd.r.reset();
  CellStatus last = CellStatus::kAccepted;
  for (size_t c = 0; c < seg.cells; ++c) {
    last = rd.push(std::span<const uint8_t, kCellBytes>(cells.data() + c * kCellBytes, kCellBytes),
                   now);
    if (c + 1 < seg.cells && sdu.size() <= rd.config.max_sdu_bytes)
      check(last == CellStatus::kAccepted, "a cell of a good PDU refused");
  }
  if (sdu.size() > rd.config.max_sdu_bytes) {
    check(last == CellStatus::kOversize || last == CellStatus::kDiscarding,
          "an oversize PDU taken");
    return;
  }
  check(last == CellStatus::kPduComplete, "a good PDU not completed");
  const Aal5Pdu& pdu = rd.r.pdu();
  check(std::equal(sdu.begin(), sdu.end(), pdu.sdu.begin(), pdu.sdu.end()),
        "an SDU changed through segmentation and reassembly");
  check(pdu.cpcs_uu == sp.cpcs_uu && pdu.cpi == 0, "the trailer's UU or CPI changed");
}

void run(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  const uint8_t opt = in.u8();
  ReassemblerConfig config;
  config.format = (opt & 1) ? HeaderFormat::kNni : HeaderFormat::kUni;
  config.correct_hec = opt & 2;
  config.timeout_ns = kTimeouts[(opt >> 2) & 3];
  config.max_sdu_bytes = in.u16();
  VcAddress vc;
  vc.vpi = uint16_t(in.u16() & (config.format == HeaderFormat::kNni ? 0xFFF : 0xFF));
  vc.vci = in.u16();
  Reader rd{Reassembler(vc, config), config};

  uint64_t now = 0;
  while (!in.empty()) {
    const uint8_t kind = in.u8();
    now += uint64_t(kind >> 2) * 1000;
    switch (kind & 3) {
      case 0:
      case 1: {
        std::array<uint8_t, kCellBytes> cell{};
        const auto bytes = in.take(kCellBytes);
        std::copy(bytes.begin(), bytes.end(), cell.begin());
        if (kind & 1) cell[4] = hec(std::span<const uint8_t, 4>(cell.data(), 4));
        rd.push(cell, now);
        break;
      }
      case 2:
        segment_and_push(rd, in.record(), kind, now);
        break;
      case 3:
        rd.r.poll(now);
        break;
    }
  }
  const VcCountersSnapshot c = rd.r.counters().snapshot();
  check(c.cells == rd.pushed, "a cell count that differs from the cells pushed");
  check(c.pdus == rd.complete, "a PDU count that differs from the PDUs completed");
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mtperf::fuzz::run(data, size);
  return 0;
}
