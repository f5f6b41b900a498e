#include "peers/sockperf/client.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "peers/sockperf/protocol.hpp"
#include "platform/clock.hpp"
#include "platform/interrupt.hpp"
#include "platform/request_error.hpp"
#include "transports/api/control_socket.hpp"
#include "workloads/kind.hpp"

namespace mtperf::sockperf {
namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw RequestError("--peer sockperf: " + why + "; " + kCanDo);
}

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// Data-path results: no exception, no allocation; the caller names the failure.
enum class Io { ok, timeout, closed, failed };

Io send_all(int fd, const uint8_t* p, size_t n, int64_t deadline) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      p += w;
      n -= size_t(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno != EAGAIN)
      return errno == EPIPE || errno == ECONNRESET ? Io::closed : Io::failed;
    pollfd pf{fd, POLLOUT, 0};
    int64_t left = deadline - now_ns();
    if (left <= 0) return Io::timeout;
    if (::poll(&pf, 1, int(left / 1'000'000) + 1) == 0) return Io::timeout;
  }
  return Io::ok;
}

// Waits until fd is readable or the deadline passes.
Io wait_readable(int fd, int64_t deadline) {
  for (;;) {
    int64_t left = deadline - now_ns();
    if (left <= 0) return Io::timeout;
    pollfd pf{fd, POLLIN, 0};
    int n = ::poll(&pf, 1, int(left / 1'000'000) + 1);
    if (n > 0) return Io::ok;
    if (n < 0 && errno != EINTR) return Io::failed;
  }
}

std::string why(Io io, const char* doing, int timeout_ms) {
  switch (io) {
    case Io::ok:
      return "";
    case Io::timeout:
      return std::string("the sockperf server ") + doing + ": nothing for " +
             std::to_string(timeout_ms) + " ms";
    case Io::closed:
      return std::string("the sockperf server closed the connection ") + doing;
    case Io::failed:
      return std::string("the sockperf server ") + doing + ": " + std::strerror(errno);
  }
  return "";
}

struct Test {
  const TestSpec& spec;
  int fd;
  bool tcp;
  int step_ms;
  std::unique_ptr<uint8_t[]> msg, in;  // one message out; what comes back
  Outcome out;
  int64_t start = 0, window_start = 0, window_end = 0;
  Test(const TestSpec& s, int f, int step)
      : spec(s),
        fd(f),
        tcp(s.proto == Proto::tcp),
        step_ms(step),
        msg(new uint8_t[kMaxMessage]()),
        in(new uint8_t[kMaxMessage]) {}
};

// One ping-pong: message seq out, its pong back (older pongs are skipped: a UDP pong that came
// after its timeout). Returns the round trip, ns, or -1 for a UDP pong lost.
int64_t ping(Test& t, StreamFramer& framer, uint64_t seq) {
  const uint32_t size = t.out.msg_size;
  encode({seq, uint16_t(kFlagClient | kFlagPong), size}, t.msg.get());
  const int64_t sent_at = now_ns();
  Io io = send_all(t.fd, t.msg.get(), size, sent_at + int64_t(t.step_ms) * 1'000'000);
  if (io != Io::ok) throw ProtocolError(why(io, "took no message", t.step_ms));
  ++t.out.sent;
  ++t.out.pong_requests;
  const int wait_ms = t.tcp ? t.step_ms : std::max(1, int(t.spec.udp_timeout_s * 1000));
  const int64_t deadline = sent_at + int64_t(wait_ms) * 1'000'000;
  for (;;) {
    // One blocking read, bounded by SO_RCVTIMEO (run_test sets it to the same wait): a poll
    // before each read would add a system call to every round trip.
    ssize_t r = ::recv(t.fd, t.in.get(), kMaxMessage, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (now_ns() < deadline) continue;
      if (!t.tcp) return -1;
      throw ProtocolError(why(Io::timeout, "sent no pong", wait_ms));
    }
    if (r == 0) throw ProtocolError("the sockperf server closed the connection awaiting a pong");
    if (r < 0) throw ProtocolError(why(Io::failed, "sent no pong", wait_ms));
    int64_t rtt = -1;
    bool bad_seq = false;
    auto on_pong = [&](const Header& h, const uint8_t*) {
      if (h.seq == seq) rtt = now_ns() - sent_at;
      if (h.seq > seq) bad_seq = true;
    };
    if (t.tcp) {
      if (!framer.feed(t.in.get(), size_t(r), on_pong))
        throw ProtocolError("the sockperf server sent a header with " + to_string(framer.error()) +
                            " (length " + std::to_string(framer.last_header().length) + ")");
    } else {
      Header h;
      HeaderStatus st = decode(t.in.get(), size_t(r), h);
      if (st != HeaderStatus::ok)
        throw ProtocolError("the sockperf server sent a datagram with " + to_string(st));
      on_pong(h, t.in.get());
    }
    if (bad_seq)
      throw ProtocolError("the sockperf server answered message " + std::to_string(seq) +
                          " with a later sequence number");
    if (rtt >= 0) return rtt;
  }
}

