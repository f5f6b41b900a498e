#pragma once
// The 16-byte header at the front of every UDP datagram mtperf sends: a sequence number and the
// sender's send time (CLOCK_MONOTONIC ns; only differences are used, so clock offset between
// hosts cancels in the jitter). Little-endian on the wire. Sequence kFinSeq ends a stream.
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

}  // namespace mtperf
