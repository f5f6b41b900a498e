#include "transports/inet/endpoint.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
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

}  // namespace

// The TCP flows of one test to one server address share a listening socket. A listener per flow
// binds a port each, and the kernel's search for a free port grows with the ports in use: at
// 10,000 flows most of the set-up went to bind(). Each connection proves its flow in its hello;
// one that comes before its flow's turn waits in `early` until that flow's listener takes it, so
// the flows connect in any order. Used from the server session's one thread.
struct SharedTcpListen {
  int fd = -1;        // the listening socket, non-blocking
  int ready_fd = -1;  // eventfd, readable while `early` holds a connection
  uint16_t port = 0;
  std::map<uint32_t, int> early;  // flow -> its proven connection, not yet taken
  std::set<uint32_t> open;        // flows whose listener exists and has not taken a connection

  SharedTcpListen(const SockAddr& where, const SocketOptions& opts) {
    // The backlog holds every flow that connects before the session accepts it (capped by
    // net.core.somaxconn); the kernel's SYN cookies cover a burst beyond it.
    fd = listen_on(where, Proto::tcp, opts, kBacklog);
    set_nonblocking(fd, true);
    port = local_address(fd).port();
    ready_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ready_fd < 0) {
      int err = errno;
      ::close(fd);
      throw std::runtime_error(std::string("eventfd: ") + std::strerror(err));
    }
  }
  ~SharedTcpListen() {
    for (auto& [flow, c] : early)
      ::close(c);
    ::close(ready_fd);
    ::close(fd);
  }
  SharedTcpListen(const SharedTcpListen&) = delete;
  SharedTcpListen& operator=(const SharedTcpListen&) = delete;

  void keep_early(uint32_t flow, int c) {
    if (early.empty()) {
      uint64_t one = 1;
      [[maybe_unused]] ssize_t n = ::write(ready_fd, &one, sizeof one);
    }
    early.emplace(flow, c);
  }
  int take_early(uint32_t flow) {
    auto it = early.find(flow);
    if (it == early.end()) return -1;
    int c = it->second;
    early.erase(it);
    if (early.empty()) {
      uint64_t n;
      [[maybe_unused]] ssize_t r = ::read(ready_fd, &n, sizeof n);
    }
    return c;
  }

  static constexpr int kBacklog = 4096;
};

