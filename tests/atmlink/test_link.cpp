// The emulated adapter pair without any I/O: packets in, cells, faults, reassembly, packets
// out, under a fake clock.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "atmlink/link.hpp"
#include "tests/atmlink/link_support.hpp"

using namespace mtperf::atm;
using namespace mtperf::atm::test;

namespace {

LinkConfig clip_config() {
  LinkConfig c;
  c.subnet = 0x0AE80000;  // 10.232.0.0/24
  c.near_ip = 0x0AE80001;
  c.far_ip = 0x0AE80002;
  c.server_ip = 0x0AE800FE;
  return c;
}

// An IPv4 packet of `size` bytes from src to dst (header fields the link reads, then a pattern).
std::vector<std::uint8_t> ipv4(std::size_t size, std::uint32_t src, std::uint32_t dst,
                               std::uint8_t seed = 0) {
  std::vector<std::uint8_t> p(size);
  for (std::size_t i = 0; i < size; ++i)
    p[i] = static_cast<std::uint8_t>(i * 7 + seed);
  p[0] = 0x45;
  p[2] = static_cast<std::uint8_t>(size >> 8);
  p[3] = static_cast<std::uint8_t>(size);
  for (int i = 0; i < 4; ++i) {
    p[12 + i] = static_cast<std::uint8_t>(src >> (24 - 8 * i));
    p[16 + i] = static_cast<std::uint8_t>(dst >> (24 - 8 * i));
  }
  return p;
}

}  // namespace

TEST_CASE("CLIP hosts register with the ATMARP server over their VCs") {
  AtmLink link(clip_config());
  Collect sink;
  std::uint64_t now = 0;
  link.start(now);
  CHECK_FALSE(link.ready());
  run_until(link, sink, now, 10 * kMs);
  CHECK(link.ready());
  const LinkStats s = link.stats();
  CHECK(s.hosts[0].ready);
  CHECK(s.hosts[1].ready);
  // Server: InATMARP request to each host; host: InATMARP reply and its own-address request.
  CHECK(vc_stats(s, kServer, kNearHost).tx_pdus == 2);  // InATMARP request, reply
  CHECK(vc_stats(s, kNearHost, kServer).tx_pdus == 2);  // InATMARP reply, request
  CHECK(vc_stats(s, kNearHost, kServer).rx.pdus == 2);
}

TEST_CASE("a CLIP packet resolves its address, crosses as cells and arrives intact") {
  LinkConfig c = clip_config();
  AtmLink link(c);
  Collect sink;
  std::uint64_t now = 0;
  link.start(now);
  run_until(link, sink, now, 10 * kMs);
  REQUIRE(link.ready());

  const auto big = ipv4(9180, c.near_ip, c.far_ip, 1);
  const auto small = ipv4(40, c.near_ip, c.far_ip, 2);
  REQUIRE(link.can_take(Side::kNear));
  link.from_host(Side::kNear, big, now);  // held while ATMARP resolves the far address
  link.from_host(Side::kNear, small, now);
  run_until(link, sink, now, 20 * kMs);
  REQUIRE(sink.got[1].size() == 2);
  CHECK(sink.got[1][0] == big);
  CHECK(sink.got[1][1] == small);
  CHECK(sink.got[0].empty());

  const LinkStats s = link.stats();
  const VcStats& data = vc_stats(s, kNearHost, kFarHost);
  CHECK(data.tx_pdus == 2);
  CHECK(data.tx_cells == 192 + 2);  // 9180 + 8 + 8 -> 192 cells; 40 + 8 + 8 -> 2 cells
  CHECK(data.rx.cells == 194);
  CHECK(data.rx.pdus == 2);
  CHECK(data.rx.crc_errors == 0);
  CHECK(s.hosts[0].arp_replies >= 2);  // its own registration and the far address
  CHECK(s.hosts[0].from_host == 2);
  CHECK(s.hosts[1].to_host == 2);
  CHECK(s.wires[0].cells_sent == s.wires[0].cells_delivered);
}

TEST_CASE("a CLIP packet to an address nobody registered is NAKed and dropped, counted") {
  LinkConfig c = clip_config();
  AtmLink link(c);
  Collect sink;
  std::uint64_t now = 0;
  link.start(now);
  run_until(link, sink, now, 10 * kMs);
  link.from_host(Side::kNear, ipv4(100, c.near_ip, 0x0AE80009), now);
  run_until(link, sink, now, 20 * kMs);
  const LinkStats s = link.stats();
  CHECK(s.hosts[0].naks == 1);
  CHECK(s.hosts[0].drop_unresolved == 1);
  CHECK(sink.got[1].empty());
  // Outside the LIS there is no route at all.
  link.from_host(Side::kNear, ipv4(100, c.near_ip, 0x0A000001), now);
  CHECK(link.stats().hosts[0].drop_no_route == 1);
}

TEST_CASE("InATMARP on the PVC replaces the server when asked") {
  LinkConfig c = clip_config();
  c.inatmarp_pvc = true;
  AtmLink link(c);
  Collect sink;
  std::uint64_t now = 0;
  link.start(now);
  run_until(link, sink, now, 10 * kMs);
  REQUIRE(link.ready());
  link.from_host(Side::kFar, ipv4(1500, c.far_ip, c.near_ip), now);
  run_until(link, sink, now, 20 * kMs);
  CHECK(sink.got[0].size() == 1);
  for (const VcStats& v : link.stats().vcs)
    CHECK(v.to != kServer);
}

