#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "atmlink/lane_ctrl.hpp"

using namespace mtperf::atm;

namespace {

using Bytes = std::vector<std::uint8_t>;

const AtmAddress kAtmA = {0x39, 0x84, 0x0F, 0x80, 0x01, 0xBC, 0x72, 0x00, 0x01, 0x00,
                          0x00, 0x00, 0x00, 0x00, 0x20, 0x48, 0x0A, 0x00, 0x00, 0x01};
const AtmAddress kAtmB = {0x39, 0x84, 0x0F, 0x80, 0x01, 0xBC, 0x72, 0x00, 0x01, 0x00,
                          0x00, 0x00, 0x00, 0x00, 0x20, 0x48, 0x0B, 0x00, 0x00, 0x01};
const Mac kMacA = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0A};
const Mac kMacB = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0B};

Bytes with_zeros(Bytes b, std::size_t total) {
  b.resize(total, 0);
  return b;
}

}  // namespace

TEST_CASE("LE_JOIN_REQUEST bytes follow the LANE v1 control frame layout") {
  const Bytes expected = with_zeros(
      {
          0xFF, 0x00,                                      // MARKER
          0x01,                                            // PROTOCOL
          0x01,                                            // VERSION
          0x00, 0x02,                                      // OP-CODE: LE_JOIN_REQUEST
          0x00, 0x00,                                      // STATUS
          0x00, 0x00, 0x00, 0x07,                          // TRANSACTION-ID
          0x00, 0x00,                                      // REQUESTER-LECID (assigned by the LES)
          0x00, 0x00,                                      // FLAGS
          0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0A,  // SOURCE-LAN-DESTINATION: MAC
          0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // TARGET-LAN-DESTINATION
          0x39, 0x84, 0x0F, 0x80, 0x01, 0xBC, 0x72, 0x00, 0x01, 0x00,  // SOURCE-ATM-ADDRESS
          0x00, 0x00, 0x00, 0x00, 0x20, 0x48, 0x0A, 0x00, 0x00, 0x01,
          0x01,                                                        // LAN-TYPE: Ethernet/802.3
          0x01,                                                        // MAXIMUM-FRAME-SIZE: 1516
          0x00,                                                        // NUMBER-TLVS
          0x06,                                                        // ELAN-NAME-SIZE
          0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // TARGET-ATM-ADDRESS
          0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
          'm',  't',  'p',  'e',  'r',  'f',  // ELAN-NAME, zero-filled to 32 bytes
      },
      108);
  const auto join = make_join_request(7, kAtmA, kMacA, "mtperf", 1516);
  const auto encoded = encode_lane_control(join);
  CHECK(Bytes(encoded.begin(), encoded.end()) == expected);
  const LaneControlFrame back = decode_lane_control(expected);
  CHECK(back.op == LaneOp::kJoinRequest);
  CHECK(back.transaction_id == 7);
  CHECK(back.source_lan == LanDestination::of_mac(kMacA));
  CHECK(back.source_atm == kAtmA);
  CHECK(back.elan_name == "mtperf");
  CHECK(lane_max_frame_bytes(back.max_frame_code) == 1516);
}

