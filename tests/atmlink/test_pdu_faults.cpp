// Faults after the AAL5 CRC (corrupt, duplicate, reorder): exact counts for a seed and for every
// Nth PDU, checksums that still verify after corruption, the eligibility filter, the hold, and
// the link applying them on the lines it was asked to.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "atmlink/link.hpp"
#include "atmlink/pdu_faults.hpp"
#include "tests/atmlink/link_support.hpp"

using namespace mtperf::atm;
using namespace mtperf::atm::test;

namespace {

constexpr std::uint8_t kTcp = 6, kUdp = 17;
constexpr std::uint32_t kNearIp = 0x0AE80001, kFarIp = 0x0AE80002;

void put16(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}

// One's-complement sum of the pseudo-header and the TCP/UDP segment of an IPv4 packet at `l3`.
std::uint32_t l4_sum(const std::vector<std::uint8_t>& p, std::size_t l3) {
  const std::uint8_t* ip = p.data() + l3;
  const std::size_t ihl = std::size_t(ip[0] & 0x0F) * 4;
  const std::size_t total = std::size_t(ip[2]) << 8 | ip[3];
  const std::size_t len = total - ihl;
  std::uint32_t sum = ip[9] + std::uint32_t(len);
  for (int i = 12; i < 20; i += 2)
    sum += std::uint32_t(ip[i]) << 8 | ip[i + 1];
  const std::uint8_t* seg = ip + ihl;
  for (std::size_t i = 0; i < len; i += 2)
    sum += std::uint32_t(seg[i]) << 8 | (i + 1 < len ? seg[i + 1] : 0);
  while (sum >> 16)
    sum = (sum & 0xFFFF) + (sum >> 16);
  return sum;
}

bool checksum_ok(const std::vector<std::uint8_t>& p, std::size_t l3 = 0) {
  return l4_sum(p, l3) == 0xFFFF;
}

// An IPv4 TCP or UDP packet (LANE: behind an 802.3 header when l3 = 14) with `payload` bytes
// whose first four carry `tag`, and a valid L4 checksum.
std::vector<std::uint8_t> packet(std::uint8_t proto, std::size_t payload, std::uint32_t tag,
                                 std::size_t l3 = 0) {
  const std::size_t l4 = proto == kTcp ? 20 : 8;
  const std::size_t total = 20 + l4 + payload;
  std::vector<std::uint8_t> p(l3 + total, 0);
  if (l3 != 0) put16(&p[12], 0x0800);
  std::uint8_t* ip = p.data() + l3;
  ip[0] = 0x45;
  put16(ip + 2, std::uint32_t(total));
  ip[8] = 64;
  ip[9] = proto;
  for (int i = 0; i < 4; ++i) {
    ip[12 + i] = static_cast<std::uint8_t>(kNearIp >> (24 - 8 * i));
    ip[16 + i] = static_cast<std::uint8_t>(kFarIp >> (24 - 8 * i));
  }
  std::uint8_t* seg = ip + 20;
  put16(seg, 40000);
  put16(seg + 2, 5001);
  if (proto == kTcp) {
    seg[12] = 5 << 4;
  } else {
    put16(seg + 4, std::uint32_t(l4 + payload));
  }
  std::uint8_t* data = seg + l4;
  for (std::size_t i = 0; i < payload; ++i)
    data[i] = static_cast<std::uint8_t>(i * 13 + tag);
  std::memcpy(data, &tag, std::min<std::size_t>(4, payload));
  const std::size_t field = proto == kTcp ? 16 : 6;
  put16(seg + field, ~l4_sum(p, l3) & 0xFFFF);
  REQUIRE(checksum_ok(p, l3));
  return p;
}

std::uint32_t tag_of(std::span<const std::uint8_t> p, std::size_t l4_header, std::size_t l3 = 0) {
  std::uint32_t tag;
  std::memcpy(&tag, p.data() + l3 + 20 + l4_header, 4);
  return tag;
}

struct Delivered {
  std::vector<std::vector<std::uint8_t>> packets;
  void take(const PduDeliveries& d) {
    for (std::size_t i = 0; i < d.count; ++i)
      packets.emplace_back(d.packets[i].begin(), d.packets[i].end());
  }
};

// Feeds `n` UDP packets of 1000-byte payload, tagged 0..n-1, 1 us apart.
Delivered feed(PduFaultInjector& f, std::uint32_t n, std::uint8_t proto = kUdp) {
  Delivered d;
  for (std::uint32_t i = 0; i < n; ++i)
    d.take(f.apply(packet(proto, 1000, i), i * kUs));
  return d;
}

}  // namespace

