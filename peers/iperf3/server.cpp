#include "peers/iperf3/server.hpp"

#include <arpa/inet.h>
#include <endian.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "peers/iperf3/server_machine.hpp"
#include "platform/clock.hpp"
#include "transports/api/control_socket.hpp"
#include "workloads/job.hpp"
#include "workloads/udp_header.hpp"

namespace mtperf::iperf3 {

namespace {

using Clock = std::chrono::steady_clock;

// iperf3's error numbers (iperf_api.h) this server answers with.
constexpr int32_t kErrBlockSize = 7;        // IEBLOCKSIZE
constexpr int32_t kErrRecvParams = 114;     // IERECVPARAMS
constexpr int32_t kErrSetMss = 123;         // IESETMSS
constexpr int32_t kErrSetWindow = 130;      // IESETWINDOWSIZE
constexpr int32_t kErrProtocol = 131;       // IEPROTOCOL
constexpr int32_t kErrSetCongestion = 134;  // IESETCONGESTION
constexpr int32_t kErrAuthTest = 142;
constexpr int32_t kErrUdpBlockSize = 20;  // IEUDPBLOCKSIZE       // IEAUTHTEST

constexpr uint32_t kDefaultTcpLen = 128 * 1024;  // iperf3's TCP default block
constexpr uint32_t kDefaultUdpLen = 1460;        // and UDP's, when a client sends none
constexpr double kDefaultUdpRate = 1e6;          // bits/s a UDP stream sends at without -b
constexpr uint64_t kTestOverhead = 64 * 1024;    // control buffers, stream table

// Refused before the test: logged with its step, the client told with SERVER_ERROR.
struct Refusal : std::runtime_error {
  Refusal(std::string_view at, const std::string& why) : std::runtime_error(why), step(at) {}
  std::string_view step;
};

int ms_until(Clock::time_point t) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return int(std::clamp<long long>(d, 0, 200));
}

std::string seconds(int ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f s", ms / 1000.0);
  return b;
}

void set_nonblocking(int fd) {
  int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0) ::fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

double thread_cpu_s(double* user, double* sys) {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  *user = double(u.ru_utime.tv_sec) + u.ru_utime.tv_usec / 1e6;
  *sys = double(u.ru_stime.tv_sec) + u.ru_stime.tv_usec / 1e6;
  return *user + *sys;
}

int64_t total_retrans(int fd) {
  tcp_info ti{};
  socklen_t len = sizeof ti;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return 0;
  return int64_t(ti.tcpi_total_retrans);
}

// An unconnected UDP socket on `where`, sharing its port with the sockets already connected.
int udp_socket(const SockAddr& where) {
  const int fd = ::socket(where.family(), SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw std::runtime_error(std::string("UDP socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, where.get(), where.len) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::runtime_error("UDP " + where.to_string() + ": " + std::strerror(e));
  }
  return fd;
}

// The address without its port ("127.0.0.1", "[::1]").
std::string host_of(const SockAddr& a) {
  const std::string s = a.to_string();
  return s.substr(0, s.rfind(':'));
}

struct Stream {
  int fd = -1;
  bool sender = false;
  bool open = true;
  uint64_t bytes = 0, omit_bytes = 0;
  int64_t retrans_at_omit = 0;
  uint32_t off = 0;      // where a TCP sender is in its block
  uint64_t packets = 0;  // UDP: the datagrams a sender sent
  // UDP: a receiver's sequence accounting, mtperf's own receivers' (iperf_udp.c's: the highest
  // sequence, the gaps below it as lost, a late datagram taking one back and counted out of
  // order, RFC 1889's jitter).
  UdpStats udp;
};

// One received datagram's header into the stream's counts (no allocation, no exception). One
// without a whole header, or with sequence 0, is not an iperf3 stream's: its bytes alone count.
void count_datagram(Stream& s, const uint8_t* d, size_t n, bool counters64) {
  if (n < iperf3_udp_header_bytes(counters64)) return;
  const UdpHeader h = read_iperf3_udp_header(reinterpret_cast<const std::byte*>(d), counters64);
  if (h.seq > 0) s.udp.count(h.seq - 1, now_ns() - h.send_ns);
}

// One test's streams and what they moved, from the streams' start to the results: the data
// loop's state, allocated before the test starts.
struct Transfer {
  Transfer(const Params& params, uint32_t streams_n, uint32_t block)
      : p(params),
        n(streams_n),
        len(block),
        c64(params.udp_counters_64bit),
        send_buf(block, uint8_t(0x5a)),
        recv_buf(block),
        streams(streams_n),
        polls(streams_n + 1) {}
  const Params& p;
  const uint32_t n;    // streams
  const uint32_t len;  // bytes one send or receive moves at most
  const bool c64;      // UDP datagrams carry 64-bit sequence numbers
  std::vector<uint8_t> send_buf, recv_buf;
  std::vector<Stream> streams;
  std::vector<pollfd> polls;  // [0]: the control connection; [i + 1]: streams[i]
  double rate_bytes_s = 0;    // each sender's; 0: unpaced
  Clock::time_point start, omit_end, end_by, last_moved, drain_by, stopped;
  // The streams' measured end: TEST_END's arrival, or the last byte read after it.
  Clock::time_point received_until;
  bool omitting = false;
  double u0 = 0, s0 = 0, cpu0 = 0;  // this thread's CPU seconds (user, system, both) at the start
  double u1 = 0, s1 = 0, cpu1 = 0;  // and once the streams are drained
};

// However the test ends, the log has what the streams moved and no stream stays open.
struct CloseStreams {
  std::vector<Stream>& s;
  control::TestLog& log;
  ~CloseStreams() {
    log.bytes_sent = log.bytes_recv = 0;
    for (Stream& x : s) {
      (x.sender ? log.bytes_sent : log.bytes_recv) += x.bytes;
      if (x.fd >= 0) ::close(x.fd);
    }
  }
};

TestSpec spec_of(const Params& p) {
  TestSpec spec;
  spec.workload = p.bidirectional ? Workload::bidir
                  : p.reverse     ? Workload::maerts
                                  : Workload::stream;
  spec.proto = p.udp ? Proto::udp : Proto::tcp;
  spec.transport.clear();  // iperf3's streams are the server's own kernel sockets
  spec.flows = uint32_t(p.parallel);
  spec.duration_s = double(p.time_s);
  return spec;
}

// The warm-up's end: what the streams moved until now is not counted.
void end_warm_up(Transfer& t) {
  t.omitting = false;
  for (Stream& s : t.streams) {
    s.omit_bytes = s.bytes;
    if (s.sender) s.retrans_at_omit = total_retrans(s.fd);
  }
}

// A sender ahead of its rate waits (no POLLOUT); returns the poll's timeout in ms.
int pace_senders(Transfer& t, Clock::time_point now) {
  int timeout = 200;
  if (t.rate_bytes_s > 0) {
    const double allowed = t.rate_bytes_s * std::chrono::duration<double>(now - t.start).count();
    for (uint32_t i = 0; i < t.n; ++i) {
      if (!t.streams[i].sender || !t.streams[i].open) continue;
      const bool ahead = double(t.streams[i].bytes) >= allowed;
      t.polls[i + 1].events = ahead ? 0 : POLLOUT;
      if (ahead) timeout = 1;
    }
  }
  return timeout;
}

// Every datagram waiting on a UDP receiver, up to 64 a wake-up.
void receive_datagrams(Transfer& t, Stream& s, Clock::time_point now) {
  for (int k = 0; k < 64; ++k) {
    const ssize_t got = ::recv(s.fd, t.recv_buf.data(), t.len, MSG_DONTWAIT);
    if (got <= 0) break;  // EAGAIN, or an ICMP error from a client gone: it may come back
    s.bytes += uint64_t(got);
    count_datagram(s, t.recv_buf.data(), size_t(got), t.c64);
    t.last_moved = now;
  }
}

// A TCP receiver's read: what has come, up to one block (-l) a wake-up, as iperf3's server
// reads (its Nread loop): what arrives while the thread copies is taken in the same wake-up,
// so the thread polls and sleeps less per byte (each sleep costs the sending side a wake-up),
// and one busy stream still leaves the others and the control connection their turn.
void receive_block(Transfer& t, Stream& s, pollfd& poll, Clock::time_point now) {
  uint32_t read = 0;
  while (read < t.len) {
    const ssize_t got = ::recv(s.fd, t.recv_buf.data(), t.len - read, MSG_DONTWAIT);
    if (got > 0) {
      read += uint32_t(got);
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else {
      if (got == 0 || errno != EAGAIN) {
        s.open = false;  // the client closed it (or reset it): the test goes on without it
        poll.fd = -1;
      }
      break;
    }
  }
  if (read == 0) return;
  s.bytes += read;
  t.last_moved = now;
}

// One send on a sender that poll found ready: a TCP stream's rest of its block, or a datagram.
void send_once(Transfer& t, Stream& s, pollfd& poll, Clock::time_point now) {
  if (t.p.udp)
    write_iperf3_udp_header(reinterpret_cast<std::byte*>(t.send_buf.data()), s.packets + 1,
                            now_ns(), t.c64);
  const ssize_t got = ::send(s.fd, t.send_buf.data() + s.off, t.len - s.off, MSG_NOSIGNAL);
  if (got > 0) {
    s.bytes += uint64_t(got);
    s.off = uint32_t((s.off + uint64_t(got)) % t.len);
    if (t.p.udp) ++s.packets;
    t.last_moved = now;
  } else if (t.p.udp && got < 0 && errno != EAGAIN && errno != EINTR) {
    // A UDP sender's ICMP errors (the client's socket closed at its TEST_END) end nothing.
  } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
    s.open = false;  // the client closed it (or reset it): the test goes on without it
    poll.fd = -1;
  }
}

void serve_streams(Transfer& t, Clock::time_point now) {
  for (uint32_t i = 0; i < t.n; ++i) {
    Stream& s = t.streams[i];
    if (!s.open || t.polls[i + 1].revents == 0) continue;
    if (s.sender)
      send_once(t, s, t.polls[i + 1], now);
    else if (t.p.udp)
      receive_datagrams(t, s, now);
    else
      receive_block(t, s, t.polls[i + 1], now);
  }
}

// A receiver's bytes after TEST_END, as they come; false once it has nothing more to give.
bool read_after_end(Transfer& t, Stream& s) {
  const ssize_t got = ::recv(s.fd, t.recv_buf.data(), t.len, MSG_DONTWAIT);
  if (got <= 0) return got < 0 && (errno == EAGAIN || errno == EINTR);
  s.bytes += uint64_t(got);
  if (t.p.udp) count_datagram(s, t.recv_buf.data(), size_t(got), t.c64);
  t.received_until = Clock::now();
  return true;
}

// After TEST_END. What the client wrote before its TEST_END is still on its way: the receiving
// streams are read until all of them have been quiet for 20 ms (at most 2 s), so that both sides
// count the same bytes. They are polled together, so that the quiet is waited for once, not
// once a stream, and the measured time ends at the last byte read (or TEST_END), not after the
// quiet: the rates the client is told are not lowered by this side's wait.
void drain(Transfer& t) {
  t.drain_by = Clock::now() + std::chrono::seconds(2);
  // A sender stops here and says so (FIN), as iperf3's server closes its streams at TEST_END:
  // its client, reading whole blocks on blocking sockets after TEST_END, waits for the rest of
  // a block until then.
  for (Stream& s : t.streams)
    if (s.sender && s.open) ::shutdown(s.fd, SHUT_WR);
  t.polls[0].fd = -1;  // the control connection waits for the results
  for (uint32_t i = 0; i < t.n; ++i) {
    const Stream& s = t.streams[i];
    t.polls[i + 1] = {s.sender || !s.open ? -1 : s.fd, POLLIN, 0};
  }
  while (Clock::now() < t.drain_by && ::poll(t.polls.data(), t.polls.size(), 20) > 0) {
    for (uint32_t i = 0; i < t.n; ++i)
      if (t.polls[i + 1].fd >= 0 && t.polls[i + 1].revents != 0 && !read_after_end(t, t.streams[i]))
        t.polls[i + 1].fd = -1;  // closed, or an error: nothing more comes on it
  }
  t.stopped = Clock::now();
  t.cpu1 = thread_cpu_s(&t.u1, &t.s1);
}

// The client's results name what each of its sending streams wrote. Without a warm-up that is
// what this side must have read; a byte still on its way (a client descheduled when the drain
// found its streams quiet) is read now, within the same 2 s bound.
void read_late_bytes(Transfer& t, const Results& client) {
  for (uint32_t i = 0; i < t.n; ++i) {
    Stream& s = t.streams[i];
    if (s.sender || !s.open) continue;
    uint64_t target = 0;
    for (const StreamResult& c : client.streams)
      if (c.id == stream_id(i)) target = c.bytes;
    while (s.bytes < target && Clock::now() < t.drain_by + std::chrono::seconds(2)) {
      pollfd q{s.fd, POLLIN, 0};
      if (::poll(&q, 1, 20) <= 0) continue;
      const ssize_t got = ::recv(s.fd, t.recv_buf.data(), t.len, MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) break;
      if (got > 0) s.bytes += uint64_t(got);
    }
  }
}

StreamResult stream_result(const Transfer& t, uint32_t i, double measured) {
  const Stream& s = t.streams[i];
  StreamResult x;
  x.id = stream_id(i);
  x.bytes = s.bytes - s.omit_bytes;
  x.retransmits = s.sender && !t.p.udp ? total_retrans(s.fd) - s.retrans_at_omit : -1;
  if (t.p.udp) {
    // A receiver's `packets` is the highest sequence it saw (from 1), as iperf3's.
    x.packets = s.sender ? int64_t(s.packets) : s.udp.any ? int64_t(s.udp.highest_seq + 1) : 0;
    x.errors = s.sender ? 0 : int64_t(s.udp.missing());
    x.jitter_s = s.udp.jitter_ns / 1e9;
  }
  x.start_time = 0;
  x.end_time = measured;
  return x;
}

// This side's results, and the text iperf3 --get-server-output shows.
Results results_of(const Transfer& t, const std::string& peer) {
  const double wall = std::max(1e-6, std::chrono::duration<double>(t.stopped - t.start).count());
  Results r;
  r.cpu_util_total = 100 * (t.cpu1 - t.cpu0) / wall;
  r.cpu_util_user = 100 * (t.u1 - t.u0) / wall;
  r.cpu_util_system = 100 * (t.s1 - t.s0) / wall;
  const bool any_sender =
      std::any_of(t.streams.begin(), t.streams.end(), [](const Stream& s) { return s.sender; });
  r.sender_has_retransmits = any_sender ? (t.p.udp ? 0 : 1) : -1;
  char cc[32] = {};
  socklen_t cc_len = sizeof cc - 1;
  if (t.n > 0 && ::getsockopt(t.streams[0].fd, IPPROTO_TCP, TCP_CONGESTION, cc, &cc_len) == 0)
    r.congestion_used = std::string(cc, strnlen(cc, cc_len));
  const double measured = std::max(
      1e-6,
      std::chrono::duration<double>(t.received_until - (t.p.omit_s > 0 ? t.omit_end : t.start))
          .count());
  std::string text = "Accepted connection from " + peer + " (mtperf serve --iperf3)\n";
  for (uint32_t i = 0; i < t.n; ++i) {
    r.streams.push_back(stream_result(t, i, measured));
    const StreamResult& x = r.streams.back();
    char line[160];
    std::snprintf(line, sizeof line, "[%3d] %8.2f s %14llu bytes %10.2f Mbits/sec  %s\n", x.id,
                  measured, static_cast<unsigned long long>(x.bytes),
                  double(x.bytes) * 8 / measured / 1e6,
                  t.streams[i].sender ? "sender" : "receiver");
    text += line;
  }
  if (t.p.get_server_output) r.server_output_text = text;
  return r;
}

// Refused as iperf3 refuses a connection: its ACCESS_DENIED state, then closed.
void deny(int fd) {
  const uint8_t denied = byte_of(State::access_denied);
  [[maybe_unused]] ssize_t w = ::send(fd, &denied, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(fd);
}

}  // namespace

struct Server::Test {
  const ServeOptions* opts = nullptr;
  control::Admission* admission = nullptr;
  const std::atomic<bool>* stop = nullptr;
  int server_wake = -1;
  int ctrl = -1;
  std::string peer;
  Cookie cookie{};
  Clock::time_point accepted;
  std::atomic<bool> finished{false}, admitted{false};
  std::thread thread;
  std::mutex mu;  // the streams as the accept thread hands them over
  bool accepting = false;
  uint32_t expected = 0;
  std::vector<std::pair<uint64_t, int>> arrived;  // (accept order, fd)
  int wake = -1;                                  // eventfd: a stream arrived
  std::timed_mutex* udp_mu = nullptr;             // the server's, for UDP streams
  int* udp_fd = nullptr;
  bool udp_ok = false;  // the server has its UDP socket (read once: udp_fd changes under udp_mu)
  SockAddr where;

  ~Test() {
    if (ctrl >= 0) ::close(ctrl);
    for (auto& a : arrived)
      ::close(a.second);
    if (wake >= 0) ::close(wake);
  }

  void check_stop() const {
    if (stop->load()) throw std::runtime_error("the server is stopping");
  }
  // Sends everything the machine queued, by `deadline`.
  void send_out(ServerMachine& m, Clock::time_point deadline) {
    const std::vector<uint8_t> out = m.take_output();
    size_t off = 0;
    while (off < out.size()) {
      ssize_t n = ::send(ctrl, out.data() + off, out.size() - off, MSG_NOSIGNAL);
      if (n > 0) {
        off += size_t(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EINTR)
        throw std::runtime_error(std::string("control connection: ") + std::strerror(errno));
      check_stop();
      if (Clock::now() >= deadline)
        throw std::runtime_error("the client took in nothing of the server's " +
                                 std::to_string(out.size()) + " bytes before the deadline");
      pollfd p{ctrl, POLLOUT, 0};
      ::poll(&p, 1, ms_until(deadline));
    }
  }
  // Reads the control connection until the machine has an event, by `deadline`.
  ServerMachine::Event next(ServerMachine& m, Clock::time_point deadline, int budget_ms) {
    for (;;) {
      const ServerMachine::Event e = m.feed({});
      if (e != ServerMachine::Event::none) return e;
      check_stop();
      if (Clock::now() >= deadline)
        throw Refusal("handshake", "the client sent not all of " + m.waiting_for() + " within " +
                                       seconds(budget_ms));
      pollfd p{ctrl, POLLIN, 0};
      if (::poll(&p, 1, ms_until(deadline)) <= 0) continue;
      uint8_t buf[4096];
      ssize_t n = ::recv(ctrl, buf, sizeof buf, 0);
      if (n == 0)
        throw Refusal("handshake", "the client closed the control connection while " +
                                       m.waiting_for() + " was awaited");
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        throw std::runtime_error(std::string("control connection: ") + std::strerror(errno));
      }
      const ServerMachine::Event got = m.feed({buf, size_t(n)});
      if (got != ServerMachine::Event::none) return got;
    }
  }

  // The test, from the parameters to IPERF_DONE; throws Refusal for a test refused before it
  // ran, another exception for one that failed.
  void run(control::TestLog& log);
  // run, then the log line through opts->done; on the test's own thread.
  void run_and_report(control::TestLog& log);

  // run's steps, in their order.
  Params read_params(ServerMachine& m, Clock::time_point deadline);
  // Tells the client why (SERVER_ERROR with iperf3's error numbers) and throws Refusal.
  [[noreturn]] void refuse(ServerMachine& m, int32_t code, int32_t err, std::string_view at,
                           const std::string& why);
  control::Admission::Ticket admit(ServerMachine& m, const Params& p, uint32_t n, uint32_t len);
  void take_udp_streams(uint32_t n, Clock::time_point deadline, int hs, ServerMachine& m);
  void take_tcp_streams(uint32_t n, Clock::time_point deadline, int hs, ServerMachine& m);
  void configure_stream(const Stream& s, const Params& p, ServerMachine& m);
  void hand_over(Transfer& t, ServerMachine& m);
  void begin_test(ServerMachine& m, Transfer& t, control::TestLog& log);
  void move_data(ServerMachine& m, Transfer& t);
  bool read_control(ServerMachine& m, Transfer& t, Clock::time_point now);
};

void Server::Test::take_udp_streams(uint32_t n, Clock::time_point deadline, int hs,
                                    ServerMachine& m) {
  // CREATE_STREAMS only once this test has the UDP port to itself: its client's greetings are
  // then the only ones that come.
  std::unique_lock lock(*udp_mu, std::defer_lock);
  while (!lock.try_lock_for(std::chrono::milliseconds(200))) {
    check_stop();
    if (Clock::now() >= deadline)
      throw Refusal("handshake", "other tests' UDP streams took the port until the deadline");
  }
  m.create_streams();
  send_out(m, deadline);
  const std::string host = host_of(control_socket::peer_address(ctrl));
  while (arrived.size() < n) {
    check_stop();
    if (Clock::now() >= deadline)
      throw Refusal("handshake", std::to_string(arrived.size()) + " of " + std::to_string(n) +
                                     " UDP streams connected within " + seconds(hs));
    pollfd w[2] = {{*udp_fd, POLLIN, 0}, {ctrl, POLLIN, 0}};
    if (::poll(w, 2, ms_until(deadline)) <= 0) continue;
    if (w[1].revents) {
      uint8_t b[64];
      const ssize_t got = ::recv(ctrl, b, sizeof b, MSG_DONTWAIT);
      if (got == 0)
        throw Refusal("handshake", "the client closed the control connection before its " +
                                       std::to_string(n) + " UDP streams connected");
      if (got > 0) m.feed({b, size_t(got)});  // throws: nothing is the client's turn now
    }
    if (w[0].revents == 0) continue;
    uint32_t msg = 0;
    SockAddr from;
    from.len = sizeof from.ss;
    const ssize_t got = ::recvfrom(*udp_fd, &msg, sizeof msg, MSG_DONTWAIT, from.get(), &from.len);
    // Anything but a greeting from the client's host is not this test's.
    if (got != 4 || msg != kUdpConnectMsg || host_of(from) != host) continue;
    const int fd = *udp_fd;
    if (::connect(fd, from.get(), from.len) != 0)
      throw std::runtime_error(std::string("UDP stream: connect: ") + std::strerror(errno));
    *udp_fd = udp_socket(where);
    arrived.emplace_back(arrived.size(), fd);
    const uint32_t reply = kUdpConnectReply;
    if (::send(fd, &reply, sizeof reply, MSG_NOSIGNAL) != 4)
      throw std::runtime_error(std::string("UDP stream: ") + std::strerror(errno));
  }
}

// The test's parameters, or iperf3's own answer to ones that are malformed, mistyped or too big.
Params Server::Test::read_params(ServerMachine& m, Clock::time_point deadline) {
  const int hs = opts->handshake_timeout_ms;
  try {
    if (next(m, deadline, hs) != ServerMachine::Event::params)
      throw std::logic_error("iperf3 server: parameters expected");
  } catch (const ProtocolError& e) {
    m.refuse(kErrRecvParams, 0);
    send_out(m, Clock::now() + std::chrono::milliseconds(hs));
    throw Refusal("test", e.what());
  }
  return m.params();
}

void Server::Test::refuse(ServerMachine& m, int32_t code, int32_t err, std::string_view at,
                          const std::string& why) {
  m.refuse(code, err);
  send_out(m, Clock::now() + std::chrono::milliseconds(opts->handshake_timeout_ms));
  throw Refusal(at, why);
}

// The test's memory, taken from the server's admission once its parameters are within policy.
control::Admission::Ticket Server::Test::admit(ServerMachine& m, const Params& p, uint32_t n,
                                               uint32_t len) {
  if (p.authtoken)
    refuse(m, kErrAuthTest, 0, "auth",
           "the client asked for authentication (iperf3 --username); this server has no iperf3 "
           "users");
  if (p.udp && !udp_ok)
    refuse(m, kErrProtocol, 0, "test", "UDP is not served here: its port could not be bound");
  if (p.udp && (len < 16 || len > 65507))
    refuse(m, kErrUdpBlockSize, 0, "test",
           "UDP datagrams of " + std::to_string(len) + " bytes (16..65507 are served)");
  // One send and one receive buffer serve every stream (what is sent is never looked at, what is
  // received is dropped).
  const uint64_t memory = 2 * uint64_t(len) + kTestOverhead + uint64_t(n) * 512;
  if (memory > opts->max_memory)
    refuse(m, kErrBlockSize, 0, "limits",
           "the test needs " + format_bytes(memory) + ", over the " +
               format_bytes(opts->max_memory) + " one test may take (--max-memory)");
  try {
    return admission->admit(memory);
  } catch (const control::ProtocolError& e) {
    m.deny();
    send_out(m, Clock::now() + std::chrono::milliseconds(opts->handshake_timeout_ms));
    throw Refusal("busy", e.what());
  }
}

// Every TCP stream within the same deadline; the control connection may only close meanwhile.
void Server::Test::take_tcp_streams(uint32_t n, Clock::time_point deadline, int hs,
                                    ServerMachine& m) {
  m.create_streams();
  send_out(m, deadline);
  for (;;) {
    {
      std::lock_guard lock(mu);
      if (arrived.size() >= n) {
        accepting = false;
        return;
      }
    }
    check_stop();
    if (Clock::now() >= deadline) {
      std::lock_guard lock(mu);
      accepting = false;
      throw Refusal("handshake", std::to_string(arrived.size()) + " of " + std::to_string(n) +
                                     " streams connected within " + seconds(hs));
    }
    pollfd w[2] = {{wake, POLLIN, 0}, {ctrl, POLLIN, 0}};
    if (::poll(w, 2, ms_until(deadline)) <= 0) continue;
    if (w[0].revents) {
      uint64_t v;
      [[maybe_unused]] ssize_t r = ::read(wake, &v, sizeof v);
    }
    if (w[1].revents) {
      uint8_t b[64];
      ssize_t got = ::recv(ctrl, b, sizeof b, MSG_DONTWAIT);
      if (got == 0)
        throw Refusal("handshake", "the client closed the control connection before its " +
                                       std::to_string(n) + " streams connected");
      if (got > 0) m.feed({b, size_t(got)});  // throws: nothing is the client's turn now
    }
  }
}

// A stream's socket options, as the client asked for them.
void Server::Test::configure_stream(const Stream& s, const Params& p, ServerMachine& m) {
  set_nonblocking(s.fd);
  const int one = 1;
  if (p.nodelay && !p.udp) ::setsockopt(s.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (p.window > 0) {
    const int w = int(p.window);
    if (::setsockopt(s.fd, SOL_SOCKET, SO_SNDBUF, &w, sizeof w) != 0 ||
        ::setsockopt(s.fd, SOL_SOCKET, SO_RCVBUF, &w, sizeof w) != 0)
      refuse(m, kErrSetWindow, errno, "limits", "cannot set the window of " + std::to_string(w));
  }
  if (p.mss > 0 && !p.udp) {
    const int v = int(p.mss);
    if (::setsockopt(s.fd, IPPROTO_TCP, TCP_MAXSEG, &v, sizeof v) != 0)
      refuse(m, kErrSetMss, errno, "test", "cannot set the MSS to " + std::to_string(v));
  }
  if (!p.congestion.empty() && !p.udp &&
      ::setsockopt(s.fd, IPPROTO_TCP, TCP_CONGESTION, p.congestion.data(),
                   socklen_t(p.congestion.size())) != 0)
    refuse(m, kErrSetCongestion, errno, "test",
           "congestion control " + p.congestion + ": " + std::strerror(errno));
}

// The arrived streams, in the order they connected, become the test's; `arrived` keeps their
// descriptors until every one is set up.
void Server::Test::hand_over(Transfer& t, ServerMachine& m) {
  std::sort(arrived.begin(), arrived.end());
  for (uint32_t i = 0; i < t.n; ++i) {
    Stream& s = t.streams[i];
    s.fd = arrived[i].second;
    // iperf3's server: with --bidir the first -P streams are its receivers, the rest senders.
    s.sender = t.p.bidirectional ? i >= uint32_t(t.p.parallel) : t.p.reverse;
    configure_stream(s, t.p, m);
    t.polls[i + 1] = {s.fd, short(s.sender ? POLLOUT : POLLIN), 0};
  }
  t.polls[0] = {ctrl, POLLIN, 0};
  for (auto& a : arrived)
    a.second = -1;  // the streams own them now
}

void Server::Test::begin_test(ServerMachine& m, Transfer& t, control::TestLog& log) {
  const Params& p = t.p;
  const int hs = opts->handshake_timeout_ms;
  m.start_test();
  send_out(m, Clock::now() + std::chrono::milliseconds(hs));
  log.counted = true;
  t.start = Clock::now();
  t.omit_end = t.start + std::chrono::seconds(p.omit_s);
  t.omitting = p.omit_s > 0;
  t.end_by = p.time_s > 0 ? t.start + std::chrono::seconds(p.omit_s + p.time_s) +
                                std::chrono::milliseconds(hs)
                          : Clock::time_point::max();
  t.last_moved = t.start;
  t.cpu0 = thread_cpu_s(&t.u0, &t.s0);
  // -b is each stream's rate, as in iperf3 (UDP: 1 Mbit/s without it; TCP: unpaced).
  t.rate_bytes_s = (p.bandwidth > 0 ? double(p.bandwidth) : p.udp ? kDefaultUdpRate : 0) / 8;
}

// The control connection during the test: whether the client's TEST_END came.
bool Server::Test::read_control(ServerMachine& m, Transfer& t, Clock::time_point now) {
  uint8_t b[64];
  const ssize_t got = ::recv(ctrl, b, sizeof b, MSG_DONTWAIT);
  if (got == 0)
    throw std::runtime_error("the client closed the control connection during the test");
  if (got < 0) return false;
  const bool ended = m.feed({b, size_t(got)}) == ServerMachine::Event::test_end;
  t.last_moved = now;
  if (ended) t.received_until = Clock::now();  // `now` is from before the poll that woke for it
  return ended;
}

// The test itself: the streams move data until the client's TEST_END.
void Server::Test::move_data(ServerMachine& m, Transfer& t) {
  const int hs = opts->handshake_timeout_ms;
  bool ended = false;
  while (!ended) {
    const Clock::time_point now = Clock::now();
    if (t.omitting && now >= t.omit_end) end_warm_up(t);
    const int timeout = pace_senders(t, now);
    ::poll(t.polls.data(), t.polls.size(), timeout);
    check_stop();
    serve_streams(t, now);
    if (t.polls[0].revents != 0) ended = read_control(m, t, now);
    if (!ended && (now >= t.end_by || now - t.last_moved > std::chrono::milliseconds(hs)))
      throw std::runtime_error("no TEST_END from the client, and nothing moved for " + seconds(hs));
  }
}

void Server::Test::run(control::TestLog& log) {
  const int hs = opts->handshake_timeout_ms;
  const Clock::time_point deadline = accepted + std::chrono::milliseconds(hs);
  ServerMachine m;
  send_out(m, deadline);
  const Params p = read_params(m, deadline);
  log.spec = spec_of(p);
  const uint32_t n = uint32_t(p.parallel) * (p.bidirectional ? 2 : 1);
  const uint32_t len = p.len > 0 ? uint32_t(p.len) : p.udp ? kDefaultUdpLen : kDefaultTcpLen;
  control::Admission::Ticket ticket = admit(m, p, n, len);
  admitted.store(true);
  Transfer t(p, n, len);
  if (p.udp) take_udp_streams(n, deadline, hs, m);
  {
    std::lock_guard lock(mu);
    expected = n;
    accepting = !p.udp;
  }
  if (!p.udp) take_tcp_streams(n, deadline, hs, m);
  hand_over(t, m);
  const CloseStreams closer{t.streams, log};
  arrived.clear();

  begin_test(m, t, log);
  move_data(m, t);
  drain(t);
  const Clock::time_point results_by = Clock::now() + std::chrono::milliseconds(hs);
  m.ask_results();
  send_out(m, results_by);
  if (next(m, results_by, hs) != ServerMachine::Event::results)
    throw std::logic_error("iperf3 server: results expected");
  if (p.omit_s == 0 && !p.udp) read_late_bytes(t, m.client_results());
  m.give_results(results_of(t, peer));
  send_out(m, results_by);
  if (next(m, results_by, hs) != ServerMachine::Event::done)
    throw std::logic_error("iperf3 server: IPERF_DONE expected");
}

Server::Server(ServeOptions opts, control::Admission& admission)
    : opts_(std::move(opts)), admission_(admission) {
  control_socket::raise_fd_limit();
  SockAddr where = control_socket::resolve(opts_.bind, opts_.port);
  listen_fd_ = control_socket::listen(where, 128);
  port_ = control_socket::local_address(listen_fd_).port();
  set_nonblocking(listen_fd_);
  where_ = where;
  where_.set_port(port_);
  try {
    udp_fd_ = udp_socket(where_);
  } catch (const std::exception&) {
    udp_fd_ = -1;  // UDP tests are refused, named
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    ::close(listen_fd_);
    throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  }
  thread_ = std::thread([this] { accept_loop(); });
}

Server::~Server() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  reap(true);
  ::close(listen_fd_);
  ::close(wake_fd_);
  if (udp_fd_ >= 0) ::close(udp_fd_);
}

void Server::reap(bool all) {
  std::list<std::unique_ptr<Test>> done;
  {
    std::lock_guard lock(mu_);
    for (auto it = tests_.begin(); it != tests_.end();) {
      if (all || (*it)->finished.load()) {
        done.push_back(std::move(*it));
        it = tests_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& t : done)
    if (t->thread.joinable()) t->thread.join();
}

struct Server::Pending {
  int fd = -1;
  uint64_t seq = 0;
  Clock::time_point deadline;
  Cookie cookie{};
  size_t got = 0;
  std::string peer;
};

void Server::refused(const std::string& peer, std::string_view at, std::string why) {
  control::TestLog log;
  log.client = peer;
  log.protocol = "iperf3";
  log.result = control::TestLog::Result::refused;
  log.refused_at = at;
  log.why = std::move(why);
  if (opts_.done) opts_.done(log);
}

bool Server::give_stream(int fd, uint64_t seq, const Cookie& cookie, uint32_t& handshaking) {
  for (auto& t : tests_) {
    if (t->cookie == cookie && !t->finished.load()) {
      std::lock_guard tl(t->mu);
      if (t->accepting && t->arrived.size() < t->expected) {
        t->arrived.emplace_back(seq, fd);
        uint64_t one = 1;
        [[maybe_unused]] ssize_t w = ::write(t->wake, &one, sizeof one);
      } else {
        deny(fd);  // a stream the test did not ask for: refused as iperf3 refuses it
      }
      return true;
    }
    if (!t->finished.load() && !t->admitted.load()) ++handshaking;
  }
  return false;
}

std::unique_ptr<Server::Test> Server::new_test(int fd, const Cookie& cookie,
                                               const std::string& peer) {
  auto t = std::make_unique<Test>();
  t->opts = &opts_;
  t->admission = &admission_;
  t->stop = &stop_;
  t->server_wake = wake_fd_;
  t->ctrl = fd;
  t->peer = peer;
  t->cookie = cookie;
  t->accepted = Clock::now();
  t->wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  t->udp_mu = &udp_mu_;
  t->udp_fd = &udp_fd_;
  t->udp_ok = udp_fd_ >= 0;  // set once, before any test runs
  t->where = where_;
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return t;
}

void Server::Test::run_and_report(control::TestLog& log) {
  try {
    if (wake < 0) throw std::runtime_error("eventfd: out of descriptors");
    run(log);
    log.result = control::TestLog::Result::ok;
  } catch (const Refusal& e) {
    log.result = control::TestLog::Result::refused;
    log.refused_at = e.step;
    log.why = e.what();
  } catch (const std::exception& e) {
    log.result = log.counted ? control::TestLog::Result::error : control::TestLog::Result::refused;
    if (!log.counted) log.refused_at = "handshake";
    log.why = e.what();
  }
  if (opts->done) opts->done(log);
  finished.store(true);
  uint64_t v = 1;
  [[maybe_unused]] ssize_t w = ::write(server_wake, &v, sizeof v);
}

void Server::dispatch(int fd, uint64_t seq, const Cookie& cookie, const std::string& peer) {
  std::lock_guard lock(mu_);
  uint32_t handshaking = 0;
  if (give_stream(fd, seq, cookie, handshaking)) return;
  if (handshaking >= opts_.max_pending) {
    deny(fd);
    refused(peer, "pending",
            std::to_string(handshaking) + " iperf3 tests are in their handshake (--max-pending)");
    return;
  }
  std::unique_ptr<Test> t = new_test(fd, cookie, peer);
  control::TestLog log;
  log.client = peer;
  log.protocol = "iperf3";
  Test* raw = t.get();
  try {
    raw->thread = std::thread([raw, log]() mutable { raw->run_and_report(log); });
  } catch (const std::system_error& e) {  // no thread to be had: refused, nothing kept
    refused(peer, "limits",
            std::string("the server cannot start a thread for the test: ") + e.what());
    return;  // t's destructor closes the connection
  }
  tests_.push_back(std::move(t));
}

struct Server::Accepting {
  std::vector<Pending> pending;  // connections whose cookie is not read yet
  std::vector<pollfd> polls;     // the listening socket, wake_fd_, then each pending connection
  uint64_t seq = 0;              // the next connection's, in the order they are accepted
};

void Server::refuse_pending(const Pending& q, std::string_view at, std::string why) {
  ::close(q.fd);
  refused(q.peer, at, std::move(why));
}

void Server::read_cookies(Accepting& a) {
  const Clock::time_point now = Clock::now();
  std::vector<Pending> still;
  for (size_t i = 0; i < a.pending.size(); ++i) {
    Pending& q = a.pending[i];
    if (a.polls[i + 2].revents) {
      const ssize_t got = ::recv(q.fd, q.cookie.data() + q.got, kCookieBytes - q.got, 0);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        refuse_pending(
            q, "handshake",
            "closed before its whole cookie (" + std::to_string(q.got) + " of 37 bytes)");
        continue;
      }
      if (got > 0) q.got += size_t(got);
    }
    if (q.got == kCookieBytes) {
      if (!valid_cookie(q.cookie)) {
        refuse_pending(q, "handshake",
                       "not an iperf3 cookie (36 characters of [a-z2-7] and a NUL)");
        continue;
      }
      dispatch(q.fd, q.seq, q.cookie, q.peer);
      continue;
    }
    if (now >= q.deadline) {
      refuse_pending(q, "handshake",
                     "sent " + std::to_string(q.got) + " of the cookie's 37 bytes within " +
                         seconds(opts_.handshake_timeout_ms));
      continue;
    }
    still.push_back(std::move(q));
  }
  a.pending.swap(still);
}

// Whether --allow lets the connection's peer in; `peer` is its address, for the log.
bool Server::allowed_peer(int fd, std::string& peer) const {
  try {
    const SockAddr a = control_socket::peer_address(fd);
    peer = a.to_string();
    return control::allowed(opts_.allow, a);
  } catch (const std::exception&) {
    peer = "(unknown peer)";
    return opts_.allow.empty();
  }
}

void Server::accept_new(Accepting& a) {
  for (int k = 0; k < 64; ++k) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    Pending q;
    q.fd = fd;
    q.seq = a.seq++;
    q.deadline = Clock::now() + std::chrono::milliseconds(opts_.handshake_timeout_ms);
    if (!allowed_peer(fd, q.peer)) {
      refuse_pending(q, "allow", "not from a network in --allow");
      continue;
    }
    if (a.pending.size() >= opts_.max_pending) {  // the oldest makes room
      refuse_pending(a.pending.front(), "pending",
                     "dropped for a newer connection (--max-pending " +
                         std::to_string(opts_.max_pending) + ")");
      a.pending.erase(a.pending.begin());
    }
    a.pending.push_back(std::move(q));
  }
}

void Server::accept_loop() {
  Accepting a;
  while (!stop_.load()) {
    reap(false);
    a.polls.clear();
    a.polls.push_back({listen_fd_, POLLIN, 0});
    a.polls.push_back({wake_fd_, POLLIN, 0});
    Clock::time_point soonest = Clock::now() + std::chrono::milliseconds(200);
    for (const Pending& q : a.pending) {
      a.polls.push_back({q.fd, POLLIN, 0});
      soonest = std::min(soonest, q.deadline);
    }
    ::poll(a.polls.data(), a.polls.size(), ms_until(soonest));
    if (a.polls[1].revents) {
      uint64_t v;
      [[maybe_unused]] ssize_t r = ::read(wake_fd_, &v, sizeof v);
    }
    read_cookies(a);
    if (a.polls[0].revents != 0) accept_new(a);
  }
  for (Pending& q : a.pending)
    ::close(q.fd);
}

}  // namespace mtperf::iperf3
