#include "transports/inet/inet.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

namespace mtperf::inet {
namespace {

[[noreturn]] void fail(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

void set_int(int fd, int level, int name, int value, const char* what) {
  if (setsockopt(fd, level, name, &value, sizeof value) != 0) {
    int err = errno;
    close(fd);
    fail(std::string("setsockopt ") + what + "=" + std::to_string(value), err);
  }
}

void split_host_port(const std::string& in, std::string& host, std::string& port) {
  if (!in.empty() && in.front() == '[') {
    auto close_bracket = in.find(']');
    if (close_bracket == std::string::npos) throw std::invalid_argument("bad address '" + in + "'");
    host = in.substr(1, close_bracket - 1);
    if (close_bracket + 1 < in.size()) {
      if (in[close_bracket + 1] != ':') throw std::invalid_argument("bad address '" + in + "'");
      port = in.substr(close_bracket + 2);
    }
    return;
  }
  auto colon = in.find(':');
  if (colon != std::string::npos && in.find(':', colon + 1) == std::string::npos) {
    host = in.substr(0, colon);
    port = in.substr(colon + 1);
  } else {
    host = in;  // a bare IPv6 address or a host without port
  }
}

bool wait_for(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    int n = ::poll(&p, 1, timeout_ms);
    if (n > 0) return true;
    if (n == 0) {
      errno = ETIMEDOUT;
      return false;
    }
    if (errno != EINTR) return false;
  }
}

}  // namespace

SockAddr resolve(const std::string& host_port, uint16_t default_port) {
  std::string host, port;
  split_host_port(host_port, host, port);
  if (host.empty()) throw std::invalid_argument("no host in address '" + host_port + "'");
  if (port.empty()) port = std::to_string(default_port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) {
    throw std::runtime_error("cannot resolve '" + host_port + "': " + gai_strerror(rc));
  }
  SockAddr out;
  std::memcpy(&out.ss, res->ai_addr, res->ai_addrlen);
  out.len = res->ai_addrlen;
  freeaddrinfo(res);
  return out;
}

namespace {

// The one place a data socket is made: every option of `o` applied. Returns the descriptor, or
// -errno with `failed` naming the step that failed. No allocation and no exception, so crr's
// connects on the data path use it too. Only options that differ from the kernel's defaults cost
// a system call.
int new_socket(int family, Proto proto, const SocketOptions& o, const char*& failed) noexcept {
  int type = proto == Proto::tcp ? SOCK_STREAM : SOCK_DGRAM;
  int protocol = (proto == Proto::tcp && o.mptcp) ? IPPROTO_MPTCP : 0;
  failed = protocol == IPPROTO_MPTCP ? "mptcp" : "socket";
  int fd = socket(family, type | SOCK_CLOEXEC, protocol);
  if (fd < 0) return -errno;
  auto set = [fd, &failed](int level, int name, int value, const char* what) {
    failed = what;
    return setsockopt(fd, level, name, &value, sizeof value) == 0;
  };
  bool ok = true;
  if (o.sndbuf > 0) ok = ok && set(SOL_SOCKET, SO_SNDBUF, o.sndbuf, "SO_SNDBUF");
  if (o.rcvbuf > 0) ok = ok && set(SOL_SOCKET, SO_RCVBUF, o.rcvbuf, "SO_RCVBUF");
  if (ok && o.rcvbuf == 0 && proto == Proto::udp) {
    // A UDP receiver has no flow control: a default buffer (about 140 full datagrams) overflows
    // whenever the receiving thread is descheduled for a few ms. Ask for 4 MiB (beyond
    // net.core.rmem_max only with CAP_NET_ADMIN; otherwise the kernel caps it silently).
    if (!set(SOL_SOCKET, SO_RCVBUFFORCE, 4 << 20, "SO_RCVBUFFORCE"))
      set(SOL_SOCKET, SO_RCVBUF, 4 << 20, "SO_RCVBUF");
  }
  if (proto == Proto::tcp && o.nodelay) ok = ok && set(IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
  if (o.busy_poll_us > 0) ok = ok && set(SOL_SOCKET, SO_BUSY_POLL, o.busy_poll_us, "SO_BUSY_POLL");
  // Before connect or listen: the SYN announces it, and a listener's connections inherit it.
  if (proto == Proto::tcp && o.mss > 0)
    ok = ok && set(IPPROTO_TCP, TCP_MAXSEG, o.mss, "TCP_MAXSEG");
  if (ok && proto == Proto::tcp && !o.congestion.empty()) {
    failed = "congestion";
    ok = setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o.congestion.data(), o.congestion.size()) == 0;
  }
  if (ok && !o.bind_device.empty()) {
    failed = "device";
    ok = setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, o.bind_device.data(), o.bind_device.size()) ==
         0;
  }
  if (ok) return fd;
  int err = errno;
  close(fd);
  return -err;
}

// What new_socket's `failed` step means, for a person.
std::string describe_step(const char* failed, const SocketOptions& o) {
  std::string step = failed;
  if (step == "mptcp") return "MPTCP socket (is net.mptcp.enabled=1?)";
  if (step == "congestion")
    return "congestion control '" + o.congestion +
           "' (see /proc/sys/net/ipv4/tcp_available_congestion_control)";
  if (step == "device") return "bind to device '" + o.bind_device + "'";
  if (step == "SO_SNDBUF") return "setsockopt SO_SNDBUF=" + std::to_string(o.sndbuf);
  if (step == "TCP_MAXSEG") return "setsockopt TCP_MAXSEG=" + std::to_string(o.mss);
  if (step == "SO_RCVBUF") return "setsockopt SO_RCVBUF=" + std::to_string(o.rcvbuf);
  if (step == "SO_BUSY_POLL") return "setsockopt SO_BUSY_POLL=" + std::to_string(o.busy_poll_us);
  if (step == "socket") return "socket";
  return "setsockopt " + step;
}

}  // namespace

