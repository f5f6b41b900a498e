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
#include "workloads/spec.hpp"

namespace mtperf::sockperf {
namespace {

constexpr int kTickMs = 100;  // how often the loop looks at stop and the idle deadlines
// What a TCP client holds while it is connected, for serve's memory budget: its message buffer
// (the framer's) and its entry.
constexpr uint64_t kClientBytes = kMaxMessage + 1 + 512;

// One client's counts, as sockperf sr counts them: messages (and their bytes) taken, pongs sent.
struct Tally {
  uint64_t messages = 0, pongs = 0, bytes_in = 0, bytes_out = 0;
};

struct Client {
  int fd = -1;
  std::string peer;
  std::unique_ptr<StreamFramer> framer;
  int64_t last_input_ns = 0;
  Tally tally;
  control::Admission::Ticket ticket;  // serve's session, when there is an Admission
  // The client closed the connection, or reset it: sockperf's clients close with their last
  // pong unread, which the kernel answers with a reset. A client leaving, not an error.
  bool left = false;
};

// A UDP client: the source address its datagrams come from.
struct UdpClient {
  sockaddr_storage from{};
  socklen_t len = 0;
  std::string peer;
  int64_t last_input_ns = 0;
  Tally tally;
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
  std::vector<UdpClient> udp_clients;
  size_t udp_last = 0;  // the UDP client of the last datagram: most datagrams come from it
  uint64_t udp_not_allowed_logged = 0;
  int64_t udp_not_allowed_log_ns = 0;
  std::vector<pollfd> pfds;
  std::unique_ptr<uint8_t[]> buf{new uint8_t[kMaxMessage + 1]};
  std::thread thread;

  void log(const std::string& line) {
    if (opts.log) opts.log(line);
  }

  // A client that ended (tally: what it did) or was refused (none).
  void report(const std::string& peer, Proto proto, const Tally* t, control::TestLog::Result r,
              std::string why, std::string_view refused_at = {}) {
    control::TestLog tl;
    tl.client = peer;
    tl.protocol = "sockperf";
    if (t) {
      TestSpec spec;
      spec.workload = t->pongs > 0 ? Workload::rr : Workload::stream;
      spec.proto = proto;
      spec.transport.clear();  // the server's own sockets
      tl.spec = std::move(spec);
      tl.counted = true;
      tl.bytes_recv = t->bytes_in;
      tl.bytes_sent = t->bytes_out;
      tl.transactions = t->pongs;
    }
    tl.result = r;
    tl.why = std::move(why);
    tl.refused_at = refused_at;
    if (opts.done) {
      opts.done(tl);
    } else {
      log(control::format_test_log(tl));
    }
  }

