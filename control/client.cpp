#include "control/client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <optional>
#include <thread>

#include "bindings/workers.hpp"
#include "control/link.hpp"
#include "control/policy.hpp"
#include "control/protocol.hpp"
#include "control/routes.hpp"
#include "control/side_json.hpp"
#include "platform/clock.hpp"
#include "platform/file_limit.hpp"
#include "platform/host_limits.hpp"
#include "platform/topology.hpp"
#include "transports/api/control_socket.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/json_field.hpp"
#include "workloads/memory.hpp"

namespace mtperf::control {
namespace {

constexpr int kSetupTimeoutMs = 10000;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Fills spec.flow_servers from the server's addresses (in WELCOME, or with a key in AUTHORIZED):
// each flow goes to the server's address on the subnet of its source address.
void route_flows(TestSpec& spec, const ClientOptions& opts, const Message& listing,
                 std::vector<std::string>& sources) {
  auto it = listing.body.find("addresses");
  if (it == listing.body.end())
    throw ProtocolError("the server does not list its addresses; it cannot serve --adapters");
  std::vector<InterfaceAddress> server;
  try {
    server = addresses_from_json(*it);
  } catch (const std::invalid_argument& e) {
    throw ProtocolError("server's " + std::string(to_string(listing.type)) + ": " + e.what());
  }
  auto local = interface_addresses();
  spec.flow_servers.clear();
  for (uint32_t i = 0; i < spec.flows_total(); ++i) {
    const std::string& src = opts.flow_sources[i % opts.flow_sources.size()];
    sources.push_back(src);
    spec.flow_servers.push_back(server_address_for(find_local(src, local), server));
  }
}

// The file and port limits of the flows, checked before the TEST request: after READY the
// flows connect at once.
void check_flow_limits(const TestSpec& spec, const SockAddr& server, bool server_in_process) {
  const uint32_t n = spec.flows_total();
  const std::string what = std::to_string(n) + (n == 1 ? " flow" : " flows");
  // Each flow's connection, and the one a server in this process accepts for it (its listeners
  // close as their flows are accepted). The runners' TCP_INFO copies come on top where they fit
  // (Runner: read_tcp_info).
  ensure_open_files((server_in_process ? 2 : 1) * uint64_t(n), what);
  // A server on this host binds a listener to a local port for each flow while the flows
  // connect from others of the same range; crr's connections come and go one at a time.
  if (server.is_loopback() && !kind_of(spec.workload).per_transaction)
    check_local_ports(2 * uint64_t(n), what + " to a server on this host");
}

// Connects every flow. A flow whose connect fails fails the test with need_all; otherwise it is
// left out and named in `failed`, and the test goes on with the others (not with none).
std::vector<std::unique_ptr<FlowSlot>> open_flows(const TestSpec& spec, Transport& transport,
                                                  const SockAddr& server,
                                                  const nlohmann::json& ready,
                                                  const std::vector<std::string>& sources,
                                                  bool need_all, std::vector<FlowFailure>& failed) {
  auto ports = ready.at("ports").get<std::vector<uint16_t>>();
  uint64_t cookie = ready.at("cookie").get<uint64_t>();
  if (ports.size() != spec.flows_total()) {
    throw ProtocolError("READY lists " + std::to_string(ports.size()) + " ports for " +
                        std::to_string(spec.flows_total()) + " flows");
  }
  int64_t deadline = deadline_in(kSetupTimeoutMs);
  std::vector<std::unique_ptr<FlowSlot>> flows;
  for (uint32_t i = 0; i < spec.flows_total(); ++i) {
    auto f = std::make_unique<FlowSlot>();
    f->id = i;
    f->role = role_of(spec, i, Side::client);
    f->proto = spec.proto;
    if (f->role == Role::sender) f->rate_bps = spec.stream_rate_bps() / spec.flows;
    if (f->role == Role::crr_client) f->conn_rate = spec.conn_rate / spec.flows;
    SockAddr remote = spec.flow_servers.empty() ? server : numeric_address(spec.flow_servers[i], 0);
    remote.set_port(ports[i]);
    SockAddr source;
    if (!sources.empty()) {
      source = numeric_address(sources[i], 0);
    } else if (!spec.sock.source.empty()) {
      source = control_socket::resolve(spec.sock.source, 0);
    }
    try {
      f->endpoint = transport.connect(remote, source, flow_setup(spec, i, cookie, transport.caps()),
                                      deadline);
    } catch (const std::exception& e) {
      if (need_all) throw std::runtime_error("flow " + std::to_string(i) + ": " + e.what());
      failed.push_back({i, e.what()});
      continue;
    }
    flows.push_back(std::move(f));
  }
  if (flows.empty()) {
    throw std::runtime_error("no flow connected (" + std::to_string(failed.size()) +
                             " tried): flow " + std::to_string(failed.front().flow) + ": " +
                             failed.front().error);
  }
  return flows;
}

// START: the flows that did not connect, so that the server stops waiting for them.
nlohmann::json start_body(const std::vector<FlowFailure>& failed) {
  nlohmann::json body = nlohmann::json::object();
  if (failed.empty()) return body;
  std::vector<uint32_t> ids;
  for (const FlowFailure& f : failed)
    ids.push_back(f.flow);
  body["not_connected"] = not_connected_to_json(ids);
  // The server reads at most kMaxRequestBody; scattered failures of very many flows would not
  // fit (a few thousand ranges), and such a test has no meaning left anyway.
  if (body.dump().size() + 64 > kMaxRequestBody) {
    throw std::runtime_error(std::to_string(failed.size()) + " of the flows did not connect, " +
                             "scattered too widely to name them to the server; first: flow " +
                             std::to_string(failed.front().flow) + ": " + failed.front().error);
  }
  return body;
}

// What a local run may spend here: the memory budget, and a congestion control this host
// allows (a privileged process naming an unknown one would make the kernel load a module).
void check_local_limits(const TestSpec& spec, const ClientOptions& opts, const Transport& t) {
  uint64_t limit = opts.max_memory;
  if (limit == 0) {
    uint64_t total = 0;
    try {
      total = mem_total_bytes();
    } catch (const std::exception&) {
      total = 0;  // no /proc/meminfo: the fixed default
    }
    limit = default_test_memory(total);
  }
  check_memory(test_memory(spec, t), limit, spec, t.caps(), "here", "mtperf run --max-memory");
  if (spec.sock.congestion.empty()) return;
  std::vector<std::string> allowed;
  try {
    allowed = congestion_controls(privileged_network());
  } catch (const std::exception&) {
    return;  // no /proc/sys here: the kernel decides
  }
  check_congestion(spec.sock.congestion, allowed);
}

// --stop-on-error: the server's STOP, the only frame it sends while the test runs, read on a
// thread of its own and passed to the runner, which ends the client's window as on SIGINT.
class StopListener {
 public:
  StopListener(Link& ctl, Runner& runner)
      : thread_([this, &ctl, &runner] { listen(ctl, runner); }) {}
  ~StopListener() {
    done_.store(true);
    thread_.join();
  }
  StopListener(const StopListener&) = delete;
  StopListener& operator=(const StopListener&) = delete;

