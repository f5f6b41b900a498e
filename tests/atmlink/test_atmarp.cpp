#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "atmlink/atmarp.hpp"

using namespace mtperf::atm;

namespace {

using Bytes = std::vector<std::uint8_t>;

// NSAP addresses of the ATMARP server S and clients A and B on LIS 192.168.10.0/24.
const std::array<std::uint8_t, 20> kS = {0x47, 0x00, 0x05, 0x80, 0xFF, 0xE1, 0x00,
                                         0x00, 0x00, 0xF2, 0x1A, 0x00, 0x00, 0x01,
                                         0x00, 0x20, 0x48, 0x00, 0x00, 0x01};
const std::array<std::uint8_t, 20> kA = {0x47, 0x00, 0x05, 0x80, 0xFF, 0xE1, 0x00,
                                         0x00, 0x00, 0xF2, 0x1A, 0x00, 0x00, 0x02,
                                         0x00, 0x20, 0x48, 0x00, 0x00, 0x02};
const std::array<std::uint8_t, 20> kB = {0x47, 0x00, 0x05, 0x80, 0xFF, 0xE1, 0x00,
                                         0x00, 0x00, 0xF2, 0x1A, 0x00, 0x00, 0x03,
                                         0x00, 0x20, 0x48, 0x00, 0x00, 0x03};
constexpr Ipv4 kIpS = 0xC0A80A01, kIpA = 0xC0A80A02, kIpB = 0xC0A80A03;
constexpr std::uint64_t kSecond = 1'000'000'000;

AtmArpServer make_server() {
  return AtmArpServer(AtmNumber::nsap(kS), kIpS,
                      AtmArpServerConfig{0xC0A80A00, 24, 1200 * kSecond});
}

}  // namespace

TEST_CASE("ATMARP request bytes follow RFC 2225's field layout") {
  const Bytes expected = {
      0x00, 0x13,  // ar$hrd: ATM Forum
      0x08, 0x00,  // ar$pro: IPv4
      0x14,        // ar$shtl: NSAPA, 20 bytes
      0x00,        // ar$sstl: no subaddress
      0x00, 0x01,  // ar$op: ATMARP_Request
      0x04,        // ar$spln
      0x00,        // ar$thtl: target ATM number unknown
      0x00,        // ar$tstl
      0x04,        // ar$tpln
      0x47, 0x00, 0x05, 0x80, 0xFF, 0xE1, 0x00, 0x00, 0x00, 0xF2,  // ar$sha (A)
      0x1A, 0x00, 0x00, 0x02, 0x00, 0x20, 0x48, 0x00, 0x00, 0x02,
      0xC0, 0xA8, 0x0A, 0x02,  // ar$spa 192.168.10.2
      0xC0, 0xA8, 0x0A, 0x03,  // ar$tpa 192.168.10.3
  };
  const AtmArpPacket req = make_atmarp_request(AtmNumber::nsap(kA), kIpA, kIpB);
  CHECK(encode_atmarp(req) == expected);
  const AtmArpPacket back = decode_atmarp(expected);
  CHECK(back.op == AtmArpOp::kRequest);
  CHECK(back.source_atm == AtmNumber::nsap(kA));
  CHECK(back.source_ip == kIpA);
  CHECK(back.target_atm.empty());
  CHECK(back.target_ip == kIpB);
}

