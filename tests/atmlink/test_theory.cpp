#include <catch2/catch.hpp>

#include <cmath>

#include "atmlink/line.hpp"
#include "atmlink/theory.hpp"

using namespace mtperf::atm;

namespace {

double mbps(double bps) {
  return std::round(bps / 1e4) / 100.0;
}  // Mbit/s, 2 decimals

}  // namespace

TEST_CASE("theoretical TCP goodput over AAL5 matches the published table") {
  const double oc3 = kOc3c.cells_per_s();
  const double oc12 = kOc12c.cells_per_s();
  CHECK(cells_per_packet(9180, kLlcSnapOverheadBytes) == 192);
  CHECK(cells_per_packet(1500, kLlcSnapOverheadBytes) == 32);
  CHECK(cells_per_packet(1500, kLaneOverheadBytes) == 32);
  CHECK(mbps(tcp_goodput_bps(9180, oc3)) == Approx(134.34).margin(1e-9));
  CHECK(mbps(tcp_goodput_bps(9180, oc12)) == Approx(537.35).margin(1e-9));
  CHECK(mbps(tcp_goodput_bps(1500, oc3)) == Approx(127.86).margin(1e-9));
  CHECK(mbps(tcp_goodput_bps(1500, oc12)) == Approx(511.44).margin(1e-9));
  CHECK(mbps(tcp_goodput_bps(1500, oc3, kLaneOverheadBytes)) == Approx(127.86).margin(1e-9));
  CHECK(mbps(tcp_goodput_bps(1500, oc12, kLaneOverheadBytes)) == Approx(511.44).margin(1e-9));
  // The rounded rates in the issue (353,207.5 and 1,412,830 cells/s) give the same figures.
  CHECK(mbps(tcp_goodput_bps(9180, 353207.5)) == Approx(134.34).margin(1e-9));
  CHECK(mbps(tcp_goodput_bps(1500, 1412830.0, kLaneOverheadBytes)) == Approx(511.44).margin(1e-9));
  static_assert(tcp_goodput_bps(9180, 1000.0) > 0, "usable in constant expressions");
}

TEST_CASE("LANE's larger frames: each MTU fills its frame, and the cell tax shrinks") {
  const double oc3 = kOc3c.cells_per_s();
  const double oc12 = kOc12c.cells_per_s();
  // MTU = maximum frame - LECID 2 - 802.3 header 14; + AAL5 trailer 8, padded to 48-byte cells.
  CHECK(cells_per_packet(4528, kLaneOverheadBytes) == 95);    // 4552 / 48 = 94.8
  CHECK(cells_per_packet(9218, kLaneOverheadBytes) == 193);   // 9242 / 48 = 192.5
  CHECK(cells_per_packet(18174, kLaneOverheadBytes) == 380);  // 18198 / 48 = 379.1
  CHECK(mbps(tcp_goodput_bps(4528, oc3, kLaneOverheadBytes)) == Approx(133.13).margin(1e-9));
  CHECK(mbps(tcp_goodput_bps(4528, oc12, kLaneOverheadBytes)) == Approx(532.53).margin(1e-9));
  CHECK(mbps(tcp_goodput_bps(9218, oc3, kLaneOverheadBytes)) == Approx(134.20).margin(1e-9));
  CHECK(mbps(tcp_goodput_bps(9218, oc12, kLaneOverheadBytes)) == Approx(536.79).margin(1e-9));
  CHECK(mbps(tcp_goodput_bps(18174, oc3, kLaneOverheadBytes)) == Approx(134.75).margin(1e-9));
  CHECK(mbps(tcp_goodput_bps(18174, oc12, kLaneOverheadBytes)) == Approx(539.02).margin(1e-9));
}
