#include "peers/sockperf/server.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "peers/sockperf/protocol.hpp"
#include "platform/clock.hpp"
#include "transports/api/control_socket.hpp"
#include "transports/api/transport.hpp"

namespace mtperf::sockperf {
namespace {

constexpr int kTickMs = 100;  // how often the loop looks at stop and the idle deadlines

struct Client {
  int fd = -1;
  std::string peer;
  std::unique_ptr<StreamFramer> framer;
  int64_t last_input_ns = 0;
  uint64_t messages = 0, pongs = 0;
};

// Sends n bytes within timeout_ms; false when the client did not take them.
bool send_within(int fd, const uint8_t* p, size_t n, int timeout_ms) {
  const int64_t deadline = deadline_in(timeout_ms);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      p += w;
      n -= size_t(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno != EAGAIN) return false;
    const int64_t left = deadline - now_ns();
    if (left <= 0) return false;
    pollfd pf{fd, POLLOUT, 0};
    ::poll(&pf, 1, int(left / 1'000'000) + 1);
  }
  return true;
}

}  // namespace

struct Server::Impl {
  ServeOptions opts;
  ServeCounts counts;
  std::atomic<bool> stopping{false};
  int tcp = -1, udp = -1;
  uint16_t port = 0;
  std::vector<Client> clients;
  std::vector<pollfd> pfds;
  std::unique_ptr<uint8_t[]> buf{new uint8_t[kMaxMessage + 1]};
  std::thread thread;

  void log(const std::string& line) {
    if (opts.log) opts.log(line);
  }

