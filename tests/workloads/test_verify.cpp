#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

#include "workloads/verify.hpp"

using namespace mtperf;

namespace {

std::vector<std::byte> stream(const Pattern& p, uint64_t offset, size_t n) {
  std::vector<std::byte> v(n);
  p.fill(v.data(), offset, n);
  return v;
}

}  // namespace

TEST_CASE("a pattern's bytes are the documented function of key and position") {
  const uint64_t key = verify_key(12345, 3, 0);
  Pattern p(key);
  // Byte o is byte o % 8 of table[w % 512] ^ (key + w * kStep): the table term repeats every
  // 512 words, so two bytes 4096 apart differ by the position term alone.
  for (uint64_t o : {0ull, 1ull, 7ull, 8ull, 4095ull, 123456789ull}) {
    uint64_t w = o / 8, w2 = w + Pattern::kTableWords;
    uint64_t a = key + w * Pattern::kStep, b = key + w2 * Pattern::kStep;
    uint8_t shift = uint8_t((o % 8) * 8);
    uint8_t t = uint8_t(p.byte_at(o) ^ uint8_t(a >> shift));
    REQUIRE(uint8_t(p.byte_at(o + 8 * Pattern::kTableWords) ^ uint8_t(b >> shift)) == t);
  }
}

TEST_CASE("fill and check agree at any offset and in any segmentation") {
  Pattern p(verify_key(1, 0, 1));
  for (uint64_t off : {0ull, 1ull, 5ull, 8ull, 13ull, 4093ull, (1ull << 40) + 3}) {
    for (size_t n :
         {size_t(0), size_t(1), size_t(7), size_t(8), size_t(9), size_t(300), size_t(65536 + 5)}) {
      auto v = stream(p, off, n);
      REQUIRE(p.first_mismatch(v.data(), off, n) == n);
      // The same bytes written in three pieces cut anywhere.
      std::vector<std::byte> w(n);
      size_t a = n / 3, b = n / 3 + n / 5;
      p.fill(w.data(), off, a);
      p.fill(w.data() + a, off + a, b - a);
      p.fill(w.data() + b, off + b, n - b);
      REQUIRE(w == v);
      for (size_t i = 0; i < n; i += 97)
        REQUIRE(uint8_t(v[i]) == p.byte_at(off + i));
    }
  }
}

TEST_CASE("every damaged byte is found at its place") {
  Pattern p(verify_key(99, 7, 0));
  const size_t n = 65536;
  for (size_t at :
       {size_t(0), size_t(1), size_t(8), size_t(255), size_t(256), size_t(40000), n - 1}) {
    auto v = stream(p, 1000, n);
    v[at] ^= std::byte{0x01};
    REQUIRE(p.first_mismatch(v.data(), 1000, n) == at);
  }
}

TEST_CASE("lost, duplicated and reordered blocks do not pass") {
  Pattern p(verify_key(5, 0, 0));
  const size_t n = 32768;
  auto whole = stream(p, 0, 2 * n);
  SECTION("a lost byte shifts what follows") {
    std::vector<std::byte> got(whole.begin() + 1, whole.begin() + 1 + n);
    REQUIRE(p.first_mismatch(got.data(), 0, n) < 8);  // a byte may match by chance (1/256)
  }
  SECTION("a block delivered twice") {
    std::vector<std::byte> got(whole.begin(), whole.begin() + n);
    std::memcpy(got.data() + 8192, whole.data() + 4096, 4096);
    size_t at = p.first_mismatch(got.data(), 0, n);
    REQUIRE(at >= 8192);
    REQUIRE(at < 8192 + 8);
  }
  SECTION("the same bytes one table period later") {
    // The table repeats every 4096 bytes; the position term still tells the copies apart.
    std::vector<std::byte> got(whole.begin() + 4096, whole.begin() + 4096 + n);
    REQUIRE(p.first_mismatch(got.data(), 0, n) < 8);
  }
  SECTION("two flows, two directions, two seeds: different bytes") {
    REQUIRE(stream(Pattern(verify_key(5, 0, 1)), 0, 64) != stream(p, 0, 64));
    REQUIRE(stream(Pattern(verify_key(5, 1, 0)), 0, 64) != stream(p, 0, 64));
    REQUIRE(stream(Pattern(verify_key(6, 0, 0)), 0, 64) != stream(p, 0, 64));
  }
}

TEST_CASE("VerifyStats counts bad receives and bytes and describes the first ones") {
  Pattern p(verify_key(42, 2, 1));
  VerifyStats s;
  auto good = stream(p, 500, 1000);
  s.check(p, good.data(), good.size(), 500);
  REQUIRE(s.bytes_checked == 1000);
  REQUIRE(s.bad_receives == 0);
  REQUIRE(s.kept == 0);

  auto bad = stream(p, 1500, 200);
  const uint8_t wrong = uint8_t(p.byte_at(1537) ^ 0x11);
  bad[37] = std::byte{wrong};
  bad[38] = std::byte(uint8_t(bad[38]) ^ 0xff);
  s.check(p, bad.data(), bad.size(), 1500);
  REQUIRE(s.bytes_checked == 1200);
  REQUIRE(s.bad_receives == 1);
  REQUIRE(s.bad_bytes == 2);
  REQUIRE(s.kept == 1);
  const VerifyMismatch& m = s.first[0];
  REQUIRE(m.offset == 1537);
  REQUIRE(m.got == wrong);
  REQUIRE(m.expected == p.byte_at(1537));
  REQUIRE(m.around_offset == 1500 + 16);  // the line before the one holding byte 37
  REQUIRE(m.around_len == 64);
  REQUIRE(m.around[37 - 16] == wrong);

  std::string text = describe(m, "  ");
  REQUIRE_THAT(text, Catch::Contains("stream offset 1537: expected 0x"));
  char got[16], mark[8];
  std::snprintf(got, sizeof got, "got 0x%02x", wrong);
  std::snprintf(mark, sizeof mark, "[%02x]", wrong);
  REQUIRE_THAT(text, Catch::Contains(got));
  REQUIRE_THAT(text, Catch::Contains(mark));

  // UDP: datagram 9 of 100 bytes; its stream starts at 900, the offset is within the datagram.
  auto dgram = stream(p, 900, 100);
  dgram[20] ^= std::byte{0x80};
  s.check(p, dgram.data() + 16, 84, 16, 900, 9);
  REQUIRE(s.bad_receives == 2);
  REQUIRE(s.first[1].seq == 9);
  REQUIRE(s.first[1].offset == 20);
  REQUIRE_THAT(describe(s.first[1], ""), Catch::Contains("datagram 9, byte 20"));

  VerifyStats total;
  total.merge(s);
  total.merge(s);
  REQUIRE(total.bad_receives == 4);
  REQUIRE(total.kept == VerifyStats::kKeptMismatches);
}