int make_socket(int family, Proto proto, const SocketOptions& o) {
  const char* failed = "socket";
  int fd = new_socket(family, proto, o, failed);
  if (fd < 0) fail(describe_step(failed, o), -fd);
  return fd;
}

int listen_on(const SockAddr& where, Proto proto, const SocketOptions& o, int backlog) {
  int fd = make_socket(where.family(), proto, o);
  // TCP only: a listener may rebind a port its predecessor left in TIME_WAIT. On UDP the option
  // lets the kernel hand one ephemeral port to several sockets at once (bind or connect to port
  // 0 treats a port held only by SO_REUSEADDR sockets as free), and a datagram then reaches
  // whichever of them the kernel picks: with a few hundred UDP flows, a flow's hello went to
  // another flow's socket.
  if (proto == Proto::tcp) set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
  if (bind(fd, where.get(), where.len) != 0) {
    int err = errno;
    close(fd);
    fail("bind " + where.to_string(), err);
  }
  if (proto == Proto::tcp && ::listen(fd, backlog) != 0) {
    int err = errno;
    close(fd);
    fail("listen " + where.to_string(), err);
  }
  return fd;
}

namespace {

void bind_source(int fd, const SockAddr& remote, const SocketOptions& o) {
  if (o.source.empty()) return;
  SockAddr src = resolve(o.source, 0);
  if (src.family() != remote.family()) {
    close(fd);
    throw std::runtime_error("source address " + o.source + " and " + remote.to_string() +
                             " are of different families");
  }
  if (bind(fd, src.get(), src.len) != 0) {
    int err = errno;
    close(fd);
    fail("bind source " + o.source, err);
  }
}

}  // namespace