 private:
  void listen(Link& ctl, Runner& runner) {
    while (!done_.load()) {
      pollfd p{ctl.fd(), POLLIN, 0};
      int n = ::poll(&p, 1, 50);
      if (n == 0 || (n < 0 && errno == EINTR)) continue;
      if (n < 0) return;
      try {
        Message m = recv_message(ctl, kMaxRequestBody, kSetupTimeoutMs);
        if (m.type == MsgType::stop) runner.stop_early(stop_from(m.body));
      } catch (const std::exception&) {
        // The server went away: the flows see it too, and DONE/RESULT says what happened.
      }
      return;
    }
  }
  static EarlyStop stop_from(const nlohmann::json& body) {
    EarlyStop s;
    s.cause = StopCause::error;
    try {
      if (json_field::string(body.at("cause"), "STOP.cause", 16) == "verify")
        s.cause = StopCause::verify;
      s.at_s = json_field::number(body.at("at_s"), "STOP.at_s");
      s.why = "server: " + json_field::string(body.at("reason"), "STOP.reason", 256);
    } catch (const std::exception& e) {
      s.why = std::string("server: a failure (its STOP was malformed: ") + e.what() + ")";
    }
    return s;
  }

  std::atomic<bool> done_{false};
  std::thread thread_;
};

// The server's RESULT. With stop_on_error a STOP may come first: the server's window failed as
// the client's was ending, after the listener had gone.
Message expect_result(Link& fd, bool stop_on_error) {
  int64_t deadline = deadline_in(kSetupTimeoutMs + 30000);
  if (!stop_on_error) return expect_until(fd, MsgType::result, kMaxResultBody, deadline);
  for (int skipped = 0;; ++skipped) {
    Message m = recv_message_until(fd, kMaxResultBody, deadline);
    if (m.type != MsgType::stop || skipped > 0) return check_type(m, MsgType::result);
  }
}

// The client's side of the test once it ran, hearing the server's STOP meanwhile when asked to.
SideResult join_listening(Runner& runner, Link& ctl_fd, bool stop_on_error) {
  std::optional<StopListener> listener;
  if (stop_on_error) listener.emplace(ctl_fd, runner);
  return runner.join();
}

// HELLO .. WELCOME (.. AUTH, AUTHORIZED with a key): the message that lists the server's
// addresses. With a key the server must prove it first (WELCOME's proof over both nonces): a
// server that does not ask for the key, or cannot prove it, is refused, never run against
// unauthenticated. From AUTH on, every frame is sealed (link.hpp).
Message greet(Link& ctl, const ClientOptions& opts, const std::string& where,
              std::string& challenge) {
  const std::string nonce = random_hex(16);
  Message welcome;
  try {
    send_message(ctl, {MsgType::hello, {{"version", kVersion}, {"nonce", nonce}}}, kSetupTimeoutMs);
    welcome = expect(ctl, MsgType::welcome, kMaxRequestBody, kSetupTimeoutMs);
  } catch (const ProtocolError& e) {
    // Told apart where the bytes allow: silence, a close, or bytes that are not mtperf's.
    const std::string what = e.what();
    if (what.find("timed out") != std::string::npos) {
      throw ProtocolError("the server at " + where + " sent nothing within " +
                          std::to_string(kSetupTimeoutMs / 1000) +
                          " s of the HELLO: is an mtperf server (mtperf serve) listening there, "
                          "or another program?");
    }
    if (what.find("bad frame magic") != std::string::npos) {
      throw ProtocolError("the server at " + where +
                          " does not speak mtperf's control protocol (its first bytes are not "
                          "an mtperf frame): another program on that port? (--peer names the "
                          "tools mtperf can run against)");
    }
    throw ProtocolError("the server at " + where + ": " + what);
  }
  auto c = welcome.body.find("challenge");
  if (c == welcome.body.end()) {
    if (!opts.key.empty()) {
      throw ProtocolError("authentication failed: the server at " + where +
                          " does not ask for a key, and this client has one: refusing to run "
                          "unauthenticated (is it the server you meant, started with its key?)");
    }
    return welcome;
  }
  if (opts.key.empty()) {
    throw ProtocolError("the server at " + where +
                        " wants a key: give it with --key-file FILE or MTPERF_KEY");
  }
  challenge = nonce_field(welcome.body, "challenge", "server's WELCOME");
  std::string proof;
  json_field::optional(welcome.body, "server's WELCOME", "proof", proof);
  if (!mac_matches(proof, prove(opts.key, "server", nonce, challenge))) {
    throw ProtocolError("authentication failed: the server at " + where +
                        " did not prove it has the key (a different key, or not the server you "
                        "meant): refusing to go on");
  }
  send_message(ctl, {MsgType::auth, {{"mac", auth_mac(opts.key, challenge)}}}, kSetupTimeoutMs);
  ctl.seal(opts.key, true, nonce, challenge);
  return expect(ctl, MsgType::authorized, kMaxRequestBody, kSetupTimeoutMs);
}

// The transport the test names, its options checked, probed usable here and created.
std::unique_ptr<Transport> usable_transport(const TestSpec& spec) {
  const TransportEntry& entry = find_transport(spec.transport);
  check_params(entry, spec.transport_params);
  ProbeResult probe = entry.probe("/");
  if (!probe.usable) {
    throw std::runtime_error("transport " + spec.transport + " is not usable here: " + probe.why);
  }
  return entry.create(spec.transport_params);
}

// TEST's body: the test, and with a key its MAC over the server's challenge.
nlohmann::json test_message(const TestSpec& spec, const ClientOptions& opts,
                            const std::string& challenge) {
  nlohmann::json test = {{"test", spec}};
  if (!challenge.empty()) test["mac"] = test_mac(opts.key, challenge, test["test"]);
  return test;
}

// The runner's view of this host (the adapters' interrupts, the flows' netdevs), then its start.
void start_runner(Runner& runner, const TestSpec& spec, IntervalCallback on_interval,
                  const std::vector<std::string>& sources, const Link& ctl) {
  runner.set_adapters(adapter_irqs("/"));
  runner.set_interval_callback(std::move(on_interval));
  runner.set_stop_on_error(spec.stop_on_error);
  runner.set_netdevs(flow_netdevs(sources, ctl.fd()));
  runner.start();
}

// DONE .. RESULT: the server's side of the test.
SideResult server_result(Link& ctl, const SideResult& client, bool stop_on_error) {
  Message result;
  try {
    send_message(ctl, {MsgType::done, nlohmann::json::object()}, kSetupTimeoutMs);
    result = expect_result(ctl, stop_on_error);
  } catch (const ProtocolError& e) {
    // The server went away during the test: what the flows saw of it says more.
    if (client.errors.empty()) throw;
    throw ProtocolError(client.errors.front() + " (the server is gone: " + e.what() + ")");
  }
  try {
    return side_from_json(result.body);
  } catch (const std::invalid_argument& e) {
    throw ProtocolError(std::string("server's RESULT: ") + e.what());
  }
}

}  // namespace

TestOutcome run_test(const TestSpec& spec_in, const ClientOptions& opts,
                     IntervalCallback on_interval) {
  TestSpec spec = spec_in;
  validate(spec);
  std::unique_ptr<Transport> transport = usable_transport(spec);
  check_local_limits(spec, opts, *transport);
  control_socket::raise_fd_limit();

  SockAddr server = control_socket::resolve(opts.server, kDefaultPort);
  Fd ctl_fd;
  ctl_fd.fd = control_socket::connect(server, opts.connect_timeout_ms);
  Link ctl(ctl_fd.fd);
  std::string challenge;
  Message listing = greet(ctl, opts, server.to_string(), challenge);
  std::vector<std::string> sources;
  if (!opts.flow_sources.empty()) {
    route_flows(spec, opts, listing, sources);
    validate(spec);
  }
  const nlohmann::json test = test_message(spec, opts, challenge);
  check_flow_limits(spec, server, opts.server_in_process);
  const int64_t setup_start_ns = now_ns();
  send_message(ctl, {MsgType::test, test}, kSetupTimeoutMs);
  Message ready = expect(ctl, MsgType::ready, kMaxRequestBody, kSetupTimeoutMs);
  std::vector<FlowFailure> failed;
  auto flows = open_flows(spec, *transport, server, ready.body, sources, opts.need_all, failed);
  const double setup_s = double(now_ns() - setup_start_ns) / 1e9;

  send_message(ctl, {MsgType::start, start_body(failed)}, kSetupTimeoutMs);
  expect(ctl, MsgType::started, kMaxRequestBody, kSetupTimeoutMs);
  // The runner, and with it the flows, stays until the server's RESULT is in.
  Runner runner(spec, Side::client, *transport, run_worker, std::move(flows), opts.cpus);
  start_runner(runner, spec, std::move(on_interval), sources, ctl);
  TestOutcome out;
  out.client = join_listening(runner, ctl, spec.stop_on_error);
  out.transport_settings = transport->effective_settings();
  out.server_address = server.to_string();
  out.setup_s = setup_s;
  out.flows_asked = spec.flows_total();
  out.not_connected = std::move(failed);
  out.flow_sources = std::move(sources);
  out.flow_servers = spec.flow_servers;
  out.server = server_result(ctl, out.client, spec.stop_on_error);
  return out;
}

}  // namespace mtperf::control
