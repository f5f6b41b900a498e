// LAN Emulation over the emulated adapter pair, without any I/O: LE clients join through the
// LECS and LES, broadcasts and unknown unicast cross the BUS, LE_ARP finds the peer, a flush
// closes the BUS path before the data-direct VC takes over. Fake clock throughout.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "atmlink/lane_ctrl.hpp"
#include "atmlink/link.hpp"
#include "tests/atmlink/link_support.hpp"

using namespace mtperf::atm;
using namespace mtperf::atm::test;

namespace {

const Mac kNearMac = {0x02, 0x6d, 0x74, 0x00, 0x01, 0x01};
const Mac kFarMac = {0x02, 0x6d, 0x74, 0x00, 0x01, 0x02};
const Mac kBroadcast = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

LinkConfig lane_config() {
  LinkConfig c;
  c.mode = LinkMode::kLane;
  c.mtu = 1500;
  c.lane_max_frame = 1516;
  c.near_mac = kNearMac;
  c.far_mac = kFarMac;
  return c;
}

// An 802.3 frame of `size` bytes (no FCS): destination, source, EtherType 0x0800, a pattern.
std::vector<std::uint8_t> frame(std::size_t size, const Mac& dst, const Mac& src,
                                std::uint8_t seed = 0) {
  std::vector<std::uint8_t> f(size);
  for (std::size_t i = 0; i < size; ++i)
    f[i] = static_cast<std::uint8_t>(i * 13 + seed);
  std::copy(dst.begin(), dst.end(), f.begin());
  std::copy(src.begin(), src.end(), f.begin() + 6);
  f[12] = 0x08;
  f[13] = 0x00;
  return f;
}

// A link whose clients have joined, at `now`.
struct Joined {
  explicit Joined(const LinkConfig& c = lane_config()) : link(c) {
    link.start(now);
    run_until(link, sink, now, 10 * kMs);
  }
  AtmLink link;
  Collect sink;
  std::uint64_t now = 0;
};

}  // namespace

TEST_CASE("LANE clients configure, join and connect to the BUS over their control VCs") {
  Joined j;
  REQUIRE(j.link.ready());
  const LinkStats s = j.link.stats();
  CHECK(s.hosts[0].ready);
  CHECK(s.hosts[1].ready);
  CHECK(s.hosts[0].lecid != 0);
  CHECK(s.hosts[1].lecid != 0);
  CHECK(s.hosts[0].lecid != s.hosts[1].lecid);
  CHECK(s.elan.configures == 2);
  CHECK(s.elan.joins == 2);
  CHECK(s.elan.join_rejects == 0);
  CHECK(s.elan.arp_resolved == 2);  // each client's LE_ARP for the broadcast MAC: the BUS
  // LE_CONFIGURE, LE_JOIN, LE_ARP(broadcast) up; their three responses down; 108-byte control
  // frames, 3 cells each.
  for (const int host : {kNearHost, kFarHost}) {
    CHECK(vc_stats(s, host, kServer).tx_pdus == 3);
    CHECK(vc_stats(s, host, kServer).tx_cells == 9);
    CHECK(vc_stats(s, kServer, host).rx.pdus == 3);
  }
  CHECK(j.sink.got[0].empty());
  CHECK(j.sink.got[1].empty());
}

TEST_CASE("a LANE link refuses a configuration its LAN could not carry, naming why") {
  LinkConfig c = lane_config();
  c.far_mac = c.near_mac;  // validate() refuses two hosts with one MAC
  CHECK_THROWS_WITH(AtmLink(c), Catch::Contains("different MAC"));
  c = lane_config();
  c.mtu = 1501;  // needs 1517-byte frames
  CHECK_THROWS_WITH(AtmLink(c), Catch::Contains("1517"));
  c.lane_max_frame = 4544;
  CHECK_NOTHROW(AtmLink(c));
  c.lane_max_frame = 2000;
  CHECK_THROWS_WITH(AtmLink(c), Catch::Contains("1516, 4544, 9234 or 18190"));
}

TEST_CASE("the MTU picks the smallest LANE frame that carries it") {
  CHECK(lane_frame_for_mtu(1500) == 1516);
  CHECK(lane_frame_for_mtu(1501) == 4544);
  CHECK(lane_frame_for_mtu(4528) == 4544);
  CHECK(lane_frame_for_mtu(9180) == 9234);
  CHECK(lane_frame_for_mtu(9218) == 9234);
  CHECK(lane_frame_for_mtu(18174) == 18190);
  CHECK_THROWS_WITH(lane_frame_for_mtu(18175), Catch::Contains("18190"));
}

