// rdma_cm private data: the 48 bytes each end sends, round trip, byte order and rejections.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>

#include "verbs/private_data.hpp"

using namespace mtperf::rdma;

namespace {

ConnInfo sample() {
  ConnInfo c;
  c.verb = 2;
  c.flow = 0x01020304;
  c.cookie = 0x1122334455667788ull;
  c.addr = 0x00007f0012345000ull;
  c.rkey = 0xdeadbeef;
  c.slot_size = 65600;
  c.slots = 32;
  c.credits = 31;
  c.credit_addr = 0x00007f00abcdef40ull;
  return c;
}

}  // namespace

TEST_CASE("private data fits an RC connection request and a reply") {
  STATIC_REQUIRE(kPdBytes <= kReqPrivateMax);
  STATIC_REQUIRE(kPdBytes <= 196);
}

TEST_CASE("private data round-trips every field") {
  std::array<uint8_t, kPdBytes> b{};
  encode_conn_info(sample(), b.data());
  ConnInfo d;
  REQUIRE(decode_conn_info(b.data(), b.size(), d) == PdError::ok);
  ConnInfo s = sample();
  CHECK(d.verb == s.verb);
  CHECK(d.flow == s.flow);
  CHECK(d.cookie == s.cookie);
  CHECK(d.addr == s.addr);
  CHECK(d.rkey == s.rkey);
  CHECK(d.slot_size == s.slot_size);
  CHECK(d.slots == s.slots);
  CHECK(d.credits == s.credits);
  CHECK(d.credit_addr == s.credit_addr);
}

TEST_CASE("private data is big-endian, magic first") {
  std::array<uint8_t, kPdBytes> b{};
  encode_conn_info(sample(), b.data());
  const uint8_t head[] = {'M', 'T', 'R',  'D',  kPdVersion, 2,    0,    32,   1,    2,
                          3,   4,   0x11, 0x22, 0x33,       0x44, 0x55, 0x66, 0x77, 0x88};
  CHECK(std::memcmp(b.data(), head, sizeof head) == 0);
  // rkey at 28, credits at 36
  CHECK(b[28] == 0xde);
  CHECK(b[31] == 0xef);
  CHECK(b[36] == 0);
  CHECK(b[37] == 31);
}

TEST_CASE("private data that is not ours is refused with the reason") {
  std::array<uint8_t, kPdBytes> b{};
  encode_conn_info(sample(), b.data());
  ConnInfo d;
  CHECK(decode_conn_info(nullptr, 0, d) == PdError::too_short);
  CHECK(decode_conn_info(b.data(), kPdBytes - 1, d) == PdError::too_short);
  auto bad = b;
  bad[0] ^= 1;
  CHECK(decode_conn_info(bad.data(), bad.size(), d) == PdError::magic);
  bad = b;
  bad[4] = kPdVersion + 1;
  CHECK(decode_conn_info(bad.data(), bad.size(), d) == PdError::version);
  CHECK(to_string(PdError::version) == "an mtperf of another version");
  // rdma_cm may hand over more bytes than were sent (padded to the CM's size): fine.
  std::array<uint8_t, 56> longer{};
  std::memcpy(longer.data(), b.data(), b.size());
  CHECK(decode_conn_info(longer.data(), longer.size(), d) == PdError::ok);
}
