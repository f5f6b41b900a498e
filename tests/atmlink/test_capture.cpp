// The pcapng writer byte for byte (section, interfaces, packet blocks, the SUNATM and ERF record
// headers), the capture file's bound, and a capture of an emulated link under a fake clock whose
// records match the link's own counters. Needs nothing.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "atmlink/capture.hpp"
#include "atmlink/link.hpp"
#include "atmlink/pcapng.hpp"
#include "tests/atmlink/link_support.hpp"

using namespace mtperf::atm;
using namespace mtperf::atm::test;
namespace pn = mtperf::atm::pcapng;

namespace {

std::uint32_t le32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::uint32_t(b[at]) | std::uint32_t(b[at + 1]) << 8 | std::uint32_t(b[at + 2]) << 16 |
         std::uint32_t(b[at + 3]) << 24;
}
std::uint16_t le16(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::uint16_t(b[at] | b[at + 1] << 8);
}
std::uint16_t be16(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::uint16_t(b[at] << 8 | b[at + 1]);
}

std::vector<std::uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Block {
  std::uint32_t type = 0;
  std::size_t at = 0, length = 0;
};

// The blocks of a file, each checked for its length at both ends and 4-byte alignment.
std::vector<Block> blocks(const std::vector<std::uint8_t>& b) {
  std::vector<Block> out;
  for (std::size_t at = 0; at < b.size();) {
    REQUIRE(at + 12 <= b.size());
    const std::uint32_t length = le32(b, at + 4);
    REQUIRE(length % 4 == 0);
    REQUIRE(at + length <= b.size());
    REQUIRE(le32(b, at + length - 4) == length);
    out.push_back({le32(b, at), at, length});
    at += length;
  }
  return out;
}

std::string temp_path(const char* tag) {
  return "/tmp/mtperf-test-capture-" + std::to_string(::getpid()) + "-" + tag + ".pcapng";
}

// A good CPCS-PDU of `sdu` bytes (pad and trailer with the right CRC).
std::vector<std::uint8_t> cpcs_of(std::size_t sdu) {
  std::vector<std::uint8_t> p(aal5_cell_count(sdu) * kCellPayloadBytes, 0);
  for (std::size_t i = 0; i < sdu; ++i)
    p[i] = std::uint8_t(i + 1);
  p[p.size() - 6] = std::uint8_t(sdu >> 8);
  p[p.size() - 5] = std::uint8_t(sdu);
  const std::uint32_t crc = aal5_crc32(std::span<const std::uint8_t>(p).first(p.size() - 4));
  for (int i = 0; i < 4; ++i)
    p[p.size() - 4 + std::size_t(i)] = std::uint8_t(crc >> (24 - 8 * i));
  return p;
}

}  // namespace

TEST_CASE("pcapng: the section header block") {
  std::vector<std::uint8_t> b;
  pn::append_shb(b);
  REQUIRE(b.size() == 44);  // 24 fixed + shb_userappl "mtperf" (4 + 8) + end (4) + length (4)
  CHECK(le32(b, 0) == 0x0A0D0D0A);
  CHECK(le32(b, 4) == 44);
  CHECK(le32(b, 8) == 0x1A2B3C4D);
  CHECK(le16(b, 12) == 1);
  CHECK(le16(b, 14) == 0);
  CHECK(le32(b, 16) == 0xFFFFFFFF);  // section length not given: -1
  CHECK(le32(b, 20) == 0xFFFFFFFF);
  CHECK(le16(b, 24) == 4);  // shb_userappl
  CHECK(le16(b, 26) == 6);
  CHECK(std::string(b.begin() + 28, b.begin() + 34) == "mtperf");
  CHECK(b[34] == 0);
  CHECK(b[35] == 0);
  CHECK(le32(b, 36) == 0);  // opt_endofopt
  CHECK(le32(b, 40) == 44);
}

TEST_CASE("pcapng: an interface block carries the link type, snaplen and ns resolution") {
  std::vector<std::uint8_t> b;
  pn::append_idb(b, pn::kLinkTypeSunAtm, 1500, "atm0", "");
  // 16 fixed + if_name (4 + 4) + if_tsresol (4 + 4) + end (4) + length (4)
  REQUIRE(b.size() == 40);
  CHECK(le32(b, 0) == 1);
  CHECK(le32(b, 4) == 40);
  CHECK(le16(b, 8) == 123);
  CHECK(le16(b, 10) == 0);
  CHECK(le32(b, 12) == 1500);
  CHECK(le16(b, 16) == 2);
  CHECK(le16(b, 18) == 4);
  CHECK(std::string(b.begin() + 20, b.begin() + 24) == "atm0");
  CHECK(le16(b, 24) == 9);  // if_tsresol
  CHECK(le16(b, 26) == 1);
  CHECK(b[28] == 9);
  CHECK(b[29] == 0);
  CHECK(le32(b, 32) == 0);  // opt_endofopt
  CHECK(le32(b, 36) == 40);
  std::vector<std::uint8_t> e;
  pn::append_idb(e, pn::kLinkTypeErf, 0, "", "");
  CHECK(le16(e, 8) == 197);
  CHECK(le32(e, 12) == 0);
}