TEST_CASE("a broadcast frame crosses the BUS to the other host, padded, and not back") {
  Joined j;
  REQUIRE(j.link.ready());
  const auto arp = frame(42, kBroadcast, kNearMac, 1);  // an ARP request's size
  j.link.from_host(Side::kNear, arp, j.now);
  run_until(j.link, j.sink, j.now, j.now + 5 * kMs);
  REQUIRE(j.sink.got[1].size() == 1);
  // LANE pads to the 60-byte Ethernet minimum; the frame's own bytes come first.
  const auto& got = j.sink.got[1][0];
  REQUIRE(got.size() == 60);
  CHECK(std::equal(arp.begin(), arp.end(), got.begin()));
  CHECK(std::all_of(got.begin() + 42, got.end(), [](std::uint8_t b) { return b == 0; }));
  CHECK(j.sink.got[0].empty());  // the sender gets no echo
  const LinkStats s = j.link.stats();
  CHECK(s.hosts[0].bus_frames == 1);
  CHECK(s.hosts[0].bus_unknown == 0);
  CHECK(s.hosts[0].direct_frames == 0);
  CHECK(s.hosts[1].rx_bus == 1);
  CHECK(s.elan.bus_forwarded == 1);
  CHECK(vc_stats(s, kNearHost, kBus).rx.pdus == 1);
  CHECK(vc_stats(s, kBus, kFarHost).rx.pdus == 1);
  CHECK(vc_stats(s, kBus, kFarHost).tx_cells == 2);  // 2 + 60 + 8 bytes -> 2 cells
  CHECK(vc_stats(s, kNearHost, kFarHost).tx_pdus == 0);
}

TEST_CASE("unicast: BUS first, LE_ARP, flush, then the data-direct VC, in order") {
  Joined j;
  REQUIRE(j.link.ready());
  std::vector<std::vector<std::uint8_t>> sent;
  for (int i = 0; i < 20; ++i)
    sent.push_back(frame(1514, kFarMac, kNearMac, std::uint8_t(i)));
  // The first frame goes through the BUS; the rest wait for LE_ARP and the flush.
  for (const auto& f : sent) {
    run_until(j.link, j.sink, j.now, j.now + 1);
    REQUIRE(j.link.can_take(Side::kNear));
    j.link.from_host(Side::kNear, f, j.now);
  }
  run_until(j.link, j.sink, j.now, j.now + 20 * kMs);
  REQUIRE(j.sink.got[1].size() == sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i)
    CHECK(j.sink.got[1][i] == sent[i]);

  const LinkStats s = j.link.stats();
  const HostStats& near = s.hosts[0];
  CHECK(near.bus_frames == 1);
  CHECK(near.bus_unknown == 1);
  CHECK(near.direct_frames == 19);
  CHECK(near.arp_requests == 2);  // the BUS at join, then the far MAC
  CHECK(near.arp_replies == 2);
  CHECK(near.flushes == 1);
  CHECK(near.flush_timeouts == 0);
  CHECK(near.drop_unresolved == 0);
  CHECK(s.hosts[1].rx_bus == 1);
  CHECK(s.hosts[1].to_host == 20);
  CHECK(s.elan.flushes_relayed == 1);
  // The flush request crossed the BUS path behind the data frame; the response came back
  // through the LES.
  CHECK(vc_stats(s, kNearHost, kBus).tx_pdus == 2);
  CHECK(vc_stats(s, kBus, kFarHost).rx.pdus == 2);
  CHECK(vc_stats(s, kFarHost, kServer).tx_pdus == 3 + 1);  // join exchanges + flush response
  const VcStats& direct = vc_stats(s, kNearHost, kFarHost);
  CHECK(direct.tx_pdus == 19);
  CHECK(direct.tx_cells == 19 * 32);  // 2 + 1514 + 8 bytes -> 32 cells
  CHECK(direct.rx.pdus == 19);
  CHECK(direct.rx.crc_errors == 0);

  // Later frames go data-direct at once.
  j.link.from_host(Side::kNear, frame(100, kFarMac, kNearMac, 99), j.now);
  run_until(j.link, j.sink, j.now, j.now + 1 * kMs);
  CHECK(j.link.stats().hosts[0].direct_frames == 20);
  CHECK(j.link.stats().hosts[0].bus_frames == 1);
  CHECK(j.sink.got[1].size() == 21);
}

