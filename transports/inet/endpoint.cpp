#include "transports/inet/endpoint.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "platform/clock.hpp"
#include "transports/inet/flow_hello.hpp"
#include "transports/inet/inet.hpp"

namespace mtperf::inet {
namespace {

// How long an accepted connection may take to show its hello: a silent stranger holds the
// listener no longer than this, whatever the set-up deadline.
constexpr int64_t kHelloWaitNs = 2'000'000'000;

std::string flow_name(const FlowSetup& s) {
  return "flow " + std::to_string(s.flow);
}

class SocketListener final : public FlowListener {
 public:
  SocketListener(const SockAddr& where, const FlowSetup& setup) : setup_(setup) {
    // The server's data sockets listen on the address the client reached it by (or the one the
    // flow names); the client's device and source-address choices are its own.
    SocketOptions opts = *setup.sock;
    opts.bind_device.clear();
    opts.source.clear();
    fd_ = listen_on(where, setup.proto, opts, setup.per_transaction ? 1024 : 4);
  }
  ~SocketListener() override {
    if (fd_ >= 0) ::close(fd_);
  }
  uint16_t port() const override { return local_address(fd_).port(); }
  int wait_fd() const override { return fd_; }
  std::unique_ptr<Endpoint> accept(int64_t deadline_ns) override {
    return setup_.proto == Proto::udp ? accept_udp() : accept_tcp(deadline_ns);
  }
  std::unique_ptr<Endpoint> release() override {
    auto ep = endpoint();
    ep->fd = fd_;
    ep->listener = setup_.proto == Proto::tcp;
    fd_ = -1;
    return ep;
  }

 private:
  std::unique_ptr<SocketEndpoint> endpoint() const {
    auto ep = std::make_unique<SocketEndpoint>();
    ep->proto = setup_.proto;
    ep->opts = *setup_.sock;
    return ep;
  }
  bool proves(const uint8_t* hello) const {
    FlowHello h;
    return decode_hello(hello, h) && h.cookie == setup_.cookie && h.flow == setup_.flow;
  }
  std::unique_ptr<Endpoint> accept_tcp(int64_t deadline_ns) {
    int fd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
        return nullptr;
      throw std::runtime_error(flow_name(setup_) + ": accept: " + std::strerror(errno));
    }
    uint8_t hello[kHelloBytes];
    int64_t until = std::min(deadline_ns, now_ns() + kHelloWaitNs);
    if (!read_exact(fd, hello, sizeof hello, ms_until(until)) || !proves(hello)) {
      ::close(fd);
      ++rejected_;
      return nullptr;
    }
    set_nonblocking(fd, false);
    apply_accepted_options(fd, Proto::tcp, *setup_.sock);
    // One connection per flow: the listener has served its purpose.
    ::close(fd_);
    fd_ = -1;
    auto ep = endpoint();
    ep->fd = fd;
    return ep;
  }
  std::unique_ptr<Endpoint> accept_udp() {
    uint8_t hello[kHelloBytes];
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    ssize_t n = recvfrom(fd_, hello, sizeof hello, MSG_DONTWAIT | MSG_TRUNC,
                         reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return nullptr;
      throw std::runtime_error(flow_name(setup_) + ": recvfrom: " + std::strerror(errno));
    }
    if (n != ssize_t(kHelloBytes) || !proves(hello)) {
      ++rejected_;
      return nullptr;
    }
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&from), len) != 0 ||
        send(fd_, hello, sizeof hello, 0) != ssize_t(sizeof hello)) {
      throw std::runtime_error(flow_name(setup_) +
                               ": cannot answer the UDP hello: " + std::strerror(errno));
    }
    auto ep = endpoint();
    ep->fd = fd_;
    fd_ = -1;
    return ep;
  }

  FlowSetup setup_;
  int fd_ = -1;
};

// UDP: the hello goes out until the server echoes it (a datagram may be lost).
void udp_hello(int fd, const uint8_t* hello, const FlowSetup& s, int64_t deadline_ns) {
  while (now_ns() < deadline_ns) {
    if (send(fd, hello, kHelloBytes, 0) < 0 && errno != ECONNREFUSED) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, std::min(100, ms_until(deadline_ns))) > 0) {
      uint8_t ack[kHelloBytes];
      if (recv(fd, ack, sizeof ack, MSG_DONTWAIT) == ssize_t(sizeof ack) &&
          std::memcmp(ack, hello, sizeof ack) == 0) {
        return;
      }
    }
  }
  throw std::runtime_error(flow_name(s) + ": the server never answered the UDP hello");
}

}  // namespace

SocketEndpoint::~SocketEndpoint() {
  if (fd >= 0) ::close(fd);
}

int SocketEndpoint::dup_stats_fd() const {
  return fd >= 0 && proto == Proto::tcp && !listener ? dup(fd) : -1;
}

std::unique_ptr<FlowListener> SocketSetup::listen(const SockAddr& where, const FlowSetup& setup) {
  return std::make_unique<SocketListener>(where, setup);
}

std::unique_ptr<Endpoint> SocketSetup::connect(const SockAddr& server, const SockAddr& source,
                                               const FlowSetup& setup, int64_t deadline_ns) {
  auto ep = std::make_unique<SocketEndpoint>();
  ep->proto = setup.proto;
  ep->remote = server;
  ep->source = source;
  ep->opts = *setup.sock;
  if (source.family() != AF_UNSPEC) ep->opts.source = source.to_string();
  if (setup.per_transaction) return ep;  // each transaction connects on the data path
  ep->fd = connect_to(server, setup.proto, ep->opts, std::max(ms_until(deadline_ns), 1));
  uint8_t hello[kHelloBytes];
  encode_hello({setup.cookie, setup.flow}, hello);
  if (setup.proto == Proto::udp) {
    udp_hello(ep->fd, hello, setup, deadline_ns);
  } else if (!write_all(ep->fd, hello, sizeof hello, ms_until(deadline_ns))) {
    throw std::runtime_error(flow_name(setup) + ": cannot send the hello to " + server.to_string());
  }
  return ep;
}

}  // namespace mtperf::inet