TEST_CASE("pcapng: a packet block pads its data to 4 bytes and keeps both lengths") {
  std::vector<std::uint8_t> b;
  const std::uint8_t head[2] = {0xAA, 0xBB};
  const std::uint8_t body[3] = {1, 2, 3};
  const std::span<const std::uint8_t> parts[] = {head, body};
  const std::uint64_t ts = 0x0000000112345678ull;
  const std::size_t n = pn::append_epb(b, 3, ts, parts, 5, 0, pn::kEpbOutbound);
  REQUIRE(n == b.size());
  REQUIRE(b.size() == pn::epb_bytes(5));
  REQUIRE(b.size() == 52);
  CHECK(le32(b, 0) == 6);
  CHECK(le32(b, 4) == 52);
  CHECK(le32(b, 8) == 3);   // interface
  CHECK(le32(b, 12) == 1);  // timestamp, high 32 bits
  CHECK(le32(b, 16) == 0x12345678);
  CHECK(le32(b, 20) == 5);  // captured
  CHECK(le32(b, 24) == 5);  // original
  CHECK(std::vector<std::uint8_t>(b.begin() + 28, b.begin() + 36) ==
        std::vector<std::uint8_t>{0xAA, 0xBB, 1, 2, 3, 0, 0, 0});
  CHECK(le16(b, 36) == 2);  // epb_flags
  CHECK(le16(b, 38) == 4);
  CHECK(le32(b, 40) == 2);  // outbound
  CHECK(le32(b, 44) == 0);  // opt_endofopt
  CHECK(le32(b, 48) == 52);

  // Cut at the snap length: captured 4, original 5.
  std::vector<std::uint8_t> c;
  pn::append_epb(c, 0, ts, parts, 5, 4, pn::kEpbInbound);
  CHECK(c.size() == 48);
  CHECK(le32(c, 20) == 4);
  CHECK(le32(c, 24) == 5);
  CHECK(le32(c, 36) == 1);  // inbound
}

TEST_CASE("SUNATM pseudo-header: direction bit, traffic type, VPI, VCI big-endian") {
  std::uint8_t h[4];
  pn::sunatm_header(h, true, pn::kSunAtmLlc, 0, 0x1234);
  CHECK(h[0] == 0x82);
  CHECK(h[1] == 0);
  CHECK(h[2] == 0x12);
  CHECK(h[3] == 0x34);
  pn::sunatm_header(h, false, pn::kSunAtmLane, 7, 41);
  CHECK(h[0] == 0x01);
  CHECK(h[1] == 7);
  CHECK(h[3] == 41);
}

