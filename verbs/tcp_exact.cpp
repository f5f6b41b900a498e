#include "verbs/tcp_exact.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "platform/clock.hpp"
#include "verbs/device_res.hpp"

namespace mtperf::rdma {

Fd::~Fd() {
  if (fd >= 0) ::close(fd);
}

bool wait_for(int fd, short events, int64_t deadline_ns) {
  for (;;) {
    int ms = ms_until(deadline_ns);
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, ms);
    if (rc > 0) return true;
    if (rc == 0 || (rc < 0 && errno != EINTR)) return false;
  }
}

void send_exact(int fd, const uint8_t* data, size_t n, int64_t deadline_ns,
                const std::string& what) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = ::send(fd, data + done, n - done, MSG_NOSIGNAL);
    if (w > 0) {
      done += size_t(w);
      continue;
    }
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      throw_errno(what, errno);
    }
    if (!wait_for(fd, POLLOUT, deadline_ns)) throw std::runtime_error(what + ": not sent in time");
  }
}

std::string recv_exact(int fd, uint8_t* data, size_t n, int64_t deadline_ns) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::recv(fd, data + done, n - done, 0);
    if (r > 0) {
      done += size_t(r);
      continue;
    }
    if (r == 0) {
      return "the peer closed the connection after " + std::to_string(done) + " of " +
             std::to_string(n) + " bytes";
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return std::strerror(errno);
    if (!wait_for(fd, POLLIN, deadline_ns)) {
      return "nothing more by the deadline (" + std::to_string(done) + " of " + std::to_string(n) +
             " bytes)";
    }
  }
  return "";
}

namespace {

socklen_t length_of(const sockaddr_storage& a) {
  return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

int tcp_socket(int family, const std::string& what) {
  int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw_errno(what + ": socket", errno);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

int tcp_connect(const sockaddr_storage& server, const sockaddr_storage& source, int64_t deadline_ns,
                const std::string& what) {
  Fd fd(tcp_socket(server.ss_family, what));
  if (source.ss_family != AF_UNSPEC &&
      ::bind(fd.fd, reinterpret_cast<const sockaddr*>(&source), length_of(source)) != 0) {
    throw_errno(what + ": bind", errno);
  }
  if (::connect(fd.fd, reinterpret_cast<const sockaddr*>(&server), length_of(server)) != 0) {
    if (errno != EINPROGRESS) throw_errno(what + ": connect", errno);
    if (!wait_for(fd.fd, POLLOUT, deadline_ns)) {
      throw std::runtime_error(what + ": no TCP connection by the deadline");
    }
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) throw_errno(what + ": connect", err);
  }
  return fd.release();
}

int tcp_listen(const sockaddr_storage& where, int backlog, const std::string& what) {
  Fd fd(tcp_socket(where.ss_family, what));
  int one = 1;
  setsockopt(fd.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.fd, reinterpret_cast<const sockaddr*>(&where), length_of(where)) != 0) {
    throw_errno(what + ": bind", errno);
  }
  if (::listen(fd.fd, backlog) != 0) throw_errno(what + ": listen", errno);
  return fd.release();
}

sockaddr_storage local_address(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw_errno("getsockname", errno);
  return a;
}

}  // namespace mtperf::rdma
