// Micro-costs of the measurement path: recording one latency sample (target <= 20 ns, it sits in
// the rr loop) and taking the /proc snapshots at the edges of a measured window.
#include <cstdint>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "platform/cpu_stat.hpp"
#include "platform/interrupts.hpp"
#include "stats/histogram.hpp"

namespace {

// Round-trip times as a loopback/LAN rr test sees them: mostly 10-60 us with a long tail. A
// power-of-two table that does not fit in L1 keeps the access pattern realistic.
std::vector<uint64_t> latencies() {
  std::mt19937_64 gen(42);
  std::lognormal_distribution<double> dist(10.2, 0.6);  // median about 27 us
  std::vector<uint64_t> v(1 << 16);
  for (auto& x : v)
    x = static_cast<uint64_t>(dist(gen));
  return v;
}

void BM_HistogramRecord(benchmark::State& state) {
  const auto values = latencies();
  mtperf::Histogram h;
  size_t i = 0;
  for (auto _ : state) {
    h.record(values[i]);
    i = (i + 1) & (values.size() - 1);
  }
  benchmark::DoNotOptimize(h.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramRecord);

void BM_HistogramMerge(benchmark::State& state) {
  mtperf::Histogram a, b;
  for (const auto v : latencies())
    b.record(v);
  for (auto _ : state) {
    a.merge(b);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_HistogramMerge);

void BM_HistogramPercentile(benchmark::State& state) {
  mtperf::Histogram h;
  for (const auto v : latencies())
    h.record(v);
  for (auto _ : state)
    benchmark::DoNotOptimize(h.percentile(99.9));
}
BENCHMARK(BM_HistogramPercentile);

void BM_ReadCpuSnapshot(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(mtperf::read_cpu_snapshot());
}
BENCHMARK(BM_ReadCpuSnapshot);

void BM_ReadInterruptSnapshot(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(mtperf::read_interrupt_snapshot());
}
BENCHMARK(BM_ReadInterruptSnapshot);

}  // namespace

BENCHMARK_MAIN();
