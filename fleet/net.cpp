#include "fleet/net.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace mtperf::fleet {
namespace {

[[noreturn]] void fail(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

std::string numeric(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof buf);
  else if (ss.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr, buf, sizeof buf);
  return buf;
}

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list) freeaddrinfo(list);
  }
};

void resolve(const std::string& host, uint16_t port, bool passive, AddrInfo& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string service = std::to_string(port);
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &out.list);
  if (rc != 0) throw std::runtime_error("cannot resolve '" + host + "': " + gai_strerror(rc));
}

}  // namespace

void split_host_port(const std::string& text, uint16_t default_port, std::string& host,
                     uint16_t& port) {
  port = default_port;
  std::string rest;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos) throw std::invalid_argument("'" + text + "': no ']'");
    host = text.substr(1, close - 1);
    rest = text.substr(close + 1);
    if (!rest.empty() && rest[0] != ':')
      throw std::invalid_argument("'" + text + "': expected ':PORT' after ']'");
  } else {
    size_t colon = text.find(':');
    if (colon != std::string::npos && text.find(':', colon + 1) != std::string::npos) {
      host = text;  // a bare IPv6 address
      return;
    }
    host = text.substr(0, colon);
    if (colon != std::string::npos) rest = text.substr(colon);
  }
  if (rest.empty()) return;
  const std::string digits = rest.substr(1);
  char* end = nullptr;
  unsigned long v = std::strtoul(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || v == 0 || v > 65535)
    throw std::invalid_argument("'" + text + "': the port must be in 1..65535");
  port = uint16_t(v);
}

std::string join_host_port(const std::string& host, uint16_t port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

int listen_tcp(const std::string& host, uint16_t port) {
  AddrInfo ai;
  resolve(host == "0.0.0.0" ? "" : host, port, true, ai);
  int last = 0;
  for (addrinfo* a = ai.list; a; a = a->ai_next) {
    if (host.empty() && a->ai_family != AF_INET) continue;  // any address: IPv4's
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1024) == 0) return fd;
    last = errno;
    close(fd);
  }
  fail("listen on " + join_host_port(host.empty() ? "0.0.0.0" : host, port), last);
}

int connect_tcp(const std::string& host, uint16_t port, int timeout_ms) {
  AddrInfo ai;
  resolve(host, port, false, ai);
  int last = ECONNREFUSED;
  for (addrinfo* a = ai.list; a; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      last = errno;
      continue;
    }
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = poll(&p, 1, timeout_ms);
      if (rc == 0) {
        last = ETIMEDOUT;
        close(fd);
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err ? -1 : 0;
      errno = err;
    }
    if (rc == 0) {
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    last = errno;
    close(fd);
  }
  fail("connect to " + join_host_port(host, port), last);
}

int accept_within(int listen_fd, int timeout_ms) {
  pollfd p{listen_fd, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return -1;
  int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

uint16_t local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in&>(ss).sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6&>(ss).sin6_port);
}

std::string local_host(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  return getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 ? numeric(ss) : "";
}

std::string peer_host(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  return getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 ? numeric(ss) : "";
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

}  // namespace mtperf::fleet
