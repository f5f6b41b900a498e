#include "peers/sockperf/server.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
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

constexpr int kTickMs = 100;  // how often each thread looks at stop and its idle deadlines
// What a TCP client holds while it is connected, for serve's memory budget: the buffer its
// thread reads into, its message buffer (the framer's) and its entry.
constexpr uint64_t kClientBytes = 2 * (kMaxMessage + 1) + 512;

// One client's counts, as sockperf sr counts them: messages (and their bytes) taken, pongs sent.
struct Tally {
  uint64_t messages = 0, pongs = 0, bytes_in = 0, bytes_out = 0;
};

// A TCP client, served by a thread of its own that sleeps in recv(), as sockperf sr's does: one
// system call to take a message and one to answer it, with nothing between the two.
struct Client {
  int fd = -1;
  std::string peer;
  StreamFramer framer{kMaxMessage};
  std::unique_ptr<uint8_t[]> buf{new uint8_t[kMaxMessage]};
  int64_t last_input_ns = 0;
  Tally tally;
  control::Admission::Ticket ticket;  // serve's session, when there is an Admission
  std::thread thread;
  std::atomic<bool> finished{false};  // its thread is done: the acceptor joins it
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

// A blocking socket's receive waits at most kTickMs, so that its thread sees stop and deadlines.
void receive_within_tick(int fd) {
  timeval tv{0, kTickMs * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

}  // namespace

// Three kinds of thread: the acceptor (TCP connections, and the joining of client threads that
// ended), the UDP thread (every datagram, and the UDP clients' ends), one per TCP client.
struct Server::Impl {
  ServeOptions opts;
  ServeCounts counts;
  std::atomic<bool> stopping{false};
  int tcp = -1, udp = -1;
  uint16_t port = 0;
  std::mutex report_mu;                          // done and log: one call at a time
  std::vector<std::unique_ptr<Client>> clients;  // the acceptor's
  std::vector<UdpClient> udp_clients;            // the UDP thread's
  size_t udp_last = 0;  // the UDP client of the last datagram: most datagrams come from it
  uint64_t udp_not_allowed_logged = 0;
  int64_t udp_not_allowed_log_ns = 0;
  std::unique_ptr<uint8_t[]> udp_buf{new uint8_t[kMaxMessage + 1]};
  std::thread acceptor, udp_thread;

  void log(const std::string& line) {
    std::lock_guard lock(report_mu);
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
      std::lock_guard lock(report_mu);
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

  // One TCP client's thread, until it leaves, fails, falls silent or the server stops.
  void serve_client(Client& c) {
    std::string why;
    bool left = false;
    while (why.empty() && !left) {
      if (stopping.load(std::memory_order_relaxed)) {
        why = "the server stopped";
        break;
      }
      const ssize_t r = ::recv(c.fd, c.buf.get(), kMaxMessage, 0);
      if (r > 0) {
        c.last_input_ns = now_ns();
        why = take(c, size_t(r));
        continue;
      }
      // The client closed, or reset: sockperf's clients close with their last pong unread,
      // which the kernel answers with a reset. A client leaving, not an error.
      if (r == 0 || errno == ECONNRESET) {
        left = true;
      } else if (errno != EAGAIN && errno != EINTR) {
        why = std::strerror(errno);
      } else if (now_ns() - c.last_input_ns > int64_t(opts.idle_timeout_ms) * 1'000'000) {
        why = "silent for " + std::to_string(opts.idle_timeout_ms) + " ms";
      }
    }
    if (c.framer.pending() > 0)
      why += (why.empty() ? "" : "; ") + std::string("stopped mid-message (") +
             std::to_string(c.framer.pending()) + " bytes held)";
    report(c.peer, Proto::tcp, &c.tally,
           why.empty() ? control::TestLog::Result::ok : control::TestLog::Result::error, why);
    ::close(c.fd);
    counts.closed.fetch_add(1, std::memory_order_relaxed);
    c.finished.store(true, std::memory_order_release);
  }

  // The n bytes just read into c.buf; returns the reason to drop the client, empty to keep it.
  std::string take(Client& c, size_t n) {
    bool send_failed = false;
    bool ok = c.framer.feed(c.buf.get(), n, [&](const Header& h, uint8_t* msg) {
      if (!send_failed && !handle(msg, h, c.fd, nullptr, 0, c.tally)) send_failed = true;
    });
    if (!ok) {
      counts.rejected.fetch_add(1, std::memory_order_relaxed);
      return "a header with " + to_string(c.framer.error()) + " (length " +
             std::to_string(c.framer.last_header().length) + ")";
    }
    if (send_failed)
      return "it took no pong within " + std::to_string(opts.send_timeout_ms) + " ms";
    return "";
  }

  void accept_one() {
    int fd = ::accept4(tcp, nullptr, nullptr, SOCK_CLOEXEC);
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
    reap();
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
    receive_within_tick(fd);
    auto c = std::make_unique<Client>();
    c->fd = fd;
    c->peer = peer;
    c->last_input_ns = now_ns();
    c->ticket = std::move(ticket);
    Client& raw = *c;
    try {
      raw.thread = std::thread([this, &raw] { serve_client(raw); });
    } catch (const std::system_error& e) {
      return refuse("limits", std::string("no thread for it: ") + e.what());
    }
    counts.connections.fetch_add(1, std::memory_order_relaxed);
    clients.push_back(std::move(c));
  }

  // Joins the client threads that ended.
  void reap() {
    for (size_t i = clients.size(); i-- > 0;) {
      if (!clients[i]->finished.load(std::memory_order_acquire)) continue;
      clients[i]->thread.join();
      clients.erase(clients.begin() + std::ptrdiff_t(i));
    }
  }

  void accept_loop() {
    while (!stopping.load(std::memory_order_relaxed)) {
      pollfd pf{tcp, POLLIN, 0};
      const int n = ::poll(&pf, 1, kTickMs);
      if (n < 0 && errno != EINTR) break;
      if (pf.revents & POLLIN) accept_one();
      reap();
    }
    stopping.store(true, std::memory_order_relaxed);
    for (auto& c : clients)
      c->thread.join();
    clients.clear();
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

  // UDP clients silent for udp_idle_ms have ended; datagrams and connections from outside
  // --allow are named once a second at most (a flood of them is one line a second).
  void udp_tick(int64_t now) {
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

  // Every datagram, each taken by one blocking recvfrom() and answered by one sendto().
  void udp_loop() {
    int64_t next_tick = now_ns() + int64_t(kTickMs) * 1'000'000;
    while (!stopping.load(std::memory_order_relaxed)) {
      sockaddr_storage from{};
      socklen_t len = sizeof from;
      const ssize_t r = ::recvfrom(udp, udp_buf.get(), kMaxMessage + 1, 0,
                                   reinterpret_cast<sockaddr*>(&from), &len);
      const int64_t now = now_ns();
      if (r >= 0) read_datagram(size_t(r), from, len, now);
      if (r < 0 || now >= next_tick) {
        udp_tick(now);
        next_tick = now + int64_t(kTickMs) * 1'000'000;
      }
    }
    while (!udp_clients.empty())
      end_udp(udp_clients.size() - 1, "the server stopped");
  }

  void read_datagram(size_t n, const sockaddr_storage& from, socklen_t len, int64_t now) {
    Header h;
    if (decode(udp_buf.get(), n, h) != HeaderStatus::ok || h.length != n) {
      counts.rejected.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    UdpClient* u = udp_client(from, len);
    if (!u) return;
    u->last_input_ns = now;
    handle(udp_buf.get(), h, udp, reinterpret_cast<const sockaddr*>(&from), len, u->tally);
  }
};

Server::Server(ServeOptions o) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.opts = std::move(o);
  SockAddr where = numeric_address(m.opts.bind, m.opts.port);
  m.tcp = control_socket::listen(where, 128);
  SockAddr bound = control_socket::local_address(m.tcp);
  m.port = bound.port();
  m.udp = ::socket(where.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (m.udp < 0 || ::bind(m.udp, bound.get(), bound.len) != 0) {
    const std::string err = std::strerror(errno);
    ::close(m.tcp);
    if (m.udp >= 0) ::close(m.udp);
    throw std::runtime_error("sockperf: UDP on " + bound.to_string() + ": " + err);
  }
  receive_within_tick(m.udp);
  m.clients.reserve(m.opts.max_clients);
  m.udp_clients.reserve(m.opts.max_udp_clients);
  m.acceptor = std::thread([&m] { m.accept_loop(); });
  try {
    m.udp_thread = std::thread([&m] { m.udp_loop(); });
  } catch (...) {
    m.stopping.store(true);
    m.acceptor.join();
    ::close(m.tcp);
    ::close(m.udp);
    throw;
  }
}

Server::~Server() {
  stop();
  if (impl_->acceptor.joinable()) impl_->acceptor.join();
  if (impl_->udp_thread.joinable()) impl_->udp_thread.join();
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
