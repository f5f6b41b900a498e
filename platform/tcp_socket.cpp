#include "platform/tcp_socket.hpp"

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstring>

namespace mtperf {

std::string congestion_of(int fd) {
  char name[32] = {};
  socklen_t len = sizeof name;
  if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return "";
  return std::string(name, strnlen(name, sizeof name));
}

int64_t unsent_bytes(int fd) noexcept {
  int n = 0;
  if (fd < 0 || ::ioctl(fd, SIOCOUTQNSD, &n) != 0 || n < 0) return -1;
  return n;
}

int64_t unread_bytes(int fd) noexcept {
  int n = 0;
  if (fd < 0 || ::ioctl(fd, SIOCINQ, &n) != 0 || n < 0) return -1;
  return n;
}

TcpStats tcp_stats(int fd) noexcept {
  TcpStats s;
  tcp_info ti{};
  socklen_t len = sizeof ti;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return s;
  s.valid = true;
  s.retransmits = ti.tcpi_total_retrans;
  s.rtt_us = ti.tcpi_rtt;
  s.rttvar_us = ti.tcpi_rttvar;
  s.snd_cwnd = ti.tcpi_snd_cwnd;
  s.snd_mss = ti.tcpi_snd_mss;
  return s;
}

}  // namespace mtperf