TEST_CASE("ATMARP exchange: InATMARP registration, resolution, NAK") {
  AtmArpServer server = make_server();

  // S opens a VC to A and asks who it is.
  const Bytes in_request = {
      0x00, 0x13, 0x08, 0x00, 0x14, 0x00, 0x00, 0x08, 0x04, 0x14, 0x00, 0x00, 0x47, 0x00,
      0x05, 0x80, 0xFF, 0xE1, 0x00, 0x00, 0x00, 0xF2,  // ar$sha (S)
      0x1A, 0x00, 0x00, 0x01, 0x00, 0x20, 0x48, 0x00, 0x00, 0x01, 0xC0, 0xA8, 0x0A, 0x01,  // ar$spa
      0x47, 0x00, 0x05, 0x80, 0xFF, 0xE1, 0x00, 0x00, 0x00, 0xF2,  // ar$tha (A)
      0x1A, 0x00, 0x00, 0x02, 0x00, 0x20, 0x48, 0x00, 0x00, 0x02,
  };
  CHECK(encode_atmarp(server.make_inatmarp_request(AtmNumber::nsap(kA))) == in_request);

  // A answers with its IP address; S registers it.
  const Bytes in_reply = {
      0x00, 0x13, 0x08, 0x00, 0x14, 0x00, 0x00, 0x09, 0x04, 0x14, 0x00, 0x04, 0x47, 0x00,
      0x05, 0x80, 0xFF, 0xE1, 0x00, 0x00, 0x00, 0xF2,  // ar$sha (A)
      0x1A, 0x00, 0x00, 0x02, 0x00, 0x20, 0x48, 0x00, 0x00, 0x02, 0xC0, 0xA8, 0x0A, 0x02,  // ar$spa
      0x47, 0x00, 0x05, 0x80, 0xFF, 0xE1, 0x00, 0x00, 0x00, 0xF2,  // ar$tha (S)
      0x1A, 0x00, 0x00, 0x01, 0x00, 0x20, 0x48, 0x00, 0x00, 0x01, 0xC0, 0xA8, 0x0A, 0x01,  // ar$tpa
  };
  const AtmArpPacket a_reply =
      make_inatmarp_reply(decode_atmarp(in_request), AtmNumber::nsap(kA), kIpA);
  CHECK(encode_atmarp(a_reply) == in_reply);
  CHECK_FALSE(server.handle(decode_atmarp(in_reply), 0).has_value());
  CHECK(server.resolve(kIpA, 0) == AtmNumber::nsap(kA));

  // B registers by asking for its own address.
  const auto b_self = server.handle(make_atmarp_request(AtmNumber::nsap(kB), kIpB, kIpB), 0);
  REQUIRE(b_self);
  CHECK(b_self->op == AtmArpOp::kReply);
  CHECK(server.size() == 2);

  // A resolves B.
  const Bytes a_asks_b = encode_atmarp(make_atmarp_request(AtmNumber::nsap(kA), kIpA, kIpB));
  const auto reply = server.handle(decode_atmarp(a_asks_b), 5 * kSecond);
  REQUIRE(reply);
  const Bytes expected_reply = {
      0x00, 0x13, 0x08, 0x00, 0x14, 0x00, 0x00, 0x02, 0x04, 0x14, 0x00, 0x04, 0x47, 0x00,
      0x05, 0x80, 0xFF, 0xE1, 0x00, 0x00, 0x00, 0xF2,  // ar$sha (B, the answer)
      0x1A, 0x00, 0x00, 0x03, 0x00, 0x20, 0x48, 0x00, 0x00, 0x03, 0xC0, 0xA8, 0x0A, 0x03,  // ar$spa
      0x47, 0x00, 0x05, 0x80, 0xFF, 0xE1, 0x00, 0x00, 0x00, 0xF2,  // ar$tha (A)
      0x1A, 0x00, 0x00, 0x02, 0x00, 0x20, 0x48, 0x00, 0x00, 0x02, 0xC0, 0xA8, 0x0A, 0x02,  // ar$tpa
  };
  CHECK(encode_atmarp(*reply) == expected_reply);

  // An unknown address draws a NAK: the request with op 10.
  const auto nak = server.handle(make_atmarp_request(AtmNumber::nsap(kA), kIpA, 0xC0A80A09), 0);
  REQUIRE(nak);
  const Bytes expected_nak = {
      0x00, 0x13, 0x08, 0x00, 0x14, 0x00, 0x00, 0x0A, 0x04, 0x00, 0x00, 0x04, 0x47, 0x00,
      0x05, 0x80, 0xFF, 0xE1, 0x00, 0x00, 0x00, 0xF2,  // ar$sha (A)
      0x1A, 0x00, 0x00, 0x02, 0x00, 0x20, 0x48, 0x00, 0x00, 0x02, 0xC0, 0xA8, 0x0A, 0x02,  // ar$spa
      0xC0, 0xA8, 0x0A, 0x09,                                                              // ar$tpa
  };
  CHECK(encode_atmarp(*nak) == expected_nak);
  CHECK(server.stats().naks == 1);
}

TEST_CASE("ATMARP server entries age out and are not stolen while live") {
  AtmArpServer server = make_server();
  server.handle(make_atmarp_request(AtmNumber::nsap(kA), kIpA, kIpA), 0);
  // B claims A's IP while A's entry is live: refused, A keeps it.
  server.handle(make_atmarp_request(AtmNumber::nsap(kB), kIpA, kIpA), 10 * kSecond);
  CHECK(server.stats().conflicts == 1);
  CHECK(server.resolve(kIpA, 10 * kSecond) == AtmNumber::nsap(kA));
  CHECK(server.resolve(kIpA, 1199 * kSecond).has_value());
  CHECK_FALSE(server.resolve(kIpA, 1200 * kSecond).has_value());
  CHECK(server.expire(1200 * kSecond) == 1);
  CHECK(server.size() == 0);
  // Outside the LIS: never registered, and requests for it are NAKed.
  server.handle(make_atmarp_request(AtmNumber::nsap(kB), 0x0A000001, 0x0A000001), 0);
  CHECK(server.size() == 0);
}

TEST_CASE("ATMARP decode names the bad field") {
  Bytes ok = encode_atmarp(make_atmarp_request(AtmNumber::nsap(kA), kIpA, kIpB));
  auto bad = ok;
  bad[1] = 0x01;
  CHECK_THROWS_WITH(decode_atmarp(bad), Catch::Contains("ar$hrd"));
  bad = ok;
  bad[7] = 3;
  CHECK_THROWS_WITH(decode_atmarp(bad), Catch::Contains("ar$op 3"));
  bad = ok;
  bad.pop_back();
  CHECK_THROWS_WITH(decode_atmarp(bad), Catch::Contains("ar$tpa"));
  bad = ok;
  bad[8] = 16;
  CHECK_THROWS_WITH(decode_atmarp(bad), Catch::Contains("ar$spa"));
  bad = ok;
  bad.push_back(0);
  CHECK_THROWS_WITH(decode_atmarp(bad), Catch::Contains("after ar$tpa"));
  CHECK_THROWS_WITH(decode_atmarp(Bytes(5)), Catch::Contains("12-byte"));
  CHECK_THROWS(AtmArpServer(AtmNumber::nsap(kS), 0x0A000001, AtmArpServerConfig{0xC0A80A00, 24}));
}
