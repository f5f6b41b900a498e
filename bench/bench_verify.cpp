// What --verify costs per byte: writing the pattern into a send buffer and checking a received
// one, at the sizes the workloads use (64 KiB stream sends, 1 KiB, a 1-byte rr message).
#include <cstddef>
#include <vector>

#include <benchmark/benchmark.h>

#include "workloads/verify.hpp"

namespace {

void BM_PatternFill(benchmark::State& state) {
  mtperf::Pattern p(mtperf::verify_key(1, 0, 0));
  std::vector<std::byte> buf(size_t(state.range(0)));
  uint64_t off = 0;
  for (auto _ : state) {
    p.fill(buf.data(), off, buf.size());
    off += buf.size();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_PatternFill)->Arg(1)->Arg(1024)->Arg(65536);

void BM_PatternCheck(benchmark::State& state) {
  mtperf::Pattern p(mtperf::verify_key(1, 0, 0));
  mtperf::VerifyStats s;
  const size_t n = size_t(state.range(0));
  // Received at an odd offset, as TCP cuts a stream: the unaligned path.
  std::vector<std::byte> buf(n);
  p.fill(buf.data(), 3, n);
  for (auto _ : state) {
    s.check(p, buf.data(), n, 3);
    benchmark::DoNotOptimize(s.bad_receives);
  }
  if (s.bad_receives != 0) state.SkipWithError("pattern mismatch");
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_PatternCheck)->Arg(1)->Arg(1024)->Arg(65536);

}  // namespace

BENCHMARK_MAIN();
