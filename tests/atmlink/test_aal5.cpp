#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "atmlink/aal5.hpp"

using namespace mtperf::atm;

namespace {

constexpr VcAddress kVc{0, 100};

std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::vector<std::uint8_t> pattern(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  std::uint32_t x = 12345;
  for (auto& b : v) {
    x = x * 1103515245u + 12345u;
    b = static_cast<std::uint8_t>(x >> 16);
  }
  return v;
}

std::span<const std::uint8_t, kCellBytes> cell_at(const std::vector<std::uint8_t>& wire,
                                                  std::size_t i) {
  return std::span<const std::uint8_t, kCellBytes>(wire.data() + i * kCellBytes, kCellBytes);
}

std::vector<std::uint8_t> segment(std::span<const std::uint8_t> sdu, VcAddress vc = kVc) {
  std::vector<std::uint8_t> wire(aal5_cell_count(sdu.size()) * kCellBytes);
  SegmentParams p;
  p.vc = vc;
  const SegmentResult r = aal5_segment(sdu, p, wire);
  REQUIRE(r.status == SegmentStatus::kOk);
  return wire;
}

// Pushes cells [first, last) and returns the status of the last one.
CellStatus push_range(Reassembler& r, const std::vector<std::uint8_t>& wire, std::size_t first,
                      std::size_t last, std::uint64_t now_ns = 0) {
  CellStatus s = CellStatus::kAccepted;
  for (std::size_t i = first; i < last; ++i)
    s = r.push(cell_at(wire, i), now_ns);
  return s;
}

}  // namespace

TEST_CASE("ISA-L crc32_ieee has the CRC-32/BZIP2 parameters AAL5 needs") {
  CHECK(aal5_crc32(bytes_of("123456789")) == 0xFC891918u);
  // Chaining: the CRC of a concatenation equals the CRC continued over the second part.
  CHECK(aal5_crc32_update(aal5_crc32(bytes_of("1234")), bytes_of("56789")) == 0xFC891918u);
  CHECK(aal5_crc32_update(aal5_crc32(bytes_of("123456789")), {}) == 0xFC891918u);
  // Residue: the CRC register after a message followed by its own CRC (big-endian).
  std::vector<std::uint8_t> m(bytes_of("123456789").begin(), bytes_of("123456789").end());
  for (int shift = 24; shift >= 0; shift -= 8) {
    m.push_back(static_cast<std::uint8_t>(0xFC891918u >> shift));
  }
  CHECK(~aal5_crc32(m) == kAal5CrcResidue);
  CHECK(kAal5CrcResidue == 0xC704DD7Bu);
}

TEST_CASE("a CPCS-PDU is laid out as SDU, pad, UU, CPI, length, CRC") {
  const auto sdu = bytes_of("hello");
  SegmentParams p;
  p.vc = kVc;
  p.cpcs_uu = 0x5A;
  std::vector<std::uint8_t> wire(kCellBytes);
  REQUIRE(aal5_segment(sdu, p, wire).cells == 1);
  CHECK(std::memcmp(&wire[5], "hello", 5) == 0);
  for (std::size_t i = 10; i < 5 + 40; ++i)
    CHECK(wire[i] == 0);  // 35 pad bytes
  CHECK(wire[45] == 0x5A);
  CHECK(wire[46] == 0x00);
  CHECK(wire[47] == 0x00);
  CHECK(wire[48] == 0x05);
  const std::uint32_t crc = aal5_crc32({&wire[5], 44});
  CHECK(wire[49] == static_cast<std::uint8_t>(crc >> 24));
  CHECK(wire[52] == static_cast<std::uint8_t>(crc));
  CHECK(((wire[3] >> 1) & 0x7) == kPtiEndOfPdu);  // the only cell is the last
}

// Every length in the plain build. The sanitized build (ASan at -O0: 50 s for the 2 GB of every
// length) takes every length to 4095 — every place of the trailer in a cell, many times — then the
// lengths at each cell boundary (the trailer filling a cell exactly, one byte over, one short)
// and the last 1,000: the lengths whose segmenting differs.
namespace {
bool length_tried(std::size_t len) {
#ifdef MTPERF_SANITIZED
  const std::size_t in_cell = (len + 8) % 48;
  return len < 4096 || in_cell <= 1 || in_cell == 47 || len + 1000 > kAal5MaxSduBytes;
#else
  (void)len;
  return true;
#endif
}
}  // namespace