TEST_CASE("LANE join assigns LECIDs and LE_ARP resolves a MAC to an ATM address") {
  Les les(LesConfig{});
  const auto ja = les.handle(make_join_request(1, kAtmA, kMacA, "mtperf", 1516), 0);
  REQUIRE(ja);
  CHECK(ja->op == LaneOp::kJoinResponse);
  CHECK(ja->status == LaneStatus::kSuccess);
  CHECK(ja->requester_lecid == 1);
  const auto jb = les.handle(make_join_request(2, kAtmB, kMacB, "mtperf", 1516), 0);
  REQUIRE(jb);
  CHECK(jb->requester_lecid == 2);
  CHECK(les.clients() == 2);

  const auto arp = make_le_arp_request(0x11, 1, kMacA, kAtmA, kMacB);
  const auto arp_bytes = encode_lane_control(arp);
  const auto response = les.handle(decode_lane_control(arp_bytes), 0);
  REQUIRE(response);
  const Bytes expected = with_zeros(
      {
          0xFF, 0x00, 0x01, 0x01, 0x01, 0x06,                          // OP-CODE: LE_ARP_RESPONSE
          0x00, 0x00,                                                  // STATUS: success
          0x00, 0x00, 0x00, 0x11,                                      // TRANSACTION-ID, echoed
          0x00, 0x01,                                                  // REQUESTER-LECID
          0x00, 0x00,                                                  // FLAGS
          0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0A,              // SOURCE-LAN-DESTINATION (A)
          0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0B,              // TARGET-LAN-DESTINATION (B)
          0x39, 0x84, 0x0F, 0x80, 0x01, 0xBC, 0x72, 0x00, 0x01, 0x00,  // SOURCE-ATM (A)
          0x00, 0x00, 0x00, 0x00, 0x20, 0x48, 0x0A, 0x00, 0x00, 0x01,
          0x00, 0x00, 0x00, 0x00,                                      // unused in LE_ARP
          0x39, 0x84, 0x0F, 0x80, 0x01, 0xBC, 0x72, 0x00, 0x01, 0x00,  // TARGET-ATM (B)
          0x00, 0x00, 0x00, 0x00, 0x20, 0x48, 0x0B, 0x00, 0x00, 0x01,
      },
      108);
  const auto got = encode_lane_control(*response);
  CHECK(Bytes(got.begin(), got.end()) == expected);

  // An unknown MAC gets no answer from this LES (a real one would flood the request).
  const Mac unknown = {0x02, 0, 0, 0, 0, 0x0C};
  CHECK_FALSE(les.handle(make_le_arp_request(0x12, 1, kMacA, kAtmA, unknown), 0));
  CHECK(les.stats().arp_unresolved == 1);

  // Flush: the peer answers with the same frame and the response op-code.
  LaneControlFrame flush = arp;
  flush.op = LaneOp::kFlushRequest;
  const auto flushed = encode_lane_control(make_flush_response(flush));
  CHECK(flushed[4] == 0x01);
  CHECK(flushed[5] == 0x07);
}

TEST_CASE("LES rejects duplicates, ages registrations, frees LECIDs on leave") {
  LesConfig config;
  config.registration_lifetime_ns = 300'000'000'000;
  Les les(config);
  REQUIRE(les.handle(make_join_request(1, kAtmA, kMacA, "mtperf", 1516), 0)->requester_lecid == 1);
  const auto dup_atm = les.handle(make_join_request(2, kAtmA, kMacB, "mtperf", 1516), 0);
  CHECK(dup_atm->status == LaneStatus::kDuplicateAtmAddress);
  const auto dup_mac = les.handle(make_join_request(3, kAtmB, kMacA, "mtperf", 1516), 0);
  CHECK(dup_mac->status == LaneStatus::kDuplicateLanDestination);
  CHECK(dup_mac->requester_lecid == 0);

  CHECK(les.resolve(kMacA, 299'000'000'000).has_value());
  CHECK_FALSE(les.resolve(kMacA, 300'000'000'000).has_value());
  CHECK(les.expire(300'000'000'000) == 1);

  LaneControlFrame reg;
  reg.op = LaneOp::kRegisterRequest;
  reg.requester_lecid = 1;
  reg.source_lan = LanDestination::of_mac(kMacA);
  reg.source_atm = kAtmA;
  CHECK(les.handle(reg, 400'000'000'000)->status == LaneStatus::kSuccess);
  CHECK(les.resolve(kMacA, 400'000'000'000) == kAtmA);
  reg.requester_lecid = 9;
  CHECK(les.handle(reg, 0)->status == LaneStatus::kInvalidRequesterId);

  les.leave(1);
  CHECK(les.clients() == 0);
  CHECK_FALSE(les.resolve(kMacA, 400'000'000'000));
  CHECK(les.handle(make_join_request(4, kAtmB, kMacB, "mtperf", 1516), 0)->requester_lecid == 2);
}

TEST_CASE("LANE control decode names the bad field") {
  auto frame = encode_lane_control(make_join_request(1, kAtmA, kMacA, "x", 1516));
  Bytes b(frame.begin(), frame.end());
  CHECK_THROWS_WITH(decode_lane_control(Bytes(b.begin(), b.begin() + 50)),
                    Catch::Contains("108-byte"));
  auto bad = b;
  bad[0] = 0x00;
  CHECK_THROWS_WITH(decode_lane_control(bad), Catch::Contains("marker"));
  bad = b;
  bad[3] = 2;
  CHECK_THROWS_WITH(decode_lane_control(bad), Catch::Contains("version"));
  bad = b;
  bad[5] = 0x55;
  CHECK_THROWS_WITH(decode_lane_control(bad), Catch::Contains("op-code"));
  bad = b;
  bad[55] = 40;
  CHECK_THROWS_WITH(decode_lane_control(bad), Catch::Contains("ELAN-NAME-SIZE"));
  CHECK_THROWS_WITH(lane_max_frame_code(1500), Catch::Contains("1516"));
}
