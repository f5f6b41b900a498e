// A UDP receiver's sequence accounting (UdpStats::count, workloads/job.hpp) and iperf3's datagram
// header (workloads/udp_header.hpp), on synthetic sequences: no network. The same accounting
// counts mtperf's own streams, an iperf3 server's (run --peer iperf3 -R) and an iperf3 client's
// (serve --iperf3).
#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <initializer_list>

#include "workloads/job.hpp"
#include "workloads/udp_header.hpp"

using namespace mtperf;

namespace {

// Datagrams of the given sequences (from 0), each taken with the same transit time.
UdpStats take(std::initializer_list<uint64_t> seqs) {
  UdpStats u;
  for (uint64_t s : seqs)
    u.count(s, 1000);
  return u;
}

}  // namespace

TEST_CASE("udp accounting: an unbroken sequence loses nothing") {
  UdpStats u = take({0, 1, 2, 3, 4});
  CHECK(u.received == 5);
  CHECK(u.highest_seq == 4);
  CHECK(u.missing() == 0);
  CHECK(u.reordered == 0);
  CHECK(u.duplicates == 0);
  CHECK(u.jitter_ns == 0);  // the same transit every time
}

TEST_CASE("udp accounting: gaps below the highest sequence are lost") {
  UdpStats u = take({0, 1, 4, 5, 9});
  CHECK(u.received == 5);
  CHECK(u.highest_seq == 9);
  CHECK(u.missing() == 5);  // 2, 3, 6, 7, 8
  // What was sent after the highest sequence is not seen here: sent = received + lost + tail.
  const uint64_t sent = 12;
  CHECK(sent - (u.highest_seq + 1) == 2);
  CHECK(u.received + u.missing() + (sent - (u.highest_seq + 1)) == sent);
}

TEST_CASE("udp accounting: a late datagram is out of order and fills its gap") {
  UdpStats u = take({0, 2, 3, 1, 5});
  CHECK(u.received == 5);
  CHECK(u.highest_seq == 5);
  CHECK(u.reordered == 1);
  CHECK(u.missing() == 1);  // 4 only: 1 came late
}

TEST_CASE("udp accounting: a repeat of the highest is a duplicate; the first datagram lost") {
  UdpStats u = take({1, 2, 2, 3});
  CHECK(u.received == 4);
  CHECK(u.duplicates == 1);
  CHECK(u.reordered == 0);
  CHECK(u.missing() == 0);  // 0 lost, taken back by the duplicate: a count of gaps cannot tell
  CHECK(take({}).missing() == 0);
  CHECK(take({3}).missing() == 3);
}

TEST_CASE("udp accounting: jitter is RFC 1889's running estimate of |change in transit| / 16") {
  UdpStats u;
  u.count(0, 5'000);
  CHECK(u.jitter_ns == 0);  // one datagram: no change yet
  u.count(1, 21'000);       // D = 16000: J = 16000 / 16
  CHECK(u.jitter_ns == Approx(1000));
  u.count(2, 5'000);  // D = -16000: J += (16000 - 1000) / 16
  CHECK(u.jitter_ns == Approx(1000 + 15000.0 / 16));
  u.count(3, 5'000);  // D = 0: J decays by 1/16
  CHECK(u.jitter_ns == Approx((1000 + 15000.0 / 16) * 15 / 16));
  // A constant offset between the two clocks (transit = arrival - the sender's own clock) adds
  // nothing.
  UdpStats v;
  for (uint64_t i = 0; i < 100; ++i)
    v.count(i, 1'700'000'000'000'000'000 + int64_t(i % 2) * 2000);
  CHECK(v.jitter_ns == Approx(2000).epsilon(0.01));  // converges on the alternating change
}

TEST_CASE("iperf3 header: written and read back, 32- and 64-bit sequence numbers") {
  for (bool wide : {false, true}) {
    INFO("64-bit: " << wide);
    std::array<std::byte, 16> d{};
    const int64_t t = 123'456'789'012'345'000;  // a multiple of 1 us: the header holds us
    write_iperf3_udp_header(d.data(), 0x1234'5678, t, wide);
    UdpHeader h = read_iperf3_udp_header(d.data(), wide);
    CHECK(h.seq == 0x1234'5678);
    CHECK(h.send_ns == t);
    CHECK(iperf3_udp_header_bytes(wide) == (wide ? 16u : 12u));
    // Big-endian on the wire: the sequence's low byte last.
    CHECK(d[wide ? 15 : 11] == std::byte{0x78});
  }
  std::array<std::byte, 16> d{};
  write_iperf3_udp_header(d.data(), (uint64_t(1) << 40) + 7, 0, true);
  CHECK(read_iperf3_udp_header(d.data(), true).seq == (uint64_t(1) << 40) + 7);
  write_iperf3_udp_header(d.data(), (uint64_t(1) << 40) + 7, 0, false);  // 32 bits: wraps
  CHECK(read_iperf3_udp_header(d.data(), false).seq == 7);
}

TEST_CASE("iperf3 datagrams into the accounting: sequence from 1, loss and reordering") {
  // As a receiver of an iperf3 stream takes them: sequence 1 is the stream's first datagram.
  UdpStats u;
  std::array<std::byte, 12> d{};
  int64_t sent = 1'000'000'000;
  for (uint64_t seq : {1, 2, 3, 5, 4, 8, 9, 10}) {
    write_iperf3_udp_header(d.data(), seq, sent, false);
    const UdpHeader h = read_iperf3_udp_header(d.data(), false);
    u.count(h.seq - 1, sent + 50'000 - h.send_ns);  // arrival 50 us after the stamp
    sent += 1'000'000;
  }
  CHECK(u.received == 8);
  CHECK(u.highest_seq + 1 == 10);  // iperf3's `packets`
  CHECK(u.missing() == 2);         // 6 and 7 (4 came late)
  CHECK(u.reordered == 1);
  CHECK(u.jitter_ns == 0);  // every transit 50 us
}
