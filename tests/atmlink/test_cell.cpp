#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "atmlink/cell.hpp"

using namespace mtperf::atm;

namespace {

std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

TEST_CASE("CRC-8 check values: plain 0xF4, with the HEC coset 0xA1") {
  CHECK(crc8(bytes_of("123456789")) == 0xF4);
  // CRC-8/I-432-1 is the same CRC with the 0x55 coset XORed on: the 0xA1.
  CHECK((crc8(bytes_of("123456789")) ^ kHecCoset) == 0xA1);
}

TEST_CASE("idle cell header 00 00 00 01 has HEC 0x52") {
  const std::array<std::uint8_t, 4> idle = {0x00, 0x00, 0x00, 0x01};
  CHECK(hec(idle) == 0x52);
  CellHeader h;
  h.vc = {0, 0};
  h.clp = true;
  std::array<std::uint8_t, 5> packed{};
  pack_header(h, HeaderFormat::kUni, packed);
  CHECK(packed == std::array<std::uint8_t, 5>{0x00, 0x00, 0x00, 0x01, 0x52});
}

TEST_CASE("UNI header packs GFC, VPI, VCI, PTI and CLP at their bit positions") {
  CellHeader h{0xA, {0xBC, 0x1234}, 0x5, true};
  std::array<std::uint8_t, 5> b{};
  pack_header(h, HeaderFormat::kUni, b);
  CHECK(b[0] == 0xAB);
  CHECK(b[1] == 0xC1);
  CHECK(b[2] == 0x23);
  CHECK(b[3] == 0x4B);  // VCI low nibble 4, PTI 101, CLP 1
  CHECK(b[4] == hec(std::span<const std::uint8_t, 4>(b.data(), 4)));
  const CellHeader u = unpack_header(b, HeaderFormat::kUni);
  CHECK(u.gfc == 0xA);
  CHECK(u.vc == VcAddress{0xBC, 0x1234});
  CHECK(u.pti == 0x5);
  CHECK(u.clp);
}

TEST_CASE("NNI header carries a 12-bit VPI in place of GFC") {
  CellHeader h{0, {0xABC, 0x0020}, 0x1, false};
  std::array<std::uint8_t, 5> b{};
  pack_header(h, HeaderFormat::kNni, b);
  CHECK(b[0] == 0xAB);
  CHECK(b[1] == 0xC0);
  CHECK(b[2] == 0x02);
  CHECK(b[3] == 0x02);
  const CellHeader u = unpack_header(b, HeaderFormat::kNni);
  CHECK(u.vc == VcAddress{0xABC, 0x20});
  CHECK(u.pti == 1);
  CHECK(header_vc(b, HeaderFormat::kNni) == VcAddress{0xABC, 0x20});
  // Read as a UNI header the same bytes mean GFC 0xA, VPI 0xBC.
  CHECK(unpack_header(b, HeaderFormat::kUni).vc.vpi == 0xBC);
}

TEST_CASE("HEC check detects every single-bit error and corrects it when asked") {
  CellHeader h{0, {1, 42}, 0, false};
  std::array<std::uint8_t, 5> good{};
  pack_header(h, HeaderFormat::kUni, good);
  auto copy = good;
  CHECK(check_hec(copy, false) == HecStatus::kOk);
  for (int bit = 0; bit < 40; ++bit) {
    auto bad = good;
    bad[bit / 8] ^= static_cast<std::uint8_t>(0x80 >> (bit % 8));
    auto detect = bad;
    CHECK(check_hec(detect, false) == HecStatus::kError);
    CHECK(check_hec(bad, true) == HecStatus::kCorrected);
    CHECK(bad == good);
  }
}

TEST_CASE("HEC correction refuses a header with a double-bit error it cannot place") {
  CellHeader h{0, {0, 100}, 0, false};
  std::array<std::uint8_t, 5> b{};
  pack_header(h, HeaderFormat::kUni, b);
  b[0] ^= 0x80;
  b[2] ^= 0x01;
  auto detect = b;
  CHECK(check_hec(detect, false) == HecStatus::kError);
  // A double error either maps to no single-bit syndrome or is miscorrected; it never passes.
  const HecStatus s = check_hec(b, true);
  CHECK(s != HecStatus::kOk);
}

TEST_CASE("validate_vc rejects out-of-range VPIs and reserved VCIs with the field named") {
  CHECK_NOTHROW(validate_vc({255, 32}, HeaderFormat::kUni));
  CHECK_NOTHROW(validate_vc({4095, 65535}, HeaderFormat::kNni));
  CHECK_THROWS_WITH(validate_vc({256, 100}, HeaderFormat::kUni),
                    Catch::Contains("VPI 256") && Catch::Contains("UNI"));
  CHECK_THROWS_WITH(validate_vc({0, 5}, HeaderFormat::kUni), Catch::Contains("VCI 5"));
}