TEST_CASE("no frame takes the data-direct VC before the flush response is back") {
  LinkConfig c = lane_config();
  c.propagation_ns = 1 * kMs;  // spreads the exchanges out: each PDU takes 1 ms to arrive
  Joined j(c);
  run_until(j.link, j.sink, j.now, 50 * kMs);
  REQUIRE(j.link.ready());
  const std::uint64_t t0 = j.now;
  for (int i = 0; i < 4; ++i)
    j.link.from_host(Side::kNear, frame(200, kFarMac, kNearMac, std::uint8_t(i)), j.now);
  // LE_ARP there and back takes 2 ms; the flush request crosses near->BUS->far (2 ms) and its
  // response far->LES->near (2 ms): the switch-over comes after about 6 ms.
  run_until(j.link, j.sink, j.now, t0 + 4500 * kUs);
  LinkStats s = j.link.stats();
  CHECK(s.hosts[0].arp_replies == 2);                    // the far MAC is resolved...
  CHECK(s.hosts[0].flushes == 0);                        // ...but the flush is not done
  CHECK(vc_stats(s, kNearHost, kFarHost).tx_pdus == 0);  // so nothing went data-direct
  CHECK(j.sink.got[1].size() == 1);                      // only the frame sent via the BUS
  CHECK(j.link.can_take(Side::kNear));                   // 3 held of 8: still room
  run_until(j.link, j.sink, j.now, t0 + 10 * kMs);
  s = j.link.stats();
  CHECK(s.hosts[0].flushes == 1);
  CHECK(vc_stats(s, kNearHost, kFarHost).tx_pdus == 3);
  REQUIRE(j.sink.got[1].size() == 4);
  for (int i = 0; i < 4; ++i)
    CHECK(j.sink.got[1][i] == frame(200, kFarMac, kNearMac, std::uint8_t(i)));
}

TEST_CASE("held frames push back on the device when the queue is full") {
  LinkConfig c = lane_config();
  c.propagation_ns = 1 * kMs;
  c.max_pending = 4;
  Joined j(c);
  run_until(j.link, j.sink, j.now, 50 * kMs);
  REQUIRE(j.link.ready());
  int taken = 0;
  while (taken < 100) {
    run_until(j.link, j.sink, j.now, j.now + 1);  // the line takes what is queued at once
    if (!j.link.can_take(Side::kNear)) break;
    j.link.from_host(Side::kNear, frame(100, kFarMac, kNearMac, std::uint8_t(taken)), j.now);
    ++taken;
  }
  CHECK(taken == 5);  // one through the BUS, four held; the fifth waits in the device
  run_until(j.link, j.sink, j.now, j.now + 10 * kMs);
  CHECK(j.link.can_take(Side::kNear));
  CHECK(j.sink.got[1].size() == 5);
  CHECK(j.link.stats().hosts[0].drop_unresolved == 0);
}

TEST_CASE(
    "an unknown MAC: one frame per second through the BUS, LE_ARP retried, held frames "
    "dropped and counted") {
  Joined j;
  REQUIRE(j.link.ready());
  const Mac stranger = {0x02, 0x00, 0x00, 0x00, 0x00, 0x99};
  for (int i = 0; i < 3; ++i)
    j.link.from_host(Side::kNear, frame(100, stranger, kNearMac, std::uint8_t(i)), j.now);
  run_until(j.link, j.sink, j.now, j.now + 7 * kSecondNs);
  const LinkStats s = j.link.stats();
  CHECK(s.hosts[0].bus_unknown == 1);
  CHECK(s.hosts[0].arp_requests == 1 + 6);  // the BUS, then the first try and five retries
  CHECK(s.elan.arp_unresolved == 6);
  CHECK(s.hosts[0].drop_unresolved == 2);  // the two held frames
  CHECK(s.hosts[0].flushes == 0);
  // The far LEC discards the one frame the BUS flooded: it is for another MAC.
  CHECK(s.hosts[1].drop_no_route == 1);
  CHECK(j.sink.got[1].empty());
}