  // sockperf sr's rules for one whole message; msg is writable (the pong goes back from it).
  // Returns false when the pong could not be sent.
  bool handle(uint8_t* msg, const Header& h, int fd, const sockaddr* to, socklen_t to_len,
              Tally& c) {
    if (!(h.flags & kFlagClient)) return true;  // another server's reply: not counted
    if (h.flags & kFlagWarmup) {
      counts.warmup.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    counts.messages.fetch_add(1, std::memory_order_relaxed);
    ++c.messages;
    c.bytes_in += h.length;
    if (!(h.flags & kFlagPong)) return true;
    msg[9] = uint8_t(msg[9] & ~kFlagClient);  // flags' low byte: the reply is the server's
    bool ok = to ? ::sendto(fd, msg, h.length, MSG_DONTWAIT, to, to_len) == ssize_t(h.length)
                 : send_within(fd, msg, h.length, opts.send_timeout_ms);
    if (ok) {
      counts.pongs.fetch_add(1, std::memory_order_relaxed);
      ++c.pongs;
      c.bytes_out += h.length;
    }
    return ok || to != nullptr;  // a UDP pong dropped is the client's loss, as with sockperf
  }

  void drop(size_t i, const std::string& why) {
    Client& c = clients[i];
    std::string error = why;
    if (c.framer && c.framer->pending() > 0)
      error += (error.empty() ? "" : "; ") + std::string("stopped mid-message (") +
               std::to_string(c.framer->pending()) + " bytes held)";
    report(c.peer, Proto::tcp, &c.tally,
           error.empty() ? control::TestLog::Result::ok : control::TestLog::Result::error, error);
    ::close(c.fd);
    counts.closed.fetch_add(1, std::memory_order_relaxed);
    clients.erase(clients.begin() + std::ptrdiff_t(i));
  }

  void accept_one() {
    int fd = ::accept4(tcp, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    std::string peer = "(unknown peer)";
    bool allowed = opts.allow.empty();
    try {
      const SockAddr a = control_socket::peer_address(fd);
      peer = a.to_string();
      allowed = control::allowed(opts.allow, a);
    } catch (const std::exception&) {
    }
    auto refuse = [&](std::string_view at, std::string why) {
      counts.rejected.fetch_add(1, std::memory_order_relaxed);
      ::close(fd);
      report(peer, Proto::tcp, nullptr, control::TestLog::Result::refused, std::move(why), at);
    };
    if (!allowed) {
      counts.not_allowed.fetch_add(1, std::memory_order_relaxed);
      return refuse("allow", "not from a network in --allow");
    }
    if (clients.size() >= opts.max_clients)
      return refuse("limits", std::to_string(opts.max_clients) + " clients already connected");
    control::Admission::Ticket ticket;
    if (opts.admission) {
      try {
        ticket = opts.admission->admit(kClientBytes);
      } catch (const std::exception& e) {
        return refuse("busy", e.what());
      }
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    counts.connections.fetch_add(1, std::memory_order_relaxed);
    Client c;
    c.fd = fd;
    c.peer = peer;
    c.framer = std::make_unique<StreamFramer>(kMaxMessage);
    c.last_input_ns = now_ns();
    c.ticket = std::move(ticket);
    clients.push_back(std::move(c));
  }

  // The UDP client a datagram came from; nullptr when it is not allowed (dropped, counted).
  UdpClient* udp_client(const sockaddr_storage& from, socklen_t len) {
    auto same = [&](const UdpClient& u) {
      return u.len == len && std::memcmp(&u.from, &from, len) == 0;
    };
    if (udp_last < udp_clients.size() && same(udp_clients[udp_last])) return &udp_clients[udp_last];
    for (size_t i = 0; i < udp_clients.size(); ++i)
      if (same(udp_clients[i])) return &udp_clients[udp_last = i];
    SockAddr a;
    std::memcpy(&a.ss, &from, len);
    a.len = len;
    if (!control::allowed(opts.allow, a)) {
      counts.rejected.fetch_add(1, std::memory_order_relaxed);
      counts.not_allowed.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    if (udp_clients.size() >= opts.max_udp_clients) end_udp(0, "more UDP clients came");
    UdpClient u;
    u.from = from;
    u.len = len;
    u.peer = a.to_string();
    udp_clients.push_back(std::move(u));
    return &udp_clients[udp_last = udp_clients.size() - 1];
  }

  void end_udp(size_t i, const std::string& why) {
    UdpClient& u = udp_clients[i];
    report(u.peer, Proto::udp, &u.tally, control::TestLog::Result::ok, why);
    udp_clients.erase(udp_clients.begin() + std::ptrdiff_t(i));
    udp_last = 0;
  }

  // UDP clients silent for udp_idle_ms have ended; datagrams from outside --allow are named
  // once a second at most (a flood of them is one line a second).
  void tick(int64_t now) {
    for (size_t i = udp_clients.size(); i-- > 0;)
      if (now - udp_clients[i].last_input_ns > int64_t(opts.udp_idle_ms) * 1'000'000)
        end_udp(i, "silent for " + std::to_string(opts.udp_idle_ms) + " ms");
    const uint64_t dropped = counts.not_allowed.load(std::memory_order_relaxed);
    if (dropped != udp_not_allowed_logged && now - udp_not_allowed_log_ns > 1'000'000'000) {
      log("sockperf: " + std::to_string(dropped - udp_not_allowed_logged) +
          " connections or datagrams from outside --allow dropped");
      udp_not_allowed_logged = dropped;
      udp_not_allowed_log_ns = now;
    }
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
      UdpClient* u = udp_client(from, len);
      if (!u) continue;
      u->last_input_ns = now_ns();
      handle(buf.get(), h, udp, reinterpret_cast<sockaddr*>(&from), len, u->tally);
    }
  }

  // Returns the reason to drop the client, empty to keep it.
  std::string read_tcp(Client& c) {
    ssize_t r = ::recv(c.fd, buf.get(), kMaxMessage, MSG_DONTWAIT);
    // The end of the stream is seen by the read that returns it, not by another system call
    // after every message.
    if (r == 0 || (r < 0 && errno == ECONNRESET)) c.left = true;
    if (r <= 0) return errno == EAGAIN || errno == EINTR || c.left ? "" : std::strerror(errno);
    c.last_input_ns = now_ns();
    bool send_failed = false;
    bool ok = c.framer->feed(buf.get(), size_t(r), [&](const Header& h, uint8_t* msg) {
      if (!send_failed && !handle(msg, h, c.fd, nullptr, 0, c.tally)) send_failed = true;
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
          std::string why = read_tcp(c);
          if (!why.empty() || c.left) {
            drop(i, why);
            continue;
          }
        }
        if (now_ns() - c.last_input_ns > int64_t(opts.idle_timeout_ms) * 1'000'000)
          drop(i, "silent for " + std::to_string(opts.idle_timeout_ms) + " ms");
      }
      if (pfds[0].revents & POLLIN) accept_one();
      if (pfds[1].revents & POLLIN) read_udp();
      tick(now_ns());
    }
    while (!clients.empty())
      drop(clients.size() - 1, "the server stopped");
    while (!udp_clients.empty())
      end_udp(udp_clients.size() - 1, "the server stopped");
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
  m.udp_clients.reserve(m.opts.max_udp_clients);
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
