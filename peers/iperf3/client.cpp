#include "peers/iperf3/client.hpp"

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <thread>

#include "bindings/workers.hpp"
#include "peers/iperf3/client_machine.hpp"
#include "platform/clock.hpp"
#include "platform/request_error.hpp"
#include "platform/topology.hpp"
#include "transports/api/control_socket.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/kind.hpp"

namespace mtperf::iperf3 {
namespace {

constexpr int kDrainTimeoutMs = 3000;  // the senders' last bytes acknowledged
// After this side's last byte and its FIN were acknowledged, the server may still hold bytes
// in its receive buffer; it stops counting at TEST_END, so they get this long to be read.
constexpr int kSettleMs = 50;
constexpr int kJoinTimeoutMs = 5000;  // after IPERF_DONE the server closes the streams
// UDP from the server: after TEST_END it sends nothing more, and what it sent before is read
// until no datagram has come for kQuietMs (at most kDrainTimeoutMs).
constexpr int kQuietMs = 20;

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd& operator=(Fd&&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void refuse(const std::string& why) {
  throw RequestError("--peer iperf3: " + why + "; " + kCanDo);
}

void send_all(int fd, const std::vector<uint8_t>& bytes, int64_t deadline) {
  size_t done = 0;
  while (done < bytes.size()) {
    pollfd p{fd, POLLOUT, 0};
    int n = ::poll(&p, 1, ms_until(deadline));
    if (n == 0) throw ProtocolError("the iperf3 server takes nothing on its control connection");
    if (n < 0 && errno == EINTR) continue;
    ssize_t w = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0)
      throw ProtocolError(std::string("the iperf3 control connection: ") + std::strerror(errno));
    done += size_t(w);
  }
}

// Feeds the machine from the control connection until it has an event, or the deadline.
ClientMachine::Event next_event(int fd, ClientMachine& m, int timeout_ms) {
  const int64_t deadline = deadline_in(timeout_ms);
  ClientMachine::Event e = m.feed({});
  uint8_t buf[16384];
  while (e == ClientMachine::Event::none) {
    std::vector<uint8_t> out = m.take_output();
    if (!out.empty()) send_all(fd, out, deadline);
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, ms_until(deadline));
    if (n == 0)
      throw ProtocolError("the iperf3 server sent nothing for " + std::to_string(timeout_ms) +
                          " ms while " + m.waiting_for() + " was awaited");
    if (n < 0 && errno == EINTR) continue;
    ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r < 0)
      throw ProtocolError(std::string("the iperf3 control connection: ") + std::strerror(errno));
    if (r == 0)
      throw ProtocolError("the iperf3 server closed the control connection while " +
                          m.waiting_for() + " was awaited");
    e = m.feed({buf, size_t(r)});
  }
  std::vector<uint8_t> out = m.take_output();
  if (!out.empty()) send_all(fd, out, deadline);
  return e;
}

ClientMachine::Event expect_event(int fd, ClientMachine& m, ClientMachine::Event want,
                                  int timeout_ms) {
  ClientMachine::Event e = next_event(fd, m, timeout_ms);
  if (e != want) throw ProtocolError("the iperf3 server skipped a step before " + m.waiting_for());
  return e;
}

// 32-bit counters (every 3.x's default) unless the test may send 2^31 datagrams a stream or
// more at its rate, where iperf3's 32-bit sequence would wrap: then 64 (udp_counters_64bit).
bool wide_counters(const TestSpec& spec, const ClientSettings& settings) {
  if (settings.udp_counters_64bit) return *settings.udp_counters_64bit;
  const double per_stream = spec.stream_rate_bps() / spec.flows / 8 / spec.stream_msg_size();
  return per_stream * (std::ceil(spec.duration_s) + spec.warmup_s + 1) >= double(1u << 31);
}