TEST_CASE("fault triggers parse as a probability or every:N") {
  CHECK(parse_fault_trigger("0.25").rate == 0.25);
  CHECK(parse_fault_trigger("every:50").every == 50);
  CHECK(to_string(parse_fault_trigger("every:7")) == "every:7");
  CHECK(to_string(FaultTrigger{}) == "off");
  for (const char* bad : {"every:0", "every:", "every:x", "1.5", "-0.1", "x", "0.1x", ""})
    CHECK_THROWS_AS(parse_fault_trigger(bad), std::invalid_argument);
  CHECK(parse_fault_direction("near-to-far") == FaultDirection::kNearToFar);
  CHECK_THROWS_WITH(parse_fault_direction("up"), Catch::Contains("near-to-far"));
  CHECK(parse_fault_proto("udp") == FaultProto::kUdp);
  CHECK_THROWS_AS(parse_fault_proto("sctp"), std::invalid_argument);
}

TEST_CASE("every Nth: exact counts, one fault per PDU, in the documented precedence") {
  PduFaultConfig c;
  c.corrupt.every = 10;
  c.duplicate.every = 7;
  c.reorder.every = 13;
  PduFaultInjector f(c, 0, 65535, 1);
  const Delivered d = feed(f, 1000);
  const PduFaultCounters& k = f.counters();
  CHECK(k.eligible.load() == 1000);
  CHECK(k.corrupted.load() == 100);              // 10, 20, ... 1000
  CHECK(k.duplicated.load() == 142 - 14);        // multiples of 7, less those of 70 (corrupted)
  CHECK(k.reordered.load() == 76 - 7 - 10 + 1);  // of 13, less 130 and 91, 910 counted twice
  CHECK(k.released.load() == 0);
  REQUIRE(d.packets.size() == 1000 + k.duplicated.load());
  // The order: each reordered PDU right after its successor, each duplicate twice in a row.
  std::uint32_t expect = 0;
  std::size_t i = 0;
  while (i < d.packets.size()) {
    const std::uint32_t n = expect + 1;  // the PDU's 1-based number among the eligible
    const bool dup = n % 7 == 0 && n % 10 != 0;
    const bool held = n % 13 == 0 && n % 10 != 0 && n % 7 != 0;
    if (held) {
      CHECK(tag_of(d.packets[i], 8) == expect + 1);
      const bool next_dup = (n + 1) % 7 == 0 && (n + 1) % 10 != 0;
      i += next_dup ? 2 : 1;
      CHECK(tag_of(d.packets[i], 8) == expect);
      expect += 2;
      ++i;
      continue;
    }
    CHECK(tag_of(d.packets[i], 8) == expect);
    if (dup) CHECK(d.packets[i + 1] == d.packets[i]);
    i += dup ? 2 : 1;
    ++expect;
  }
  CHECK(expect == 1000);
}

TEST_CASE("a seed gives the same faults every run; the rates hold") {
  PduFaultConfig c;
  c.corrupt.rate = 0.02;
  c.duplicate.rate = 0.03;
  c.reorder.rate = 0.04;
  PduFaultInjector a(c, 0, 65535, 42), b(c, 0, 65535, 42), other(c, 0, 65535, 43);
  const Delivered da = feed(a, 5000), db = feed(b, 5000), dother = feed(other, 5000);
  CHECK(da.packets == db.packets);
  CHECK(da.packets != dother.packets);
  const PduFaultCounters& k = a.counters();
  // The exact figures of seed 42 (xoshiro256**, geometric gaps): a change here changes what a
  // test that names its seed sees.
  CHECK(k.corrupted.load() == 126);
  CHECK(k.corrupted_bytes.load() == 552);
  CHECK(k.duplicated.load() == 157);
  CHECK(k.reordered.load() == 177);
  CHECK(k.corrupted.load() == b.counters().corrupted.load());
  // Within 5 sigma of what was asked (duplicates and reorders lose the PDUs taken before them).
  CHECK(std::abs(double(k.corrupted.load()) - 100.0) < 5 * std::sqrt(100.0));
  CHECK(std::abs(double(k.duplicated.load()) - 150.0 * 0.98) < 5 * std::sqrt(150.0));
}

