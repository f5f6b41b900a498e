// Socket set-up for the floor: the same options, in the same calls, as transports/inet/inet.cpp.
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "bench/floor/floor.hpp"

namespace mtperf::floors {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

void set_int(int fd, int level, int name, int value, const char* what) {
  if (setsockopt(fd, level, name, &value, sizeof value) != 0) fail(what);
}

}  // namespace

void pin_to(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    fail("sched_setaffinity CPU " + std::to_string(cpu));
}

int listen_loopback(bool udp, bool nodelay, int backlog) {
  int fd = socket(AF_INET, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket");
  if (udp) {
    udp_rcvbuf(fd);
  } else {
    if (nodelay) set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
    set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) fail("bind 127.0.0.1:0");
  if (!udp && listen(fd, backlog) != 0) fail("listen");
  return fd;
}

sockaddr_in local_of(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) fail("getsockname");
  return a;
}

int connect_tcp(const sockaddr_in& to, bool nodelay) noexcept {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  int one = 1;
  if ((nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) ||
      connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    int err = errno;
    close(fd);
    return -err;
  }
  return fd;
}

int accept_tcp(int listen_fd) {
  int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) fail("accept");
  return fd;
}

void set_io_timeout(int fd, int ms) {
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) fail("SO_RCVTIMEO");
  if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) fail("SO_SNDTIMEO");
}

void udp_rcvbuf(int fd) {
  int size = 4 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
    set_int(fd, SOL_SOCKET, SO_RCVBUF, size, "SO_RCVBUF");
}

}  // namespace mtperf::floors