namespace {

class SocketListener final : public FlowListener {
 public:
  // A flow's own socket: UDP, and crr's listener, which the flow keeps as its endpoint.
  SocketListener(const SockAddr& where, const FlowSetup& setup) : setup_(setup) {
    fd_ = listen_on(where, setup.proto, listening_options(setup), setup.per_transaction ? 1024 : 4);
  }
  // A TCP flow on its test's shared listening socket.
  SocketListener(std::shared_ptr<SharedTcpListen> shared, const FlowSetup& setup)
      : setup_(setup), shared_(std::move(shared)) {
    shared_->open.insert(setup_.flow);
  }
  ~SocketListener() override {
    if (fd_ >= 0) ::close(fd_);
    if (shared_) {
      shared_->open.erase(setup_.flow);
      int c = shared_->take_early(setup_.flow);
      if (c >= 0) ::close(c);
    }
  }
  // The server's data sockets listen on the address the client reached it by (or the one the
  // flow names); the client's device and source-address choices are its own.
  static SocketOptions listening_options(const FlowSetup& setup) {
    SocketOptions opts = *setup.sock;
    opts.bind_device.clear();
    opts.source.clear();
    return opts;
  }
  uint16_t port() const override { return shared_ ? shared_->port : local_address(fd_).port(); }
  int wait_fd() const override {
    if (!shared_) return fd_;
    return shared_->early.count(setup_.flow) ? shared_->ready_fd : shared_->fd;
  }
  std::unique_ptr<Endpoint> accept(int64_t deadline_ns) override {
    // A TCP flow's own listener is crr's, which the flow takes whole (release()).
    if (shared_) return accept_shared(deadline_ns);
    return setup_.proto == Proto::udp ? accept_udp() : nullptr;
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
  std::unique_ptr<Endpoint> adopt(int fd) {
    set_nonblocking(fd, false);
    apply_accepted_options(fd, Proto::tcp, *setup_.sock);
    auto ep = endpoint();
    ep->fd = fd;
    return ep;
  }
  // This flow's connection if it came early; otherwise every connection waiting now, each kept
  // for its flow, until this flow's own comes or the queue is empty.
  std::unique_ptr<Endpoint> accept_shared(int64_t deadline_ns) {
    int mine = shared_->take_early(setup_.flow);
    while (mine < 0) {
      int fd = accept4(shared_->fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
          return nullptr;
        throw std::runtime_error(flow_name(setup_) + ": accept: " + std::strerror(errno));
      }
      uint8_t hello[kHelloBytes];
      FlowHello h;
      int64_t until = std::min(deadline_ns, now_ns() + kHelloWaitNs);
      const bool proven = read_exact(fd, hello, sizeof hello, ms_until(until)) &&
                          decode_hello(hello, h) && h.cookie == setup_.cookie;
      if (proven && h.flow == setup_.flow) {
        mine = fd;
      } else if (proven && shared_->open.count(h.flow) && !shared_->early.count(h.flow)) {
        shared_->keep_early(h.flow, fd);
      } else {  // not this test's, no such flow here, or its connection came already
        ::close(fd);
        ++rejected_;
      }
    }
    shared_->open.erase(setup_.flow);
    return adopt(mine);
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
  std::shared_ptr<SharedTcpListen> shared_;
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

// A peer's UDP greeting (peers/): one datagram out, one of the expected answers back.
void udp_greet(int fd, const FlowSetup& s, const SockAddr& server, int64_t deadline_ns) {
  const std::vector<uint8_t>& g = *s.greeting;
  if (send(fd, g.data(), g.size(), 0) != ssize_t(g.size()))
    throw std::runtime_error(flow_name(s) + ": cannot greet " + server.to_string() + ": " +
                             std::strerror(errno));
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int left = ms_until(deadline_ns);
    if (left <= 0 || ::poll(&p, 1, left) == 0) break;
    uint8_t answer[64];
    const ssize_t n = recv(fd, answer, sizeof answer, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0)
      throw std::runtime_error(flow_name(s) + ": " + server.to_string() +
                               " did not take the UDP greeting: " + std::strerror(errno));
    for (const std::vector<uint8_t>& r : *s.greeting_replies)
      if (size_t(n) == r.size() && std::memcmp(answer, r.data(), r.size()) == 0) return;
    // Anything else (a stray datagram) is not the answer: wait on.
  }
  throw std::runtime_error(flow_name(s) + ": " + server.to_string() +
                           " never answered the UDP greeting");
}

}  // namespace

SocketEndpoint::~SocketEndpoint() {
  if (fd >= 0) ::close(fd);
}

int SocketEndpoint::dup_stats_fd() const {
  return fd >= 0 && proto == Proto::tcp && !listener ? dup(fd) : -1;
}

std::unique_ptr<FlowListener> SocketSetup::listen(const SockAddr& where, const FlowSetup& setup) {
  if (setup.proto != Proto::tcp || setup.per_transaction)
    return std::make_unique<SocketListener>(where, setup);
  std::lock_guard lock(shared_mu_);
  const std::string key = std::to_string(setup.cookie) + " " + where.to_string();
  std::shared_ptr<SharedTcpListen> shared = shared_[key].lock();
  if (!shared) {
    std::erase_if(shared_, [](const auto& e) { return e.second.expired(); });
    shared = std::make_shared<SharedTcpListen>(where, SocketListener::listening_options(setup));
    shared_[key] = shared;
  }
  return std::make_unique<SocketListener>(std::move(shared), setup);
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
  if (setup.greeting != nullptr && setup.proto == Proto::tcp) {  // a peer's own (peers/)
    const std::vector<uint8_t>& g = *setup.greeting;
    if (!write_all(ep->fd, g.data(), g.size(), ms_until(deadline_ns)))
      throw std::runtime_error(flow_name(setup) + ": cannot greet " + server.to_string());
    return ep;
  }
  if (setup.greeting != nullptr && setup.greeting_replies != nullptr) {
    udp_greet(ep->fd, setup, server, deadline_ns);
    return ep;
  }
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