TEST_CASE("LANE joins and carries frames through cell loss, and nothing corrupt arrives") {
  LinkConfig c = lane_config();
  c.faults.cell_loss_rate = 0.002;
  c.faults.seed = 11;
  AtmLink link(c);
  Collect sink;
  std::uint64_t now = 0;
  link.start(now);
  run_until(link, sink, now, 8 * kSecondNs);  // retries carry the control exchanges through
  REQUIRE(link.ready());
  std::vector<std::vector<std::uint8_t>> sent;
  for (int i = 0; i < 300; ++i)
    sent.push_back(frame(1514, kFarMac, kNearMac, std::uint8_t(i)));
  std::size_t next = 0;
  const std::uint64_t deadline = now + 20 * kSecondNs;
  while (next < sent.size() && now < deadline) {
    if (link.can_take(Side::kNear)) link.from_host(Side::kNear, sent[next++], now);
    const std::uint64_t wake = link.advance(now, sink);
    if (!link.can_take(Side::kNear)) now = std::max(wake, now + 1);
  }
  run_until(link, sink, now, now + 8 * kSecondNs);
  const LinkStats s = link.stats();
  CHECK(s.wires[0].lost > 0);
  CHECK(s.hosts[1].drop_bad_pdu == 0);
  CHECK(sink.got[1].size() > 200);
  CHECK(sink.got[1].size() < sent.size());
  for (const auto& f : sink.got[1])  // every delivered frame is one that was sent, unchanged
    CHECK(std::find(sent.begin(), sent.end(), f) != sent.end());
}

TEST_CASE("frames before the join, too short or too large are dropped and counted") {
  AtmLink link(lane_config());
  Collect sink;
  std::uint64_t now = 0;
  link.start(now);
  link.from_host(Side::kNear, frame(100, kBroadcast, kNearMac), now);  // not joined yet
  run_until(link, sink, now, 10 * kMs);
  REQUIRE(link.ready());
  link.from_host(Side::kNear, frame(1515, kFarMac, kNearMac), now);  // 2 + 1515 > 1516
  link.from_host(Side::kNear, std::vector<std::uint8_t>(10, 0xFF), now);
  run_until(link, sink, now, now + 5 * kMs);
  const HostStats h = link.stats().hosts[0];
  CHECK(h.from_host == 3);
  CHECK(h.drop_unresolved == 1);
  CHECK(h.drop_too_large == 1);
  CHECK(h.drop_not_ip == 1);
  CHECK(h.bus_frames == 0);
  CHECK(sink.got[1].empty());
}

TEST_CASE(
    "LE_ARP flooding: the LES floods what it cannot answer, the proxy LEC answers, the frames go "
    "data-direct") {
  LinkConfig c = lane_config();
  const Mac behind = {0x02, 0x00, 0x00, 0x00, 0x00, 0x42};  // a station behind the far LEC
  c.lane_proxy_macs[1] = {behind};
  Joined j(c);
  REQUIRE(j.link.ready());
  for (int i = 0; i < 5; ++i)
    j.link.from_host(Side::kNear, frame(200, behind, kNearMac, std::uint8_t(i)), j.now);
  run_until(j.link, j.sink, j.now, j.now + 100 * kMs);
  const LinkStats s = j.link.stats();
  CHECK(s.elan.arp_unresolved == 1);  // the LES itself knows only the joined MACs
  CHECK(s.elan.arp_flooded == 1);
  CHECK(s.elan.arp_relayed == 1);
  CHECK(s.hosts[0].bus_unknown == 1);  // the first frame, while LE_ARP ran
  CHECK(s.hosts[0].flushes == 1);
  CHECK(s.hosts[0].direct_frames == 4);
  CHECK(s.hosts[0].drop_unresolved == 0);
  // The proxy LEC takes every frame for the MAC behind it, in order.
  REQUIRE(j.sink.got[1].size() == 5);
  for (int i = 0; i < 5; ++i)
    CHECK(j.sink.got[1][std::size_t(i)] == frame(200, behind, kNearMac, std::uint8_t(i)));
  CHECK(s.hosts[1].drop_no_route == 0);
}

TEST_CASE("a flooded LE_ARP for a MAC no LEC represents stays unanswered") {
  Joined j;
  const Mac stranger = {0x02, 0x00, 0x00, 0x00, 0x00, 0x77};
  j.link.from_host(Side::kNear, frame(100, stranger, kNearMac), j.now);
  run_until(j.link, j.sink, j.now, j.now + 100 * kMs);
  const LinkStats s = j.link.stats();
  CHECK(s.elan.arp_flooded == 1);
  CHECK(s.elan.arp_relayed == 0);
  CHECK(s.hosts[0].flushes == 0);
}

TEST_CASE("proxied MACs are checked") {
  LinkConfig c = lane_config();
  c.lane_proxy_macs[1] = {kNearMac};
  CHECK_THROWS_WITH(AtmLink(c), Catch::Contains("proxied MAC"));
  c.lane_proxy_macs[1] = {Mac{0x03, 0, 0, 0, 0, 1}};
  CHECK_THROWS_WITH(AtmLink(c), Catch::Contains("unicast"));
}