Params params_of(const TestSpec& spec, const ClientSettings& settings) {
  Params p;
  p.udp = spec.proto == Proto::udp;
  if (p.udp) {
    // iperf3's bandwidth is each stream's (-b applies to every stream of -P); --rate is the
    // test's, over all flows.
    p.bandwidth = uint64_t(spec.stream_rate_bps() / spec.flows);
    p.udp_counters_64bit = wide_counters(spec, settings);
  }
  p.omit_s = int64_t(spec.warmup_s);
  p.time_s = std::max<int64_t>(1, int64_t(std::ceil(spec.duration_s)));
  p.parallel = spec.flows;
  p.reverse = kind_of(spec.workload).server_sends();
  p.bidirectional = kind_of(spec.workload).both_ways();
  p.len = spec.stream_msg_size();
  p.window = std::max(spec.sock.sndbuf, spec.sock.rcvbuf);
  p.nodelay = spec.sock.nodelay;
  p.congestion = spec.sock.congestion;
  p.mss = spec.sock.mss;
  p.client_version = settings.client_version;
  p.get_server_output = settings.get_server_output;
  return p;
}

// Bytes written to a TCP socket and not yet acknowledged (SIOCOUTQ), and whether its FIN went
// out and was acknowledged: then every byte is in the server's receive buffer.
bool drained(int fd) {
  int queued = 0;
  if (::ioctl(fd, SIOCOUTQ, &queued) != 0) return true;  // cannot say: do not wait
  tcp_info ti{};
  socklen_t len = sizeof ti;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return true;
  const bool fin_acked = ti.tcpi_state == TCP_FIN_WAIT2 || ti.tcpi_state == TCP_TIME_WAIT ||
                         ti.tcpi_state == TCP_CLOSE;
  return queued == 0 && fin_acked;
}