void run_rr(Test& t) {
  StreamFramer framer(kMaxMessage);
  for (uint64_t seq = 1;; ++seq) {
    const int64_t now = now_ns();
    if (now >= t.window_end || interrupts() > 0) {
      t.out.interrupted = now < t.window_end;
      break;
    }
    const bool in_window = now >= t.window_start;
    int64_t rtt = ping(t, framer, seq);
    if (in_window) ++t.out.window_sent;
    if (rtt < 0) {
      ++t.out.lost;
      continue;
    }
    ++t.out.pongs;
    if (in_window) {
      ++t.out.window_pongs;
      t.out.latency.record(uint64_t(rtt));
    }
  }
}

// Under load (sockperf ul): messages at --rate, every kReplyEvery-th asking for a pong, awaited
// before the next goes. A schedule late by more than kCatchUpNs is moved on rather than caught up
// with a burst.
void run_under_load(Test& t) {
  constexpr int64_t kCatchUpNs = 10'000'000;
  StreamFramer framer(kMaxMessage);
  const uint32_t size = t.out.msg_size;
  const double per_msg_ns = size * 8.0 * 1e9 / t.spec.rate_bps;
  double due = double(t.start);
  for (uint64_t seq = 1;;) {
    const int64_t now = now_ns();
    if (now >= t.window_end || interrupts() > 0) {
      t.out.interrupted = now < t.window_end;
      break;
    }
    if (int64_t(due) > now) {
      if (int64_t(due) - now > 50'000) ::usleep(useconds_t((int64_t(due) - now) / 1000));
      continue;
    }
    due = std::max(due + per_msg_ns, double(now - kCatchUpNs));
    const bool in_window = now >= t.window_start;
    if (in_window) ++t.out.window_sent;
    if (seq % kReplyEvery == 0) {
      const int64_t rtt = ping(t, framer, seq);
      if (rtt < 0) {
        ++t.out.lost;
      } else {
        ++t.out.pongs;
        if (in_window) {
          ++t.out.window_pongs;
          t.out.latency.record(uint64_t(rtt));
        }
      }
    } else {
      encode({seq, kFlagClient, size}, t.msg.get());
      Io io = send_all(t.fd, t.msg.get(), size, now + int64_t(t.step_ms) * 1'000'000);
      if (io != Io::ok) throw ProtocolError(why(io, "took no message", t.step_ms));
      ++t.out.sent;
    }
    ++seq;
  }
}

// Throughput: batches of whole messages (TCP: up to 64 KiB a send), paced by --rate when given.
void run_stream(Test& t) {
  const uint32_t size = t.out.msg_size;
  const uint32_t batch = t.tcp ? std::max<uint32_t>(1, 65536 / size) : 1;
  std::unique_ptr<uint8_t[]> buf(new uint8_t[size_t(batch) * size]());
  const double per_msg_ns = t.spec.rate_bps > 0 ? size * 8.0 * 1e9 / t.spec.rate_bps : 0;
  uint64_t seq = 0;
  for (;;) {
    const int64_t now = now_ns();
    if (now >= t.window_end || interrupts() > 0) {
      t.out.interrupted = now < t.window_end;
      break;
    }
    if (per_msg_ns > 0) {
      const int64_t due = t.start + int64_t(double(seq) * per_msg_ns);
      if (due > now) {
        if (due - now > 50'000) ::usleep(useconds_t((due - now) / 1000));
        continue;
      }
    }
    for (uint32_t i = 0; i < batch; ++i)
      encode({seq + 1 + i, kFlagClient, size}, buf.get() + size_t(i) * size);
    Io io = send_all(t.fd, buf.get(), size_t(batch) * size, now + int64_t(t.step_ms) * 1'000'000);
    if (io != Io::ok) throw ProtocolError(why(io, "took no message", t.step_ms));
    seq += batch;
    t.out.sent += batch;
    if (now >= t.window_start) t.out.window_sent += batch;
  }
  if (!t.tcp) return;
  // sockperf sr closes a connection once it has read it to the end: then it counted every
  // message sent.
  ::shutdown(t.fd, SHUT_WR);
  const int64_t deadline = deadline_in(t.step_ms);
  for (;;) {
    Io io = wait_readable(t.fd, deadline);
    if (io != Io::ok)
      throw ProtocolError(why(io, "did not close after the last message", t.step_ms));
    ssize_t r = ::recv(t.fd, t.in.get(), kMaxMessage, MSG_DONTWAIT);
    if (r == 0) return;
    if (r < 0 && errno != EINTR && errno != EAGAIN) return;  // a reset after the end: read
  }
}

}  // namespace

uint32_t message_size(const TestSpec& spec) {
  // A pong is the message itself: rr's request and response sizes are one size (-r SIZE).
  const uint32_t asked = kind_of(spec.workload).request_response
                             ? std::max(spec.req_size, spec.resp_size)
                             : spec.msg_size;
  return asked > 1 ? asked : uint32_t(kHeaderBytes);
}

// sockperf's modes: ping-pong and under-load are transactions on one connection (rr), throughput
// is data one way, client to server (stream).
static bool ping_pong(const TestSpec& spec) {
  const WorkloadKind& k = kind_of(spec.workload);
  return k.request_response && !k.per_transaction;
}

void check_request(const TestSpec& spec) {
  const WorkloadKind& k = kind_of(spec.workload);
  if (!ping_pong(spec) && !(k.one_way() && !k.server_sends()))
    refuse("workload " + std::string(k.name) + " has no sockperf mode");
  if (spec.proto != Proto::tcp && spec.proto != Proto::udp)
    refuse("protocol " + std::string(to_string(spec.proto)) + " is not TCP or UDP");
  if (spec.transport != kDefaultTransport)
    refuse("this side speaks to sockperf over kernel sockets only (no --transport " +
           spec.transport + ")");
  if (spec.flows != 1) refuse("one flow only (-P 1)");
  const uint32_t size = message_size(spec);
  if (size < kHeaderBytes || size > kMaxMessage)
    refuse("a message of " + std::to_string(size) + " bytes is outside 14..65507");
  if (ping_pong(spec) && spec.req_size != spec.resp_size)
    refuse("a pong is the message itself: one size for both (-r SIZE)");
  if (ping_pong(spec) && spec.rate_bps > 0 && spec.rate_bps < 8.0 * size)
    refuse("under load (rr at --rate), the rate is at least one message a second (" +
           std::to_string(8 * size) + " bit/s for " + std::to_string(size) + "-byte messages)");
  if (spec.burst != 1) refuse("one message in flight (no --burst)");
  if (spec.verify_seed != 0) refuse("sockperf does not check payloads (--verify)");
  if (!spec.server_cpus.empty()) refuse("sockperf takes no server CPUs (--server-cpus)");
  if (spec.stop_on_error) refuse("sockperf cannot stop on an error (--stop-on-error)");
  if (!spec.flow_servers.empty()) refuse("sockperf listens on one address (no --adapters)");
}

Outcome run_test(const TestSpec& spec, const std::string& server, int connect_timeout_ms,
                 int step_timeout_ms) {
  check_request(spec);
  SockAddr addr = control_socket::resolve(server, kDefaultPort);
  const bool tcp = spec.proto == Proto::tcp;
  int fd;
  if (tcp) {
    fd = control_socket::connect(addr, connect_timeout_ms);
  } else {
    fd = ::socket(addr.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, addr.get(), addr.len) != 0)
      throw std::runtime_error("UDP socket to " + addr.to_string() + ": " + std::strerror(errno));
  }
  Fd guard(fd);
  if (tcp) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as sockperf's client
  }
  const int wait_ms = tcp ? step_timeout_ms : std::max(1, int(spec.udp_timeout_s * 1000));
  timeval tv{wait_ms / 1000, (wait_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  Test t(spec, fd, step_timeout_ms);
  t.out.msg_size = message_size(spec);
  t.start = now_ns();
  t.window_start = t.start + int64_t(spec.warmup_s * 1e9);
  t.window_end = t.window_start + int64_t(spec.duration_s * 1e9);
  if (ping_pong(spec) && spec.rate_bps > 0)
    run_under_load(t);
  else if (ping_pong(spec))
    run_rr(t);
  else
    run_stream(t);
  const int64_t end = std::min(now_ns(), t.window_end);
  t.out.window_s = end > t.window_start ? double(end - t.window_start) / 1e9 : 0;
  return std::move(t.out);
}

}  // namespace mtperf::sockperf
