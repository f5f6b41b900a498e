// The cost of making a fleet's plan: all-pairs (the circle method) and shift for 64 to 1,024
// ranks, and their schedule over two transports. The target: a 64-rank all-pairs plan (2,016
// pairs, 63 rounds) in well under 10 ms.
#include <benchmark/benchmark.h>

#include "fleet/pattern.hpp"

using namespace mtperf::fleet;

static void BM_all_pairs(benchmark::State& state) {
  for (auto _ : state) {
    Plan p = all_pairs(uint32_t(state.range(0)));
    benchmark::DoNotOptimize(p.rounds.data());
  }
}
BENCHMARK(BM_all_pairs)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

static void BM_shift(benchmark::State& state) {
  for (auto _ : state) {
    Plan p = shift(uint32_t(state.range(0)));
    benchmark::DoNotOptimize(p.rounds.data());
  }
}
BENCHMARK(BM_shift)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);

static void BM_schedule(benchmark::State& state) {
  const Plan p = all_pairs(uint32_t(state.range(0)));
  for (auto _ : state) {
    auto steps = schedule(p, 2, Concurrency::round);
    benchmark::DoNotOptimize(steps.data());
  }
}
BENCHMARK(BM_schedule)->Arg(64)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