TEST_CASE("a corrupted packet differs in 1..8 payload bytes past the first 16, checksum valid") {
  for (const std::uint8_t proto : {kTcp, kUdp}) {
    for (const std::size_t l3 : {std::size_t{0}, std::size_t{14}}) {
      PduFaultConfig c;
      c.corrupt.every = 1;
      PduFaultInjector f(c, l3, 65535, 9);
      std::uint64_t changed = 0;
      for (std::uint32_t i = 0; i < 300; ++i) {
        const auto clean = packet(proto, 17 + i * 7 % 1400, i, l3);  // odd and even sizes
        const PduDeliveries d = f.apply(clean, 0);
        REQUIRE(d.count == 1);
        const std::vector<std::uint8_t> got(d.packets[0].begin(), d.packets[0].end());
        REQUIRE(got.size() == clean.size());
        CHECK(checksum_ok(got, l3));
        const std::size_t payload = l3 + 20 + (proto == kTcp ? 20 : 8);
        const std::size_t checksum = l3 + 20 + (proto == kTcp ? 16 : 6);
        std::size_t first = got.size(), last = 0, n = 0;
        for (std::size_t b = 0; b < got.size(); ++b) {
          if (got[b] == clean[b] || b == checksum || b == checksum + 1) continue;
          first = std::min(first, b);
          last = b;
          ++n;
        }
        CHECK(first >= payload + kCorruptSkipBytes);
        CHECK(last - first < kMaxCorruptRun);
        CHECK(n == last - first + 1);  // one run, every byte of it changed
        changed += n;
      }
      CHECK(f.counters().corrupted.load() == 300);
      CHECK(f.counters().corrupted_bytes.load() == changed);
    }
  }
}

TEST_CASE("checksum_adjust agrees with a checksum computed afresh") {
  std::vector<std::uint8_t> seg(23);
  for (std::size_t i = 0; i < seg.size(); ++i)
    seg[i] = static_cast<std::uint8_t>(i * 37 + 5);
  auto full = [](const std::vector<std::uint8_t>& s) {
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < s.size(); i += 2)
      sum += std::uint32_t(s[i]) << 8 | (i + 1 < s.size() ? s[i + 1] : 0);
    while (sum >> 16)
      sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
  };
  for (std::size_t from = 0; from + 3 <= seg.size(); ++from) {
    std::vector<std::uint8_t> s = seg;
    const std::uint16_t before = full(s);
    const std::vector<std::uint8_t> old(s.begin() + long(from), s.begin() + long(from) + 3);
    for (std::size_t i = 0; i < 3; ++i)
      s[from + i] ^= 0xA5;
    CHECK(checksum_adjust(before, s, from, old) == full(s));
  }
}

TEST_CASE("only unfragmented IPv4 TCP/UDP with enough payload, of the protocol asked, is faulted") {
  PduFaultConfig c;
  c.corrupt.every = 1;
  c.proto = FaultProto::kUdp;
  c.min_payload = 100;
  PduFaultInjector f(c, 0, 65535, 1);
  auto untouched = [&](const std::vector<std::uint8_t>& p) {
    const PduDeliveries d = f.apply(p, 0);
    REQUIRE(d.count == 1);
    CHECK(std::equal(p.begin(), p.end(), d.packets[0].begin(), d.packets[0].end()));
  };
  untouched(packet(kTcp, 1000, 1));  // not the protocol asked
  untouched(packet(kUdp, 99, 2));    // under the minimum payload
  auto frag = packet(kUdp, 1000, 3);
  frag[6] = 0x20;  // more fragments
  untouched(frag);
  auto v6 = packet(kUdp, 1000, 4);
  v6[0] = 0x60;
  untouched(v6);
  untouched(std::vector<std::uint8_t>(10, 0x45));  // too short for an IP header
  CHECK(f.counters().eligible.load() == 0);
  PduFaultConfig small;
  small.corrupt.every = 1;
  PduFaultInjector g(small, 0, 65535, 1);
  const auto header_only = packet(kUdp, kCorruptSkipBytes, 5);  // mtperf's FIN and hellos
  const PduDeliveries d = g.apply(header_only, 0);
  CHECK(std::equal(header_only.begin(), header_only.end(), d.packets[0].begin()));
  CHECK(g.counters().eligible.load() == 0);
  PduFaultInjector lane(small, 14, 65535, 1);
  auto arp = packet(kUdp, 1000, 6, 14);
  put16(&arp[12], 0x0806);
  const PduDeliveries e = lane.apply(arp, 0);
  CHECK(std::equal(arp.begin(), arp.end(), e.packets[0].begin()));
  CHECK(lane.counters().eligible.load() == 0);
}