int connect_to(const SockAddr& remote, Proto proto, const SocketOptions& o, int timeout_ms) {
  int fd = make_socket(remote.family(), proto, o);
  bind_source(fd, remote, o);
  set_nonblocking(fd, true);
  if (connect(fd, remote.get(), remote.len) != 0 && errno != EINPROGRESS) {
    int err = errno;
    close(fd);
    fail("connect to " + remote.to_string(), err);
  }
  if (!wait_for(fd, POLLOUT, timeout_ms)) {
    int err = errno;
    close(fd);
    fail("connect to " + remote.to_string(), err);
  }
  int soerr = 0;
  socklen_t len = sizeof soerr;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
  if (soerr != 0) {
    close(fd);
    fail("connect to " + remote.to_string(), soerr);
  }
  set_nonblocking(fd, false);
  return fd;
}

int connect_fast(const SockAddr& remote, Proto proto, const SocketOptions& o) noexcept {
  ConnectSpec spec;
  spec.remote = remote;
  spec.proto = proto;
  spec.opts = &o;
  return connect_fast(spec);
}

int connect_fast(const ConnectSpec& spec) noexcept {
  static const SocketOptions kDefaults;
  const SocketOptions& o = spec.opts ? *spec.opts : kDefaults;
  const char* failed = nullptr;
  int fd = new_socket(spec.remote.family(), spec.proto, o, failed);
  if (fd < 0) return fd;
  if (spec.source != nullptr && spec.source->family() != AF_UNSPEC) {
    // The port is chosen at connect(), from the whole 4-tuple space, not at bind() from the
    // ports free on that address: crr opens connections by the thousand.
    int one = 1;
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    if (bind(fd, spec.source->get(), spec.source->len) != 0) {
      int err = errno;
      close(fd);
      return -err;
    }
  }
  if (connect(fd, spec.remote.get(), spec.remote.len) != 0) {
    int err = errno;
    close(fd);
    return -err;
  }
  return fd;
}

void apply_accepted_options(int fd, Proto proto, const SocketOptions& o) {
  int one = 1;
  if (proto == Proto::tcp && o.nodelay) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (o.busy_poll_us > 0) {
    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &o.busy_poll_us, sizeof o.busy_poll_us);
  }
}

SockAddr local_address(int fd) {
  SockAddr a;
  a.len = sizeof a.ss;
  if (getsockname(fd, a.get(), &a.len) != 0) fail("getsockname", errno);
  return a;
}

SockAddr peer_address(int fd) {
  SockAddr a;
  a.len = sizeof a.ss;
  if (getpeername(fd, a.get(), &a.len) != 0) fail("getpeername", errno);
  return a;
}

void set_nonblocking(int fd, bool on) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) fail("fcntl", errno);
  flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (fcntl(fd, F_SETFL, flags) != 0) fail("fcntl", errno);
}

void set_io_timeout(int fd, int timeout_ms, IoDir dir) {
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, dir == IoDir::recv ? SO_RCVTIMEO : SO_SNDTIMEO, &tv, sizeof tv);
}

void set_io_timeout(int fd, int timeout_ms) {
  set_io_timeout(fd, timeout_ms, IoDir::recv);
  set_io_timeout(fd, timeout_ms, IoDir::send);
}

bool write_all(int fd, const void* data, size_t len, int timeout_ms) {
  auto p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      len -= size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLOUT, timeout_ms)) return false;
      continue;
    }
    return false;
  }
  return true;
}

bool read_exact(int fd, void* data, size_t len, int timeout_ms) {
  auto p = static_cast<char*>(data);
  while (len > 0) {
    ssize_t n = ::recv(fd, p, len, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      len -= size_t(n);
      continue;
    }
    if (n == 0) {
      errno = 0;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for(fd, POLLIN, timeout_ms)) return false;
      continue;
    }
    return false;
  }
  return true;
}

int accept_within(int listen_fd, int timeout_ms) {
  if (!wait_for(listen_fd, POLLIN, timeout_ms)) return -1;
  return accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
}

void raise_fd_limit() noexcept {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

}  // namespace mtperf::inet
