#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "atmlink/faults.hpp"

using namespace mtperf::atm;

namespace {

Cell make_cell(std::uint32_t i, bool clp = false) {
  Cell c{};
  pack_header(CellHeader{0, {1, static_cast<std::uint16_t>(32 + i % 1000)}, 0, clp},
              HeaderFormat::kUni, std::span<std::uint8_t, 5>(c.data(), 5));
  for (std::size_t b = kHeaderBytes; b < kCellBytes; ++b)
    c[b] = static_cast<std::uint8_t>(i + b);
  return c;
}

struct Run {
  std::vector<CellFate> fates;
  std::vector<Cell> cells;
};

Run run(const FaultConfig& config, std::uint32_t n) {
  FaultInjector f(config);
  Run r;
  for (std::uint32_t i = 0; i < n; ++i) {
    Cell c = make_cell(i);
    r.fates.push_back(f.apply(c));
    r.cells.push_back(c);
  }
  return r;
}

// |observed - expected| within 5 standard deviations of a binomial count.
bool within_5_sigma(double observed, double trials, double p) {
  return std::abs(observed - trials * p) <= 5 * std::sqrt(trials * p * (1 - p));
}

}  // namespace

TEST_CASE("fault injection is deterministic for a seed") {
  FaultConfig config{0.01, 0.01, 1e-4, false, 42};
  const Run a = run(config, 50'000);
  const Run b = run(config, 50'000);
  CHECK(a.fates == b.fates);
  CHECK(a.cells == b.cells);
  config.seed = 43;
  const Run c = run(config, 50'000);
  CHECK(a.fates != c.fates);
}

TEST_CASE("fault rates match their configuration within statistical tolerance") {
  constexpr double kCells = 1'000'000;
  FaultInjector f(FaultConfig{0.01, 0.002, 1e-5, false, 7});
  std::uint64_t hec_detected = 0, flipped_bits = 0;
  for (std::uint32_t i = 0; i < kCells; ++i) {
    const Cell clean = make_cell(i);
    Cell c = clean;
    if (f.apply(c) != CellFate::kPass) continue;
    auto header = std::span<std::uint8_t, 5>(c.data(), 5);
    if (check_hec(header, false) == HecStatus::kError) ++hec_detected;
    for (std::size_t b = kHeaderBytes; b < kCellBytes; ++b) {
      flipped_bits +=
          static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(c[b] ^ clean[b])));
    }
  }
  const auto& k = f.counters();
  CHECK(k.cells.load() == kCells);
  CHECK(within_5_sigma(static_cast<double>(k.lost.load()), kCells, 0.01));
  const double passed = kCells - static_cast<double>(k.lost.load());
  CHECK(within_5_sigma(static_cast<double>(k.hec_errors.load()), passed, 0.002));
  CHECK(hec_detected == k.hec_errors.load());  // every injected header error is detectable
  CHECK(within_5_sigma(static_cast<double>(k.payload_bit_errors.load()), passed * 384, 1e-5));
  CHECK(flipped_bits == k.payload_bit_errors.load());
}

TEST_CASE("CLP=1 cells are discarded when asked, CLP=0 cells pass") {
  FaultConfig config;
  config.discard_clp1 = true;
  FaultInjector f(config);
  Cell low = make_cell(1, true);
  Cell high = make_cell(2, false);
  const Cell high_before = high;
  CHECK(f.apply(low) == CellFate::kClpDiscarded);
  CHECK(f.apply(high) == CellFate::kPass);
  CHECK(high == high_before);
  CHECK(f.counters().clp_discarded.load() == 1);
}

TEST_CASE("rate 1 loses every cell, rate 0 touches none, bad rates are refused") {
  FaultInjector all(FaultConfig{1.0, 0, 0, false, 1});
  FaultInjector none(FaultConfig{});
  CHECK_FALSE(none.enabled());
  for (std::uint32_t i = 0; i < 100; ++i) {
    Cell c = make_cell(i);
    const Cell before = c;
    CHECK(all.apply(c) == CellFate::kLost);
    CHECK(none.apply(c) == CellFate::kPass);
    CHECK(c == before);
  }
  CHECK_THROWS_WITH(FaultInjector(FaultConfig{1.5, 0, 0, false, 1}),
                    Catch::Contains("cell loss rate"));
  CHECK_THROWS_WITH(FaultInjector(FaultConfig{0, 0, -1, false, 1}),
                    Catch::Contains("bit-error rate"));
}
