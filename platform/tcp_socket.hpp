#pragma once
// What the kernel says of one TCP socket, for the report: its congestion control, TCP_INFO
// figures and the bytes it has not yet handed to the device. Read at the window's edges and
// after the test, never on the data path.
#include <cstdint>
#include <string>

namespace mtperf {

// Congestion control in use on a TCP socket ("" for UDP or on error).
std::string congestion_of(int fd);

struct TcpStats {
  bool valid = false;
  uint32_t retransmits = 0;  // total segments retransmitted
  uint32_t rtt_us = 0;       // smoothed RTT
  uint32_t rttvar_us = 0;
  uint32_t snd_cwnd = 0;  // segments
  uint32_t snd_mss = 0;   // bytes
};
TcpStats tcp_stats(int fd) noexcept;

// Bytes written to a TCP socket that the kernel has not yet handed to the device (SIOCOUTQNSD);
// -1 when it cannot say. Cheap: one ioctl, for the window's edges.
int64_t unsent_bytes(int fd) noexcept;
// Bytes that arrived on a socket and wait to be read (SIOCINQ); -1 when it cannot say.
int64_t unread_bytes(int fd) noexcept;

}  // namespace mtperf