TEST_CASE("round trip for every SDU length 0..65535 in ceil((len+8)/48) cells") {
  const auto data = pattern(kAal5MaxSduBytes);
  std::vector<std::uint8_t> wire(kAal5MaxCells * kCellBytes);
  Reassembler r(kVc);
  SegmentParams p;
  p.vc = kVc;
  std::size_t failures = 0, tried = 0;
  for (std::size_t len = 0; len <= kAal5MaxSduBytes; ++len) {
    if (!length_tried(len)) continue;
    ++tried;
    const std::span<const std::uint8_t> sdu(data.data(), len);
    const SegmentResult seg = aal5_segment(sdu, p, wire);
    const std::size_t expected_cells = (len + 8 + 47) / 48;
    CellStatus s = CellStatus::kAccepted;
    for (std::size_t i = 0; i < seg.cells; ++i)
      s = r.push(cell_at(wire, i), 0);
    const bool ok = seg.status == SegmentStatus::kOk && seg.cells == expected_cells &&
                    s == CellStatus::kPduComplete && r.pdu().sdu.size() == len &&
                    r.pdu().cells == expected_cells &&
                    std::memcmp(r.pdu().sdu.data(), sdu.data(), len) == 0;
    if (!ok && ++failures < 5) FAIL_CHECK("round trip failed at length " << len);
  }
  CHECK(failures == 0);
  CHECK(r.counters().pdus.load() == tried);
  CHECK(aal5_cell_count(kAal5MaxSduBytes) == 1366);
}

TEST_CASE("segmenting rejects an SDU over 65535 bytes and a short buffer") {
  const auto data = pattern(kAal5MaxSduBytes + 1);
  std::vector<std::uint8_t> wire(2 * kCellBytes);
  SegmentParams p;
  p.vc = kVc;
  CHECK(aal5_segment(data, p, wire).status == SegmentStatus::kSduTooLarge);
  CHECK(aal5_segment({data.data(), 100}, p, wire).status == SegmentStatus::kBufferTooSmall);
}

TEST_CASE("gathered SDU parts give the same cells as one contiguous SDU") {
  const auto body = pattern(1000);
  const std::uint8_t head[3] = {1, 2, 3};
  std::vector<std::uint8_t> flat = {1, 2, 3};
  flat.insert(flat.end(), body.begin(), body.end());
  flat.resize(flat.size() + 17, 0);
  SegmentParams p;
  p.vc = kVc;
  std::vector<std::uint8_t> a(aal5_cell_count(flat.size()) * kCellBytes), b(a.size());
  REQUIRE(aal5_segment(SduParts{head, body, 17}, p, a).status == SegmentStatus::kOk);
  REQUIRE(aal5_segment(flat, p, b).status == SegmentStatus::kOk);
  CHECK(a == b);
}

TEST_CASE("a payload bit flip is a CRC error") {
  const auto data = pattern(500);
  auto wire = segment(data);
  wire[2 * kCellBytes + 20] ^= 0x08;
  Reassembler r(kVc);
  CHECK(push_range(r, wire, 0, wire.size() / kCellBytes) == CellStatus::kCrcError);
  CHECK(r.counters().crc_errors.load() == 1);
  CHECK(r.counters().pdus.load() == 0);
}

TEST_CASE("a header bit flip is a HEC error and the cell is discarded") {
  const auto data = pattern(500);
  auto wire = segment(data);
  wire[kCellBytes + 2] ^= 0x10;
  Reassembler r(kVc);
  CHECK(r.push(cell_at(wire, 0), 0) == CellStatus::kAccepted);
  CHECK(r.push(cell_at(wire, 1), 0) == CellStatus::kHecError);
  const CellStatus last = push_range(r, wire, 2, wire.size() / kCellBytes);
  CHECK((last == CellStatus::kCrcError || last == CellStatus::kLengthError));
  CHECK(r.counters().hec_errors.load() == 1);

  SECTION("unless single-bit correction is on") {
    ReassemblerConfig c;
    c.correct_hec = true;
    Reassembler fixing(kVc, c);
    CHECK(push_range(fixing, wire, 0, wire.size() / kCellBytes) == CellStatus::kPduComplete);
    CHECK(fixing.counters().hec_corrected.load() == 1);
  }
}

TEST_CASE("a lost first or last cell is a CRC or length error") {
  const auto a = pattern(1000);
  const auto b = pattern(300);
  const auto wire_a = segment(a);
  const auto wire_b = segment(b);
  const std::size_t na = wire_a.size() / kCellBytes;
  const std::size_t nb = wire_b.size() / kCellBytes;

  SECTION("first cell lost") {
    Reassembler r(kVc);
    const CellStatus s = push_range(r, wire_a, 1, na);
    CHECK((s == CellStatus::kCrcError || s == CellStatus::kLengthError));
    CHECK(push_range(r, wire_b, 0, nb) == CellStatus::kPduComplete);  // the next PDU is fine
  }
  SECTION("last cell lost: the PDU runs into the next one") {
    Reassembler r(kVc);
    CHECK(push_range(r, wire_a, 0, na - 1) == CellStatus::kAccepted);
    const CellStatus s = push_range(r, wire_b, 0, nb);
    CHECK((s == CellStatus::kCrcError || s == CellStatus::kLengthError));
    const auto c = r.counters().snapshot();
    CHECK(c.crc_errors + c.length_errors == 1);
    CHECK(c.pdus == 0);
  }
}

