#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "atmlink/line.hpp"

using namespace mtperf::atm;

namespace {

constexpr std::uint64_t kSecondNs = 1'000'000'000;

// A sender that sleeps until each PDU is due and wakes `overshoot_ns` late, for one simulated
// second; returns the cells per second it achieved.
double simulate(const PacerConfig& config, std::uint32_t cells_per_pdu,
                std::uint64_t overshoot_ns) {
  Pacer pacer(config);
  std::uint64_t now = 0;
  std::uint64_t cells = 0;
  while (true) {
    const std::uint64_t wait = pacer.ns_until_send(cells_per_pdu, now);
    if (wait > 0) now += wait + overshoot_ns;
    if (now > kSecondNs) break;
    pacer.charge(cells_per_pdu, now);
    cells += cells_per_pdu;
  }
  return static_cast<double>(cells);
}

}  // namespace

TEST_CASE("SONET line rates in cells per second") {
  CHECK(kOc3c.cells_per_s() == Approx(353207.5).epsilon(1e-6));
  CHECK(kOc12c.cells_per_s() == Approx(1412830.0).epsilon(1e-6));
  CHECK(kOc3c.payload_bps() == Approx(149.76e6));
  CHECK(kOc12c.ns_per_cell() == Approx(707.8).epsilon(1e-4));
  CHECK(parse_line_rate("oc3").num == kOc3c.num);
  CHECK(parse_line_rate("oc12").num == kOc12c.num);
  CHECK(parse_line_rate("100000").cells_per_s() == Approx(100000));
  CHECK(parse_line_rate("353207.5").cells_per_s() == Approx(353207.5));
  CHECK_THROWS_WITH(parse_line_rate("fast"), Catch::Contains("'fast'"));
  CHECK_THROWS_WITH(parse_line_rate("0"), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(parse_line_rate("-5"), Catch::Contains("'-5' is not oc3, oc12"));
  CHECK_THROWS_WITH(parse_line_rate("100k"), Catch::Contains("'100k' is not oc3, oc12"));
  CHECK_THROWS_WITH(parse_line_rate("1e300"), Catch::Contains("out of range"));
}

TEST_CASE("a sender whose sleeps overshoot by 80 us still achieves the nominal cell rate") {
  for (const LineRate rate : {kOc3c, kOc12c}) {
    for (const std::uint32_t pdu_cells : {1u, 32u, 192u}) {
      PacerConfig config;
      config.rate = rate;
      const double achieved = simulate(config, pdu_cells, 80'000);
      INFO("rate " << rate.cells_per_s() << " cells/s, " << pdu_cells << " cells per PDU");
      CHECK(std::abs(achieved / rate.cells_per_s() - 1.0) < 0.005);
    }
  }
}

TEST_CASE("dropping credit at each late wake-up cannot reach the line rate") {
  PacerConfig config;
  config.rate = kOc3c;
  config.bucket_cells = 1;  // no credit beyond the PDU itself
  const double achieved = simulate(config, 192, 80'000);
  CHECK(achieved / kOc3c.cells_per_s() < 0.9);
}

TEST_CASE("the virtual clock adds cell times exactly, with no drift") {
  Pacer pacer(PacerConfig{kOc12c, 4096});
  std::uint64_t done = 0;
  // 599,040,000 cells at 599.04e6/424 cells/s take exactly 424 s.
  for (int i = 0; i < 599'040; ++i)
    done = pacer.charge(1000, 0);
  CHECK(done == 424 * kSecondNs);
  CHECK(pacer.cells_charged() == 599'040'000u);
}

TEST_CASE("credit is bounded by the bucket depth") {
  Pacer pacer(PacerConfig{LineRate::from_cells_per_s(1'000'000), 100});  // 1 us per cell
  pacer.charge(10, 0);                                                   // line busy until 10 us
  CHECK(pacer.ns_until_send(10, 0) == 20'000);
  // After a 1 s stall only 100 cells of credit remain: the 10-cell PDU is due at once, and
  // after 100 cells' worth of PDUs the sender must wait again.
  const std::uint64_t late = kSecondNs;
  std::uint64_t sent = 0;
  while (pacer.ns_until_send(10, late) == 0) {
    pacer.charge(10, late);
    sent += 10;
  }
  CHECK(sent == 100);
  CHECK_THROWS(Pacer(PacerConfig{kOc3c, 0}));
}