void wait_drained(const std::vector<Fd>& senders) {
  const int64_t deadline = deadline_in(kDrainTimeoutMs);
  for (const Fd& s : senders) {
    while (!drained(s.fd) && now_ns() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(kSettleMs));
}

// One stream of this side's results, for the server's own report: the bytes it sent or
// received; UDP: a sender's datagrams, a receiver's as iperf3's receiver gives them (`packets`
// its highest sequence, from 1; `errors` the gaps below it; its jitter).
StreamResult stream_result(const TestSpec& spec, uint32_t flow, Role role, const CounterValues& c,
                           const UdpStats* udp) {
  StreamResult s;
  s.id = stream_id(flow);
  s.bytes = role == Role::sender ? c.bytes_sent : c.bytes_recv;
  if (spec.proto == Proto::udp && role == Role::sender) s.packets = int64_t(c.msgs_sent);
  if (udp && role == Role::receiver && udp->any) {
    s.packets = int64_t(udp->highest_seq + 1);
    s.errors = int64_t(udp->missing());
    s.jitter_s = udp->jitter_ns / 1e9;
  }
  s.end_time = spec.duration_s;
  return s;
}

Results results_base(const TestSpec& spec) {
  Results r;
  r.sender_has_retransmits = kind_of(spec.workload).server_sends() ? -1 : 0;
  return r;
}

// TCP: each stream's bytes so far, read while the flows still run.
Results own_results(const TestSpec& spec, const std::vector<FlowSlot*>& slots) {
  Results r = results_base(spec);
  for (const FlowSlot* f : slots)
    r.streams.push_back(
        stream_result(spec, f->id, f->role, CounterValues::read(f->counters), nullptr));
  return r;
}

// UDP: from the flows' results once they ended, a receiver's sequence accounting with them.
Results own_results(const TestSpec& spec, const SideResult& side) {
  Results r = results_base(spec);
  for (const FlowResult& f : side.flows)
    r.streams.push_back(stream_result(spec, f.id, f.role, f.total, &f.stats.udp));
  return r;
}

// The server's side as mtperf's report takes it: per flow its bytes, the sender's retransmits,
// and iperf3's process CPU (a percentage of one CPU over the test) as the process's CPU time.
SideResult server_side(const TestSpec& spec, const Results& res, double window_s) {
  SideResult s;
  s.side = Side::server;
  // No window of its own: iperf3's CPU is its process's, shown apart (report/peer.hpp), never
  // as mtperf's own CPU on the far side.
  s.window_s = 0;
  (void)window_s;
  (void)res.cpu_util_total;
  for (uint32_t i = 0; i < spec.flows_total(); ++i) {
    const int32_t id = stream_id(i);
    const StreamResult* st = nullptr;
    for (const StreamResult& x : res.streams)
      if (x.id == id) st = &x;
    if (!st) {
      s.errors.push_back("the iperf3 server's results have no stream " + std::to_string(id) +
                         " (flow " + std::to_string(i) + ")");
      continue;
    }
    FlowResult f;
    f.id = i;
    f.role = role_of(spec, i, Side::server);
    if (f.role == Role::sender) {
      f.total.bytes_sent = f.window.bytes_sent = st->bytes;
      if (spec.proto == Proto::udp)
        f.total.msgs_sent = f.window.msgs_sent = uint64_t(std::max<int64_t>(st->packets, 0));
      if (st->retransmits >= 0 && res.sender_has_retransmits == 1) {
        f.stats.tcp_retransmits = uint32_t(std::min<int64_t>(st->retransmits, UINT32_MAX));
        f.stats.tcp_info_valid = true;
        f.stats.congestion = res.congestion_used;
      }
    } else {
      f.total.bytes_recv = f.window.bytes_recv = st->bytes;
      if (spec.proto == Proto::udp) {
        // iperf3's receiver: `packets` is the highest sequence it saw, `errors` the gaps below
        // it (a late datagram takes one back), so it took packets - errors datagrams. Its
        // results carry no out-of-order count (3.12 prints one in its own report only).
        UdpStats& u = f.stats.udp;
        u.highest_seq = uint64_t(std::max<int64_t>(st->packets, 0));
        u.lost = uint64_t(std::max<int64_t>(st->errors, 0));
        u.received = u.highest_seq - std::min(u.highest_seq, u.lost);
        u.any = u.received > 0;
        u.jitter_ns = st->jitter_s * 1e9;
        f.total.msgs_recv = f.window.msgs_recv = u.received;
      }
    }
    s.flows.push_back(f);
  }
  return s;
}

// Connects every flow in iperf3's order (bidir: the senders, then the receivers), each greeted
// with the cookie. iperf3 needs them all: a flow that does not connect fails the test.
std::vector<std::unique_ptr<FlowSlot>> open_flows(const TestSpec& spec, Transport& transport,
                                                  const SockAddr& server, const Cookie& cookie,
                                                  bool wide, std::vector<Fd>& sender_fds,
                                                  int timeout_ms) {
  const bool udp = spec.proto == Proto::udp;
  // TCP: the cookie. UDP: 4 bytes each way, iperf3's ints in host order (protocol.hpp).
  auto bytes_of = [](uint32_t v) {
    std::vector<uint8_t> b(4);
    std::memcpy(b.data(), &v, 4);
    return b;
  };
  const std::vector<uint8_t> greeting =
      udp ? bytes_of(kUdpConnectMsg) : std::vector<uint8_t>(cookie.begin(), cookie.end());
  const std::vector<std::vector<uint8_t>> replies{bytes_of(kUdpConnectReply),
                                                  bytes_of(kLegacyUdpConnectReply)};
  const int64_t deadline = deadline_in(timeout_ms);
  SockAddr source;
  if (!spec.sock.source.empty()) source = control_socket::resolve(spec.sock.source, 0);
  std::vector<std::unique_ptr<FlowSlot>> flows;
  for (uint32_t i = 0; i < spec.flows_total(); ++i) {
    auto f = std::make_unique<FlowSlot>();
    f->id = i;
    f->role = role_of(spec, i, Side::client);
    f->proto = spec.proto;
    if (f->role == Role::sender) f->rate_bps = spec.stream_rate_bps() / spec.flows;
    if (udp) f->udp_wire = wide ? UdpWire::iperf3_64 : UdpWire::iperf3;
    FlowSetup setup = flow_setup(spec, i, 0, transport.caps());
    setup.greeting = &greeting;
    if (udp) setup.greeting_replies = &replies;
    try {
      f->endpoint = transport.connect(server, source, setup, deadline);
    } catch (const std::exception& e) {
      throw std::runtime_error("flow " + std::to_string(i) + " (iperf3 stream " +
                               std::to_string(stream_id(i)) + "): " + e.what());
    }
    if (f->role == Role::sender && !udp) sender_fds.emplace_back(f->endpoint->dup_stats_fd());
    flows.push_back(std::move(f));
  }
  return flows;
}

// Ends the runner on every way out of the test: an error from the server stops the flows.
struct RunnerGuard {
  Runner& r;
  bool joined = false;
  ~RunnerGuard() {
    if (!joined) {
      r.abort();
      r.join();
    }
  }
};

// The transport the test names, its options checked, probed usable here and created.
std::unique_ptr<Transport> usable_transport(const TestSpec& spec) {
  const TransportEntry& entry = find_transport(spec.transport);
  check_params(entry, spec.transport_params);
  ProbeResult probe = entry.probe("/");
  if (!probe.usable)
    throw std::runtime_error("transport " + spec.transport + " is not usable here: " + probe.why);
  return entry.create(spec.transport_params);
}

// The window: the server speaks now only to give up (an error, its end).
void watch_window(int ctl, ClientMachine& m, Runner& runner) {
  uint8_t buf[512];
  while (runner.clock().phase.load() != Phase::done && !runner.clock().abort.load()) {
    pollfd p{ctl, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    ssize_t r = ::recv(ctl, buf, sizeof buf, 0);
    if (r == 0) throw ProtocolError("the iperf3 server closed the control connection mid-test");
    if (r > 0) m.feed({buf, size_t(r)});
  }
}

// Before TEST_END, which stops the server's counting: what this side sent is given time to
// arrive.
void settle(const TestSpec& spec, const std::vector<Fd>& sender_fds) {
  if (!sender_fds.empty()) {
    wait_drained(sender_fds);
  } else if (spec.proto == Proto::udp) {
    // No acknowledgement to wait for: the server gets as long to read what is in its socket
    // buffer before TEST_END stops its counting. What it has not read by then is the tail the
    // report names (harness/peer_run.cpp).
    std::this_thread::sleep_for(std::chrono::milliseconds(kSettleMs));
  }
}

// After IPERF_DONE the server closes its streams: receivers here read to their end, or are
// aborted after kJoinTimeoutMs.
SideResult join_in_time(Runner& runner, RunnerGuard& guard) {
  std::thread watchdog;
  std::atomic<bool> joined{false};
  watchdog = std::thread([&] {
    const int64_t until = deadline_in(kJoinTimeoutMs);
    while (!joined.load() && now_ns() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!joined.load()) runner.abort();
  });
  SideResult side = runner.join();
  guard.joined = true;
  joined.store(true);
  watchdog.join();
  return side;
}

// UDP, after TEST_END (the server sends nothing after it): the datagrams still on their way are
// read until none has come for kQuietMs, then the receivers finish; a server that goes on
// sending is cut off at kDrainTimeoutMs.
void read_last_datagrams(const TestSpec& spec, Runner& runner) {
  if (kind_of(spec.workload).server_sends() || kind_of(spec.workload).both_ways()) {
    const int64_t deadline = deadline_in(kDrainTimeoutMs);
    uint64_t seen = runner.totals().msgs_recv;
    while (now_ns() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kQuietMs));
      const uint64_t now_seen = runner.totals().msgs_recv;
      if (now_seen == seen) break;
      seen = now_seen;
    }
  }
  runner.clock().finish.store(true);
}