TEST_CASE("a cell of another VC is dropped and counted") {
  const auto data = pattern(100);
  const auto mine = segment(data);
  const auto other = segment(data, VcAddress{0, 101});
  Reassembler r(kVc);
  CHECK(r.push(cell_at(mine, 0), 0) == CellStatus::kAccepted);
  CHECK(r.push(cell_at(other, 0), 0) == CellStatus::kWrongVc);
  CHECK(r.push(cell_at(mine, 1), 0) == CellStatus::kAccepted);
  CHECK(r.push(cell_at(mine, 2), 0) == CellStatus::kPduComplete);
  CHECK(r.counters().drops.load() == 1);
  CHECK(r.counters().cells.load() == 4);
}

TEST_CASE("OAM cells are not AAL5 data") {
  std::vector<std::uint8_t> cell(kCellBytes, 0);
  pack_header(CellHeader{0, kVc, 0x5, false}, HeaderFormat::kUni,
              std::span<std::uint8_t, 5>(cell.data(), 5));
  Reassembler r(kVc);
  CHECK(r.push(cell_at(cell, 0), 0) == CellStatus::kNotUserData);
  CHECK(r.counters().drops.load() == 1);
}

TEST_CASE("a partial PDU older than the timeout is abandoned") {
  const auto data = pattern(1000);
  const auto wire = segment(data);
  const std::size_t n = wire.size() / kCellBytes;
  ReassemblerConfig c;
  c.timeout_ns = 1'000'000;
  Reassembler r(kVc, c);
  CHECK(push_range(r, wire, 0, 5, 10'000'000) == CellStatus::kAccepted);
  CHECK_FALSE(r.poll(10'500'000));
  CHECK(r.poll(11'000'001));
  CHECK(r.counters().timeouts.load() == 1);
  CHECK(r.counters().drops.load() == 5);
  CHECK_FALSE(r.in_pdu());

  SECTION("a late cell also expires it before being taken as a new PDU's first") {
    CHECK(push_range(r, wire, 0, 3, 20'000'000) == CellStatus::kAccepted);
    CHECK(push_range(r, wire, 0, n, 30'000'000) == CellStatus::kPduComplete);
    CHECK(r.counters().timeouts.load() == 2);
  }
}

TEST_CASE("an SDU above the configured maximum is discarded as oversize") {
  ReassemblerConfig c;
  c.max_sdu_bytes = 1500;
  Reassembler r(kVc, c);
  const auto big = segment(pattern(1600));
  const auto exact = segment(pattern(1520));  // same 32 cells as 1500, but above the maximum
  const auto ok = segment(pattern(1500));
  const std::size_t nbig = big.size() / kCellBytes;
  CellStatus s = CellStatus::kAccepted;
  for (std::size_t i = 0; i < nbig; ++i) {
    s = r.push(cell_at(big, i), 0);
    if (i == 32) CHECK(s == CellStatus::kOversize);
    if (i > 32) CHECK(s == CellStatus::kDiscarding);
  }
  CHECK(push_range(r, exact, 0, exact.size() / kCellBytes) == CellStatus::kOversize);
  CHECK(push_range(r, ok, 0, ok.size() / kCellBytes) == CellStatus::kPduComplete);
  CHECK(r.counters().oversize.load() == 2);
  CHECK_THROWS_AS(Reassembler(kVc, ReassemblerConfig{HeaderFormat::kUni, 70000, 0, false}),
                  std::invalid_argument);
}

TEST_CASE("a length field that disagrees with the cell count is a length error") {
  // A PDU whose CRC is right but whose length claims 200 bytes in a 1-cell PDU.
  std::vector<std::uint8_t> cell(kCellBytes, 0);
  pack_header(CellHeader{0, kVc, kPtiEndOfPdu, false}, HeaderFormat::kUni,
              std::span<std::uint8_t, 5>(cell.data(), 5));
  cell[5 + 42] = 0;
  cell[5 + 43] = 200;
  const std::uint32_t crc = aal5_crc32({cell.data() + 5, 44});
  for (int i = 0; i < 4; ++i)
    cell[5 + 44 + i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
  Reassembler r(kVc);
  CHECK(r.push(cell_at(cell, 0), 0) == CellStatus::kLengthError);
  CHECK(r.counters().length_errors.load() == 1);
}
