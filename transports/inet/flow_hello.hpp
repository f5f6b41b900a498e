#pragma once
// The 16 bytes a client sends first on every kernel-socket data connection (TCP) or as the
// first datagram (UDP, echoed back by the server as an acknowledgement): proof that the
// connection belongs to the test (its cookie) and to which flow. Network byte order:
//
//   0        4              8                                16
//   | flow id | 'm' 't' 'h' FF | cookie                       |
//
// Bytes 0..7 read as the little-endian sequence number of a UDP datagram's header have their top
// byte 0xFF, so a late duplicate hello is never taken for a data datagram.
#include <endian.h>

#include <cstdint>
#include <cstring>

namespace mtperf::inet {

inline constexpr size_t kHelloBytes = 16;
inline constexpr uint8_t kHelloMark[4] = {'m', 't', 'h', 0xff};

struct FlowHello {
  uint64_t cookie = 0;
  uint32_t flow = 0;
};

inline void encode_hello(const FlowHello& h, uint8_t out[kHelloBytes]) {
  uint32_t flow = htobe32(h.flow);
  uint64_t cookie = htobe64(h.cookie);
  std::memcpy(out, &flow, 4);
  std::memcpy(out + 4, kHelloMark, 4);
  std::memcpy(out + 8, &cookie, 8);
}

// False when the bytes are not a hello at all (the mark is missing).
inline bool decode_hello(const uint8_t in[kHelloBytes], FlowHello& h) {
  if (std::memcmp(in + 4, kHelloMark, 4) != 0) return false;
  uint32_t flow;
  uint64_t cookie;
  std::memcpy(&flow, in, 4);
  std::memcpy(&cookie, in + 8, 8);
  h.flow = be32toh(flow);
  h.cookie = be64toh(cookie);
  return true;
}

}  // namespace mtperf::inet