// TEST_END .. IPERF_DONE, and the flows' end (into `side`). TCP: this side's results counted
// once the server asks for them, then the flows end as the server closes its streams. UDP: no
// stream has an end the server says, so the flows end first (their last datagrams read) and
// this side's results are the flows' own, the receivers' sequence accounting with them.
Results exchange_results(int ctl, ClientMachine& m, const TestSpec& spec, Runner& runner,
                         RunnerGuard& guard, const std::vector<FlowSlot*>& slots, SideResult& side,
                         int step) {
  m.end_test();
  expect_event(ctl, m, ClientMachine::Event::results_wanted, step);
  if (spec.proto == Proto::udp) {
    read_last_datagrams(spec, runner);
    side = join_in_time(runner, guard);
    m.give_results(own_results(spec, side));
  } else {
    m.give_results(own_results(spec, slots));
  }
  expect_event(ctl, m, ClientMachine::Event::done, step);  // IPERF_DONE goes out with it
  if (spec.proto != Proto::udp) side = join_in_time(runner, guard);
  return m.results();
}

}  // namespace

void check_request(const TestSpec& spec) {
  const WorkloadKind& kind = kind_of(spec.workload);
  if (kind.request_response || kind.per_transaction)
    refuse("iperf3 has no " + std::string(kind.name) + " (request/response) test");
  const TransportEntry& entry = find_transport(spec.transport);
  if (!entry.caps.peer_greeting || entry.line != nullptr)
    refuse("transport " + spec.transport + " cannot carry an iperf3 stream");
  if (spec.flows > kMaxStreams)
    refuse("-P " + std::to_string(spec.flows) + " is over iperf3's " + std::to_string(kMaxStreams) +
           " streams");
  if (spec.warmup_s != std::floor(spec.warmup_s))
    refuse("iperf3's warm-up (omit) is whole seconds; --warmup " + std::to_string(spec.warmup_s) +
           " is not");
  if (spec.verify_seed != 0) refuse("iperf3 does not check payloads (--verify)");
  if (!spec.server_cpus.empty()) refuse("iperf3 takes no server CPUs (--server-cpus)");
  if (spec.stop_on_error) refuse("iperf3 cannot stop on an error (--stop-on-error)");
  if (!spec.flow_servers.empty()) refuse("iperf3 listens on one address (no --adapters)");
}