  // sockperf sr's rules for one whole message; msg is writable (the pong goes back from it).
  // Returns false when the pong could not be sent.
  bool handle(uint8_t* msg, const Header& h, int fd, const sockaddr* to, socklen_t to_len,
              Client* c) {
    if (!(h.flags & kFlagClient)) return true;  // another server's reply: not counted
    if (h.flags & kFlagWarmup) {
      counts.warmup.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    counts.messages.fetch_add(1, std::memory_order_relaxed);
    if (c) ++c->messages;
    if (!(h.flags & kFlagPong)) return true;
    msg[9] = uint8_t(msg[9] & ~kFlagClient);  // flags' low byte: the reply is the server's
    bool ok = to ? ::sendto(fd, msg, h.length, MSG_DONTWAIT, to, to_len) == ssize_t(h.length)
                 : send_within(fd, msg, h.length, opts.send_timeout_ms);
    if (ok) {
      counts.pongs.fetch_add(1, std::memory_order_relaxed);
      if (c) ++c->pongs;
    }
    return ok || to != nullptr;  // a UDP pong dropped is the client's loss, as with sockperf
  }

  void drop(size_t i, const std::string& why) {
    Client& c = clients[i];
    std::string line = "sockperf client " + c.peer + " (TCP): " + std::to_string(c.messages) +
                       " messages, " + std::to_string(c.pongs) + " pongs";
    if (c.framer && c.framer->pending() > 0)
      line += "; stopped mid-message (" + std::to_string(c.framer->pending()) + " bytes held)";
    if (!why.empty()) line += "; " + why;
    log(line);
    ::close(c.fd);
    counts.closed.fetch_add(1, std::memory_order_relaxed);
    clients.erase(clients.begin() + std::ptrdiff_t(i));
  }

  void accept_one() {
    int fd = ::accept4(tcp, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    std::string peer = control_socket::peer_address(fd).to_string();
    if (clients.size() >= opts.max_clients) {
      counts.rejected.fetch_add(1, std::memory_order_relaxed);
      log("sockperf client " + peer + " (TCP) refused: " + std::to_string(opts.max_clients) +
          " clients already connected");
      ::close(fd);
      return;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    counts.connections.fetch_add(1, std::memory_order_relaxed);
    Client c;
    c.fd = fd;
    c.peer = peer;
    c.framer = std::make_unique<StreamFramer>(kMaxMessage);
    c.last_input_ns = now_ns();
    clients.push_back(std::move(c));
  }

  void read_udp() {
    for (int i = 0; i < 64; ++i) {  // a bounded burst, then the others get their turn
      sockaddr_storage from{};
      socklen_t len = sizeof from;
      ssize_t r = ::recvfrom(udp, buf.get(), kMaxMessage + 1, MSG_DONTWAIT,
                             reinterpret_cast<sockaddr*>(&from), &len);
      if (r < 0) return;
      Header h;
      if (decode(buf.get(), size_t(r), h) != HeaderStatus::ok || h.length != size_t(r)) {
        counts.rejected.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      handle(buf.get(), h, udp, reinterpret_cast<sockaddr*>(&from), len, nullptr);
    }
  }

  // Returns the reason to drop the client, empty to keep it.
  std::string read_tcp(Client& c) {
    ssize_t r = ::recv(c.fd, buf.get(), kMaxMessage, MSG_DONTWAIT);
    if (r == 0) return "";  // marked by the caller through pending EOF
    if (r < 0) return errno == EAGAIN || errno == EINTR ? "" : std::strerror(errno);
    c.last_input_ns = now_ns();
    bool send_failed = false;
    bool ok = c.framer->feed(buf.get(), size_t(r), [&](const Header& h, uint8_t* msg) {
      if (!send_failed && !handle(msg, h, c.fd, nullptr, 0, &c)) send_failed = true;
    });
    if (!ok) {
      counts.rejected.fetch_add(1, std::memory_order_relaxed);
      return "a header with " + to_string(c.framer->error()) + " (length " +
             std::to_string(c.framer->last_header().length) + ")";
    }
    if (send_failed)
      return "it took no pong within " + std::to_string(opts.send_timeout_ms) + " ms";
    return "";
  }

  void loop() {
    while (!stopping.load(std::memory_order_relaxed)) {
      pfds.clear();
      pfds.push_back({tcp, POLLIN, 0});
      pfds.push_back({udp, POLLIN, 0});
      for (const Client& c : clients)
        pfds.push_back({c.fd, POLLIN, 0});
      int n = ::poll(pfds.data(), pfds.size(), kTickMs);
      if (n < 0 && errno != EINTR) break;
      const size_t nclients = clients.size();
      // Clients first, walking down so that dropping one leaves the others' indexes alone.
      for (size_t i = nclients; i-- > 0;) {
        const short ev = pfds[2 + i].revents;
        Client& c = clients[i];
        if (ev & (POLLIN | POLLHUP | POLLERR)) {
          char probe;
          std::string why = read_tcp(c);
          if (!why.empty()) {
            drop(i, why);
            continue;
          }
          if (::recv(c.fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
            drop(i, "");
            continue;
          }
        }
        if (now_ns() - c.last_input_ns > int64_t(opts.idle_timeout_ms) * 1'000'000)
          drop(i, "silent for " + std::to_string(opts.idle_timeout_ms) + " ms");
      }
      if (pfds[0].revents & POLLIN) accept_one();
      if (pfds[1].revents & POLLIN) read_udp();
    }
    while (!clients.empty())
      drop(clients.size() - 1, "the server stopped");
  }
};

Server::Server(ServeOptions o) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.opts = std::move(o);
  SockAddr where = numeric_address(m.opts.bind, m.opts.port);
  m.tcp = control_socket::listen(where, 128);
  SockAddr bound = control_socket::local_address(m.tcp);
  m.port = bound.port();
  m.udp = ::socket(where.family(), SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (m.udp < 0 || ::bind(m.udp, bound.get(), bound.len) != 0) {
    const std::string err = std::strerror(errno);
    ::close(m.tcp);
    if (m.udp >= 0) ::close(m.udp);
    throw std::runtime_error("sockperf: UDP on " + bound.to_string() + ": " + err);
  }
  m.clients.reserve(m.opts.max_clients);
  m.pfds.reserve(m.opts.max_clients + 2);
  m.thread = std::thread([&m] { m.loop(); });
}

Server::~Server() {
  stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  ::close(impl_->tcp);
  ::close(impl_->udp);
}

uint16_t Server::port() const {
  return impl_->port;
}
const ServeCounts& Server::counts() const {
  return impl_->counts;
}
void Server::stop() noexcept {
  impl_->stopping.store(true, std::memory_order_relaxed);
}

}  // namespace mtperf::sockperf