TEST_CASE("a held PDU goes out in order before an ineligible one, or when its time is up") {
  PduFaultConfig c;
  c.reorder.every = 1;
  c.min_payload = 500;
  c.hold_ns = 5 * kMs;
  PduFaultInjector f(c, 0, 65535, 1);
  CHECK(f.apply(packet(kUdp, 1000, 1), 0).count == 0);  // held
  CHECK(f.next_deadline() == 5 * kMs);
  // The deliveries point into the packets given (and the held copy): the packet must outlive them.
  const auto small = packet(kUdp, 100, 2);
  const PduDeliveries d = f.apply(small, kUs);  // not eligible: after the held
  REQUIRE(d.count == 2);
  CHECK(tag_of(d.packets[0], 8) == 1);
  CHECK(tag_of(d.packets[1], 8) == 2);
  CHECK(f.next_deadline() == PduFaultInjector::kNever);
  CHECK(f.apply(packet(kUdp, 1000, 3), 10 * kMs).count == 0);
  CHECK(f.expire(10 * kMs + 4 * kMs).empty());
  const auto late = f.expire(15 * kMs);
  REQUIRE(late.size() > 0);
  CHECK(tag_of(late, 8) == 3);
  CHECK(f.counters().released.load() == 2);
  CHECK(f.counters().reordered.load() == 0);
  PduFaultConfig bad = c;
  bad.hold_ns = 0;
  CHECK_THROWS_WITH(PduFaultInjector(bad, 0, 65535, 1), Catch::Contains("hold time"));
  bad = c;
  bad.duplicate.rate = 2;
  CHECK_THROWS_WITH(PduFaultInjector(bad, 0, 65535, 1), Catch::Contains("duplication"));
}

TEST_CASE("the link applies PDU faults on the lines asked, after reassembly, counted per line") {
  LinkConfig c;
  c.subnet = 0x0AE80000;
  c.near_ip = kNearIp;
  c.far_ip = kFarIp;
  c.server_ip = 0x0AE800FE;
  c.pdu_faults.duplicate.every = 5;
  c.pdu_faults.direction = FaultDirection::kNearToFar;
  AtmLink link(c);
  Collect sink;
  std::uint64_t now = 0;
  link.start(now);
  run_until(link, sink, now, 10 * kMs);
  REQUIRE(link.ready());
  for (std::uint32_t i = 0; i < 20; ++i) {
    auto to_far = packet(kUdp, 1000, i);
    auto to_near = packet(kUdp, 1000, i);
    std::swap_ranges(to_near.begin() + 12, to_near.begin() + 16, to_near.begin() + 16);
    while (!link.can_take(Side::kNear) || !link.can_take(Side::kFar))
      run_until(link, sink, now, now + kMs);
    link.from_host(Side::kNear, to_far, now);
    link.from_host(Side::kFar, to_near, now);
    run_until(link, sink, now, now + 2 * kMs);
  }
  run_until(link, sink, now, now + 20 * kMs);
  CHECK(sink.got[1].size() == 24);  // 20 and every 5th again
  CHECK(sink.got[0].size() == 20);
  const LinkStats s = link.stats();
  CHECK(s.wires[0].pdu_eligible == 20);
  CHECK(s.wires[0].duplicated == 4);
  CHECK(s.wires[1].pdu_eligible == 0);
  CHECK(s.wires[1].duplicated == 0);
  // The line itself saw each PDU once: the fault is the driver's, past every check.
  CHECK(vc_stats(s, kNearHost, kFarHost).rx.pdus == 20);
  c.pdu_faults.min_payload = 70000;
  CHECK_THROWS_WITH(AtmLink(c), Catch::Contains("minimum payload"));
}
