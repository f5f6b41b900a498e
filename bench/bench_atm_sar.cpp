// AAL5 segmentation and reassembly cost: one 9180-byte SDU (the CLIP default MTU) segmented
// into 192 cells and reassembled, both CRC-32s and every HEC included. Reported per cell.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "atmlink/aal5.hpp"

namespace {

using namespace mtperf::atm;

void segment_and_reassemble(benchmark::State& state) {
  const auto sdu_bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::uint8_t> sdu(sdu_bytes);
  for (std::size_t i = 0; i < sdu.size(); ++i)
    sdu[i] = static_cast<std::uint8_t>(i * 7 + 3);
  const std::size_t cells = aal5_cell_count(sdu_bytes);
  std::vector<std::uint8_t> wire(cells * kCellBytes);
  const VcAddress vc{0, 100};
  Reassembler reassembler(vc);
  SegmentParams params;
  params.vc = vc;
  std::uint64_t now_ns = 0;
  for (auto _ : state) {
    const SegmentResult seg = aal5_segment(sdu, params, wire);
    CellStatus last = CellStatus::kAccepted;
    for (std::size_t c = 0; c < seg.cells; ++c) {
      last = reassembler.push(
          std::span<const std::uint8_t, kCellBytes>(wire.data() + c * kCellBytes, kCellBytes),
          ++now_ns);
    }
    if (last != CellStatus::kPduComplete) state.SkipWithError("PDU did not reassemble");
    benchmark::DoNotOptimize(reassembler.pdu().sdu.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * cells));
  // Seconds per cell, printed with an SI prefix ("11.8n" = 11.8 ns per cell).
  state.counters["time_per_cell"] =
      benchmark::Counter(static_cast<double>(cells), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(segment_and_reassemble)->Arg(9180)->Arg(1500)->Arg(40);

BENCHMARK_MAIN();
