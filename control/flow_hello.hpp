#pragma once
// The 16 bytes a client sends first on every data connection (TCP) or as the first datagram
// (UDP, echoed back by the server as an acknowledgement): the test's cookie and the flow id.
// The cookie's top bits are set (udp_header.hpp: kControlSeqBase), so a late duplicate of a UDP
// hello is never mistaken for data.
#include <cstdint>
#include <cstring>

#include "control/protocol.hpp"
#include "workloads/udp_header.hpp"

namespace mtperf::control {

struct FlowHello {
  uint64_t cookie = 0;
  uint32_t flow = 0;
};

inline void encode_hello(const FlowHello& h, uint8_t out[kFlowHelloBytes]) {
  std::memset(out, 0, kFlowHelloBytes);
  std::memcpy(out, &h.cookie, 8);
  std::memcpy(out + 8, &h.flow, 4);
}

inline FlowHello decode_hello(const uint8_t in[kFlowHelloBytes]) {
  FlowHello h;
  std::memcpy(&h.cookie, in, 8);
  std::memcpy(&h.flow, in + 8, 4);
  return h;
}

inline uint64_t make_cookie(uint64_t random_bits) {
  return random_bits | kControlSeqBase;
}

}  // namespace mtperf::control