Outcome run_test(const TestSpec& spec_in, const control::ClientOptions& opts,
                 const ClientSettings& settings, IntervalCallback on_interval) {
  TestSpec spec = spec_in;
  validate(spec);
  check_request(spec);
  std::unique_ptr<Transport> transport = usable_transport(spec);
  control_socket::raise_fd_limit();

  Outcome out;
  out.params = params_of(spec, settings);
  const int step = settings.step_timeout_ms;
  const SockAddr server = control_socket::resolve(opts.server, kDefaultPort);
  Fd ctl(control_socket::connect(server, opts.connect_timeout_ms));
  int one = 1;
  ::setsockopt(ctl.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ClientMachine m(out.params, make_cookie());
  using Event = ClientMachine::Event;

  const int64_t setup_start = now_ns();
  expect_event(ctl.fd, m, Event::create_streams, step);
  std::vector<Fd> sender_fds;
  auto flows = open_flows(spec, *transport, server, m.cookie(), out.params.udp_counters_64bit,
                          sender_fds, step);
  expect_event(ctl.fd, m, Event::test_start, step);
  expect_event(ctl.fd, m, Event::test_running, step);
  const double setup_s = double(now_ns() - setup_start) / 1e9;

  std::vector<FlowSlot*> slots;
  for (auto& f : flows)
    slots.push_back(f.get());
  Runner runner(spec, Side::client, *transport, run_worker, std::move(flows), opts.cpus);
  runner.set_adapters(adapter_irqs("/"));
  runner.set_interval_callback(std::move(on_interval));
  runner.start();
  RunnerGuard guard{runner};
  watch_window(ctl.fd, m, runner);
  settle(spec, sender_fds);
  out.server = exchange_results(ctl.fd, m, spec, runner, guard, slots, out.test.client, step);

  out.test.server = server_side(spec, out.server, out.test.client.window_s);
  out.test.transport_settings = transport->effective_settings();
  out.test.server_address = server.to_string();
  out.test.setup_s = setup_s;
  out.test.flows_asked = spec.flows_total();
  return out;
}

}  // namespace mtperf::iperf3
