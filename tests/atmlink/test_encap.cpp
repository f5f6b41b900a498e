#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "atmlink/encap.hpp"

using namespace mtperf::atm;

namespace {

std::vector<std::uint8_t> flatten(const SduParts& p) {
  std::vector<std::uint8_t> v(p.head.begin(), p.head.end());
  v.insert(v.end(), p.body.begin(), p.body.end());
  v.resize(v.size() + p.zero_tail, 0);
  return v;
}

std::vector<std::uint8_t> encode(const EncapParams& p, const std::vector<std::uint8_t>& payload,
                                 EncapStatus expect = EncapStatus::kOk) {
  std::array<std::uint8_t, kMaxEncapHeaderBytes> head{};
  SduParts parts;
  REQUIRE(encapsulate(p, payload, head, parts) == expect);
  return flatten(parts);
}

}  // namespace

TEST_CASE("LLC/SNAP routed IPv4 and IPv6 headers (RFC 2684)") {
  const std::vector<std::uint8_t> packet = {0x45, 0x00, 0x00, 0x14};
  EncapParams p;
  CHECK(encode(p, packet) == std::vector<std::uint8_t>{0xAA, 0xAA, 0x03, 0x00, 0x00, 0x00, 0x08,
                                                       0x00, 0x45, 0x00, 0x00, 0x14});
  p.ethertype = kEtherTypeIpv6;
  const auto v6 = encode(p, packet);
  CHECK(v6[6] == 0x86);
  CHECK(v6[7] == 0xDD);
  const Decapsulated d = decapsulate(p, v6);
  CHECK(d.status == EncapStatus::kOk);
  CHECK(d.ethertype == kEtherTypeIpv6);
  CHECK(std::vector<std::uint8_t>(d.payload.begin(), d.payload.end()) == packet);
}

TEST_CASE("LLC/SNAP decode rejects short, bridged and unknown-type SDUs") {
  EncapParams p;
  const std::vector<std::uint8_t> short_sdu = {0xAA, 0xAA, 0x03};
  CHECK(decapsulate(p, short_sdu).status == EncapStatus::kTooShort);
  const std::vector<std::uint8_t> bridged = {0xAA, 0xAA, 0x03, 0x00, 0x80, 0xC2, 0x00, 0x07, 0};
  CHECK(decapsulate(p, bridged).status == EncapStatus::kNotLlcSnapRouted);
  const std::vector<std::uint8_t> ipx = {0xAA, 0xAA, 0x03, 0x00, 0x00, 0x00, 0x81, 0x37, 0};
  CHECK(decapsulate(p, ipx).status == EncapStatus::kUnknownEtherType);
  CHECK_THROWS_WITH(validate(EncapParams{Encap::kLlcSnap, 0x8137, 1, 1516}),
                    Catch::Contains("EtherType"));
}

TEST_CASE("VC multiplexing carries the packet alone") {
  EncapParams p{Encap::kVcMux, kEtherTypeIpv4, 1, 1516};
  const std::vector<std::uint8_t> packet = {1, 2, 3};
  CHECK(encode(p, packet) == packet);
  const Decapsulated d = decapsulate(p, packet);
  CHECK(d.status == EncapStatus::kOk);
  CHECK(d.ethertype == kEtherTypeIpv4);
  CHECK(d.payload.size() == 3);
  const std::vector<std::uint8_t> huge(kAal5MaxSduBytes + 1);
  encode(p, huge, EncapStatus::kSduTooLarge);
}

TEST_CASE("LANE data frames: LECID, then the frame padded to 60 bytes") {
  EncapParams p{Encap::kLane, 0, 0x0102, 1516};
  std::vector<std::uint8_t> frame(42, 0x11);  // an ARP-sized frame, under the minimum
  frame[12] = 0x08;
  frame[13] = 0x06;
  const auto sdu = encode(p, frame);
  REQUIRE(sdu.size() == 2 + 60);
  CHECK(sdu[0] == 0x01);
  CHECK(sdu[1] == 0x02);
  CHECK(sdu[2 + 41] == 0x11);
  CHECK(sdu[2 + 42] == 0x00);
  CHECK(sdu[2 + 59] == 0x00);
  const Decapsulated d = decapsulate(p, sdu);
  CHECK(d.status == EncapStatus::kOk);
  CHECK(d.lecid == 0x0102);
  CHECK(d.ethertype == kEtherTypeArp);
  CHECK(d.payload.size() == 60);  // the pad stays: only the frame's upper layer can strip it
}

TEST_CASE("LANE frame limits: 1516 bytes with LECID, control marker, bad LECID") {
  EncapParams p{Encap::kLane, 0, 7, 1516};
  encode(p, std::vector<std::uint8_t>(1514), EncapStatus::kOk);
  encode(p, std::vector<std::uint8_t>(1515), EncapStatus::kFrameTooLarge);
  encode(p, std::vector<std::uint8_t>(10), EncapStatus::kTooShort);
  p.lane_max_frame = 4544;
  encode(p, std::vector<std::uint8_t>(4542), EncapStatus::kOk);
  std::vector<std::uint8_t> control(108, 0);
  control[0] = 0xFF;
  CHECK(decapsulate(p, control).status == EncapStatus::kControlFrame);
  std::vector<std::uint8_t> zero_lecid(62, 0);
  CHECK(decapsulate(p, zero_lecid).status == EncapStatus::kBadLecid);
  p.lane_max_frame = 1516;
  std::vector<std::uint8_t> big(1517, 0);
  big[1] = 1;
  CHECK(decapsulate(p, big).status == EncapStatus::kFrameTooLarge);
  CHECK_THROWS_WITH(validate(EncapParams{Encap::kLane, 0, 0xFF00, 1516}), Catch::Contains("LECID"));
  CHECK_THROWS_WITH(validate(EncapParams{Encap::kLane, 0, 1, 1500}), Catch::Contains("1516"));
}

TEST_CASE("encapsulation names parse and print") {
  CHECK(parse_encap("llc") == Encap::kLlcSnap);
  CHECK(parse_encap("vcmux") == Encap::kVcMux);
  CHECK(std::string(to_string(parse_encap("lane"))) == "lane");
  CHECK_THROWS_WITH(parse_encap("aal2"), Catch::Contains("aal2") && Catch::Contains("llc"));
}
