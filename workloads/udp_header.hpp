#pragma once
// The 16-byte header at the front of every UDP datagram mtperf sends: a sequence number and the
// sender's send time (CLOCK_MONOTONIC ns; only differences are used, so clock offset between
// hosts cancels in the jitter). Little-endian on the wire. Sequence kFinSeq ends a stream.
#include <endian.h>

#include <cstdint>
#include <cstring>

namespace mtperf {

inline constexpr uint64_t kFinSeq = ~uint64_t(0);
// Sequence numbers from here up are not data: the flow hellos of the control exchange use them
// (a late duplicate hello must not look like a datagram from the far future).
inline constexpr uint64_t kControlSeqBase = uint64_t(3) << 62;
inline bool is_data_seq(uint64_t seq) {
  return seq < kControlSeqBase;
}

struct UdpHeader {
  uint64_t seq;
  int64_t send_ns;
};

inline void write_udp_header(std::byte* p, uint64_t seq, int64_t send_ns) {
  std::memcpy(p, &seq, 8);
  std::memcpy(p + 8, &send_ns, 8);
}

inline UdpHeader read_udp_header(const std::byte* p) {
  UdpHeader h;
  std::memcpy(&h.seq, p, 8);
  std::memcpy(&h.send_ns, p + 8, 8);
  return h;
}

// The header a flow's datagrams carry. mtperf: the one above. iperf3 (peers/iperf3, a stream to
// an iperf3 server): the sender's CLOCK_MONOTONIC seconds and microseconds, then the sequence
// number from 1, all big-endian; the sequence 32 bits wide (12 bytes), or 64 with the test's
// udp_counters_64bit (16 bytes). An iperf3 stream has no end-of-stream datagram: the control
// connection's TEST_END ends it.
enum class UdpWire : uint8_t { mtperf, iperf3, iperf3_64 };

inline void write_iperf3_udp_header(std::byte* p, uint64_t seq, int64_t mono_ns, bool wide) {
  const uint32_t sec = htobe32(uint32_t(mono_ns / 1'000'000'000));
  const uint32_t usec = htobe32(uint32_t(mono_ns % 1'000'000'000 / 1000));
  std::memcpy(p, &sec, 4);
  std::memcpy(p + 4, &usec, 4);
  if (wide) {
    const uint64_t s = htobe64(seq);
    std::memcpy(p + 8, &s, 8);
  } else {
    const uint32_t s = htobe32(uint32_t(seq));
    std::memcpy(p + 8, &s, 4);
  }
}

// The bytes an iperf3 header takes: 12 with 32-bit sequence numbers, 16 with 64.
inline constexpr uint32_t iperf3_udp_header_bytes(bool wide) {
  return wide ? 16 : 12;
}

// An iperf3 header as written above: its sequence number as on the wire (from 1), and the
// sender's clock in ns (seconds and microseconds; only differences of it are used). The caller
// has checked that the datagram holds iperf3_udp_header_bytes(wide).
inline UdpHeader read_iperf3_udp_header(const std::byte* p, bool wide) {
  uint32_t sec, usec;
  std::memcpy(&sec, p, 4);
  std::memcpy(&usec, p + 4, 4);
  UdpHeader h;
  if (wide) {
    std::memcpy(&h.seq, p + 8, 8);
    h.seq = be64toh(h.seq);
  } else {
    uint32_t s;
    std::memcpy(&s, p + 8, 4);
    h.seq = be32toh(s);
  }
  h.send_ns = int64_t(be32toh(sec)) * 1'000'000'000 + int64_t(be32toh(usec)) * 1000;
  return h;
}

}  // namespace mtperf