TEST_CASE("ERF header: 32.32 timestamp, type, flags, rlen and wlen big-endian, cell header") {
  CHECK(pn::erf_timestamp(1'500'000'000ull) == ((1ull << 32) | 0x80000000ull));
  std::uint8_t h[20];
  const std::uint8_t cell[4] = {0x00, 0x00, 0x02, 0x92};
  pn::erf_header(h, 2'000'000'000ull, pn::kErfTypeAal5, 1, 16 + 4 + 96, 4 + 96, cell);
  const std::vector<std::uint8_t> b(h, h + 20);
  CHECK(le32(b, 0) == 0);  // fraction
  CHECK(le32(b, 4) == 2);  // seconds
  CHECK(b[8] == 4);
  CHECK(b[9] == (0x04 | 1));  // varying length, interface 1
  CHECK(be16(b, 10) == 116);
  CHECK(be16(b, 12) == 0);
  CHECK(be16(b, 14) == 100);
  CHECK(std::vector<std::uint8_t>(b.begin() + 16, b.end()) ==
        std::vector<std::uint8_t>{0x00, 0x00, 0x02, 0x92});
}

TEST_CASE("capture formats are named and parsed") {
  for (const CaptureFormat f :
       {CaptureFormat::kSunAtm, CaptureFormat::kErfAal5, CaptureFormat::kErfCells})
    CHECK(parse_capture_format(to_string(f)) == f);
  CHECK_THROWS_WITH(parse_capture_format("pcap"), Catch::Contains("erf-aal5"));
}

TEST_CASE("a sunatm capture file: one interface per line, good PDUs only, SDU without trailer") {
  const std::string path = temp_path("sunatm");
  CaptureOptions o;
  o.path = path;
  {
    CaptureFile file(o, 2);
    CaptureTap tap(file, 1);
    const auto pdu = cpcs_of(60);
    tap.pdu(true, {0, 33}, pn::kSunAtmLlc, pdu, 60, true, 5'000'000'123ull);
    tap.pdu(false, {0, 36}, pn::kSunAtmLlc, pdu, 0, false, 5'000'000'124ull);  // bad: not here
    CHECK(file.records() == 1);
  }
  const auto b = read_all(path);
  std::remove(path.c_str());
  const auto bl = blocks(b);
  REQUIRE(bl.size() == 4);
  CHECK(bl[0].type == pn::kShbType);
  CHECK(bl[1].type == pn::kIdbType);
  CHECK(bl[2].type == pn::kIdbType);
  CHECK(le16(b, bl[1].at + 8) == 123);
  REQUIRE(bl[3].type == pn::kEpbType);
  const std::size_t e = bl[3].at;
  CHECK(le32(b, e + 8) == 1);  // the tap's interface
  const std::uint64_t ts = std::uint64_t(le32(b, e + 12)) << 32 | le32(b, e + 16);
  CHECK(ts == 5'000'000'123ull);
  CHECK(le32(b, e + 20) == 64);
  CHECK(le32(b, e + 24) == 64);
  CHECK(b[e + 28] == 0x82);
  CHECK(be16(b, e + 30) == 33);
  CHECK(b[e + 32] == 1);
  CHECK(b[e + 32 + 59] == 60);
  CHECK(bl[3].length == pn::epb_bytes(64));
}

TEST_CASE("an erf-aal5 capture keeps pad, trailer and a bad CRC; rlen and wlen as on the line") {
  const std::string path = temp_path("erf");
  CaptureOptions o;
  o.path = path;
  o.format = CaptureFormat::kErfAal5;
  auto bad = cpcs_of(100);
  bad.back() ^= 0x01;
  {
    CaptureFile file(o, 1);
    CaptureTap tap(file, 0);
    tap.pdu(true, {0, 33}, pn::kSunAtmLlc, cpcs_of(100), 100, true, 1);
    tap.pdu(false, {0, 36}, pn::kSunAtmLlc, bad, 0, false, 2);
  }
  const auto b = read_all(path);
  std::remove(path.c_str());
  const auto bl = blocks(b);
  REQUIRE(bl.size() == 4);
  CHECK(le16(b, bl[1].at + 8) == 197);
  for (int i = 0; i < 2; ++i) {
    const std::size_t e = bl[2 + std::size_t(i)].at;
    CHECK(le32(b, e + 20) == 16 + 4 + 144);  // captured: ERF header, cell header, 3 cells
    CHECK(b[e + 28 + 8] == 4);               // ERF type AAL5
    CHECK(be16(b, e + 28 + 10) == 164);      // rlen
    CHECK(be16(b, e + 28 + 14) == 148);      // wlen
    CHECK(le32(b, e + 28 + 164 + 4) == (i == 0 ? 2u : 1u));  // epb_flags: no pad after 164
  }
  const std::size_t second = bl[3].at + 28;
  CHECK(b[second + 9] == (0x04 | 1));  // far's line: ERF interface 1
  // Cell header of VC 0/36, PTI 1: 00 00 02 42.
  CHECK(std::vector<std::uint8_t>(b.begin() + std::ptrdiff_t(second) + 16,
                                  b.begin() + std::ptrdiff_t(second) + 20) ==
        std::vector<std::uint8_t>{0x00, 0x00, 0x02, 0x42});
  CHECK(b[second + 20 + 143] == bad.back());  // the bad CRC as it arrived
}

TEST_CASE("the capture stops at its size limit and says so") {
  const std::string path = temp_path("max");
  CaptureOptions o;
  o.path = path;
  o.max_bytes = 4096;
  o.snap = 64;
  std::string summary;
  {
    CaptureFile file(o, 1);
    CaptureTap tap(file, 0);
    const auto pdu = cpcs_of(1000);
    for (int i = 0; i < 1000; ++i)
      tap.pdu(true, {0, 33}, pn::kSunAtmLlc, pdu, 1000, true, std::uint64_t(i));
    CHECK(file.full());
    CHECK(file.records() < 1000);
    CHECK(file.bytes() <= 4096);
    tap.flush();
    summary = file.summary();
  }
  CHECK_THAT(summary, Catch::Contains("stopped"));
  const auto b = read_all(path);
  std::remove(path.c_str());
  CHECK(b.size() <= 4096);
  const auto bl = blocks(b);
  CHECK(bl.back().type == pn::kEpbType);
  CHECK(le32(b, bl.back().at + 20) == 64);    // snapped
  CHECK(le32(b, bl.back().at + 24) == 1004);  // of the whole record
}

TEST_CASE("bad capture options are refused by name") {
  CaptureOptions o;
  o.path = temp_path("bad");
  o.max_bytes = 100;
  CHECK_THROWS_WITH(CaptureFile(o, 1), Catch::Contains("4096"));
  o.max_bytes = kDefaultCaptureMaxBytes;
  o.snap = 10;
  CHECK_THROWS_WITH(CaptureFile(o, 1), Catch::Contains("snap"));
  o.snap = 0;
  o.path = "/nonexistent-dir/x.pcapng";
  CHECK_THROWS_WITH(CaptureFile(o, 1), Catch::Contains("/nonexistent-dir/x.pcapng"));
}

TEST_CASE("a link's capture holds exactly the PDUs its VCs counted, bad CRCs included") {
  LinkConfig c;
  c.subnet = 0x0AE80000;
  c.near_ip = 0x0AE80001;
  c.far_ip = 0x0AE80002;
  c.server_ip = 0x0AE800FE;
  c.faults.cell_loss_rate = 0.02;
  for (const CaptureFormat format : {CaptureFormat::kSunAtm, CaptureFormat::kErfAal5}) {
    const std::string path = temp_path(to_string(format));
    CaptureOptions o;
    o.path = path;
    o.format = format;
    std::uint64_t expected = 0;
    {
      CaptureFile file(o, 1);
      CaptureTap tap(file, 0);
      AtmLink link(c);
      link.set_capture(&tap, 0);
      Collect sink;
      std::uint64_t now = 0;
      link.start(now);
      run_until(link, sink, now, 200 * kMs);
      std::vector<std::uint8_t> p(1000, 0x11);
      p[0] = 0x45;
      p[2] = 1000 >> 8;
      p[3] = 1000 & 0xFF;
      const std::uint8_t src[4] = {10, 232, 0, 1}, dst[4] = {10, 232, 0, 2};
      std::copy(src, src + 4, p.begin() + 12);
      std::copy(dst, dst + 4, p.begin() + 16);
      for (int i = 0; i < 200; ++i) {
        if (link.can_take(Side::kNear)) link.from_host(Side::kNear, p, now);
        run_until(link, sink, now, now + kMs);
      }
      run_until(link, sink, now, now + 100 * kMs);
      for (const VcStats& v : link.stats().vcs)
        expected += v.rx.pdus +
                    (format == CaptureFormat::kErfAal5 ? v.rx.crc_errors + v.rx.length_errors : 0);
      if (format == CaptureFormat::kErfAal5) {
        std::uint64_t bad = 0;
        for (const VcStats& v : link.stats().vcs)
          bad += v.rx.crc_errors + v.rx.length_errors;
        CHECK(bad > 0);
      }
      tap.flush();
      CHECK(file.records() == expected);
    }
    const auto b = read_all(path);
    std::remove(path.c_str());
    std::size_t epbs = 0;
    for (const Block& bl : blocks(b))
      epbs += bl.type == pn::kEpbType;
    CHECK(epbs == expected);
    CHECK(expected > 100);
  }
}

TEST_CASE("an erf-cells capture: ERF type 3, the header without HEC, the 48-byte payload") {
  const std::string path = temp_path("cells");
  CaptureOptions o;
  o.path = path;
  o.format = CaptureFormat::kErfCells;
  Cell cell{};
  for (std::size_t i = 0; i < kCellBytes; ++i)
    cell[i] = std::uint8_t(i);
  {
    CaptureFile file(o, 1);
    CaptureTap tap(file, 0);
    tap.pdu(true, {0, 33}, pn::kSunAtmLlc, cpcs_of(10), 10, true, 1);  // not a cell: no record
    tap.cell(false, cell, 3'000'000'000ull);
    CHECK(file.records() == 1);
  }
  const auto b = read_all(path);
  std::remove(path.c_str());
  const auto bl = blocks(b);
  REQUIRE(bl.size() == 3);
  const std::size_t e = bl[2].at;
  CHECK(le32(b, e + 20) == 68);  // 16 + 4 + 48
  const std::size_t r = e + 28;
  CHECK(le32(b, r + 4) == 3);  // seconds
  CHECK(b[r + 8] == 3);
  CHECK(b[r + 9] == (0x04 | 1));
  CHECK(be16(b, r + 10) == 68);
  CHECK(be16(b, r + 14) == 52);
  CHECK(std::vector<std::uint8_t>(b.begin() + std::ptrdiff_t(r) + 16,
                                  b.begin() + std::ptrdiff_t(r) + 20) ==
        std::vector<std::uint8_t>{0, 1, 2, 3});
  CHECK(b[r + 20] == 5);  // the payload follows, HEC (byte 4) left out
  CHECK(b[r + 20 + 47] == 52);
}