TEST_CASE("VC-multiplexed data VCs carry bare IP packets") {
  LinkConfig c = clip_config();
  c.clip_encap = Encap::kVcMux;
  c.mtu = 1500;
  AtmLink link(c);
  Collect sink;
  std::uint64_t now = 0;
  link.start(now);
  run_until(link, sink, now, 10 * kMs);
  const auto p = ipv4(1500, c.near_ip, c.far_ip);
  link.from_host(Side::kNear, p, now);
  run_until(link, sink, now, 20 * kMs);
  REQUIRE(sink.got[1].size() == 1);
  CHECK(sink.got[1][0] == p);
  CHECK(vc_stats(link.stats(), kNearHost, kFarHost).tx_cells == 32);  // 1500 + 8 -> 32 cells
}

TEST_CASE("lost cells become CRC or length errors on the data VC, and nothing corrupt arrives") {
  LinkConfig c = clip_config();
  c.mtu = 1500;
  c.faults.cell_loss_rate = 0.01;
  c.faults.seed = 7;
  c.inatmarp_pvc = true;  // fewer control cells at risk
  AtmLink link(c);
  Collect sink;
  std::uint64_t now = 0;
  link.start(now);
  run_until(link, sink, now, 3 * kSecondNs);  // retries carry the InATMARP through losses
  REQUIRE(link.ready());
  const int kPackets = 400;
  int sent = 0;
  std::vector<std::vector<std::uint8_t>> packets;
  for (int i = 0; i < kPackets; ++i)
    packets.push_back(ipv4(1500, c.near_ip, c.far_ip, i));
  while (sent < kPackets) {
    if (link.can_take(Side::kNear)) link.from_host(Side::kNear, packets[sent++], now);
    const std::uint64_t next = link.advance(now, sink);
    if (!link.can_take(Side::kNear)) now = std::max(next, now + 1);
  }
  run_until(link, sink, now, now + 100 * kMs);
  const LinkStats s = link.stats();
  const VcStats& data = vc_stats(s, kNearHost, kFarHost);
  CHECK(s.wires[0].lost > 0);
  // The PVC also carries the InATMARP exchange, so a few good PDUs are not IP packets.
  CHECK(sink.got[1].size() <= data.rx.pdus);
  CHECK(data.rx.pdus - sink.got[1].size() <= 2 * s.hosts[0].inarp);
  CHECK(s.hosts[1].drop_bad_pdu == 0);
  CHECK(data.rx.crc_errors + data.rx.length_errors > 0);
  CHECK(sink.got[1].size() < kPackets);
  for (const auto& p : sink.got[1])  // every delivered packet is one that was sent, unchanged
    CHECK(std::find(packets.begin(), packets.end(), p) != packets.end());
}

TEST_CASE("header errors are caught by the HEC and counted") {
  LinkConfig c = clip_config();
  c.inatmarp_pvc = true;
  c.mtu = 1500;
  c.faults.hec_error_rate = 0.02;
  c.faults.seed = 3;
  AtmLink link(c);
  Collect sink;
  std::uint64_t now = 0;
  link.start(now);
  run_until(link, sink, now, 3 * kSecondNs);
  REQUIRE(link.ready());
  for (int i = 0; i < 200;) {
    if (link.can_take(Side::kNear)) {
      link.from_host(Side::kNear, ipv4(1500, c.near_ip, c.far_ip, i), now);
      ++i;
    }
    const std::uint64_t next = link.advance(now, sink);
    if (!link.can_take(Side::kNear)) now = std::max(next, now + 1);
  }
  run_until(link, sink, now, now + 100 * kMs);
  const LinkStats s = link.stats();
  const std::uint64_t caught =
      s.wires[0].hec_errors + vc_stats(s, kNearHost, kFarHost).rx.hec_errors;
  CHECK(s.wires[0].hec_injected > 0);
  CHECK(caught == s.wires[0].hec_injected);
}

namespace {

// A sender that always has a packet ready: the cells per second the line achieved over `span`.
double achieved_cells_per_s(LineRate rate, std::size_t mtu, std::uint64_t overshoot_ns) {
  LinkConfig c = clip_config();
  c.inatmarp_pvc = true;
  c.mtu = mtu;
  c.pacer.rate = rate;
  AtmLink link(c);
  Collect sink;
  std::uint64_t now = 0;
  link.start(now);
  run_until(link, sink, now, 10 * kMs);
  const auto packet = ipv4(mtu, c.near_ip, c.far_ip);
  // The first 100 ms spend the bucket's initial credit; the measurement starts after it.
  std::uint64_t start = now + 100 * kMs, cells0 = 0;
  bool measuring = false;
  while (now < start + kSecondNs) {
    if (!measuring && now >= start) {
      measuring = true;
      start = now;
      cells0 = link.stats().wires[0].cells_sent;
    }
    while (link.can_take(Side::kNear))
      link.from_host(Side::kNear, packet, now);
    const std::uint64_t next = link.advance(now, sink);
    if (link.can_take(Side::kNear)) continue;      // a driver reads on at once
    now = std::max(next + overshoot_ns, now + 1);  // and otherwise sleeps, waking late
    sink.got[1].clear();
  }
  return double(link.stats().wires[0].cells_sent - cells0) * 1e9 / double(now - start);
}

}  // namespace

TEST_CASE("the line achieves its nominal cell rate within 0.5%, even waking late") {
  for (const LineRate rate : {kOc3c, kOc12c}) {
    for (const std::size_t mtu : {std::size_t{1500}, std::size_t{9180}}) {
      for (const std::uint64_t late : {std::uint64_t{0}, std::uint64_t{80000}}) {
        INFO("rate " << rate.cells_per_s() << " mtu " << mtu << " late " << late);
        CHECK(achieved_cells_per_s(rate, mtu, late) == Approx(rate.cells_per_s()).epsilon(0.005));
      }
    }
  }
}
