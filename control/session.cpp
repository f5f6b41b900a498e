#include "control/session.hpp"

#include <openssl/rand.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <mutex>

#include "bindings/workers.hpp"
#include "control/policy.hpp"
#include "control/protocol.hpp"
#include "control/routes.hpp"
#include "control/side_json.hpp"
#include "platform/file_limit.hpp"
#include "platform/topology.hpp"
#include "transports/api/control_socket.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/kind.hpp"
#include "workloads/memory.hpp"

namespace mtperf::control {
namespace {

std::string mac_of(const Message& m) {
  auto it = m.body.find("mac");
  return it != m.body.end() && it->is_string() ? it->get<std::string>() : std::string();
}

constexpr int kSetupTimeoutMs = 10000;

uint64_t random_u64() {
  uint64_t v = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&v), sizeof v) != 1)
    throw std::runtime_error("no random bytes from OpenSSL");
  return v;
}

enum class Wake { flow, control, timeout };

// Waits until a flow's socket is readable (Wake::flow), the client's START arrives
// (Wake::control, with watch_control) or the deadline passes, watching the control connection
// meanwhile: when it ends (the client vanished after READY, or abort() shut it down) the session
// gives up at once instead of holding its sockets until the deadline.
Wake wait_for_flow(int fd, int control_fd, int64_t deadline_ns, bool watch_control) {
  for (;;) {
    pollfd p[2] = {{fd, POLLIN, 0}, {control_fd, POLLIN, 0}};
    int n = ::poll(p, watch_control ? 2 : 1, ms_until(deadline_ns));
    if (n == 0) return Wake::timeout;
    if (n < 0) {
      if (errno == EINTR) continue;
      return Wake::timeout;
    }
    bool control_data = false;
    if (watch_control && p[1].revents != 0) {
      char c;
      ssize_t r = recv(control_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
        throw ProtocolError("the client closed the control connection during set-up");
      }
      control_data = r > 0;
    }
    if (p[0].revents != 0) return Wake::flow;
    if (control_data) return Wake::control;
  }
}

}  // namespace

ServerSession::ServerSession(int control_fd, const ServerOptions& opts, Admission& admission,
                             const SharedKey& key)
    : fd_(control_fd), link_(control_fd), opts_(opts), admission_(admission), key_(key) {
  try {
    peer_ = control_socket::peer_address(fd_).to_string();
  } catch (const std::exception&) {
    peer_ = "(unknown peer)";
  }
}

ServerSession::~ServerSession() {
  ::close(fd_);
}

void ServerSession::abort() {
  aborted_ = true;
  ::shutdown(fd_, SHUT_RDWR);  // wakes the session's pending read
  if (Runner* r = runner_.load()) r->abort();
}

bool ServerSession::drop_if_pending() {
  State want = State::pending;
  if (!state_.compare_exchange_strong(want, State::dropped)) return false;
  abort();
  return true;
}

void ServerSession::run() noexcept {
  log_.client = peer_;
  try {
    exchange();
  } catch (const std::exception& e) {
    if (state_.load() == State::dropped) {
      log_.result = TestLog::Result::refused;
      log_.refused_at = "pending";
      log_.why = "dropped: --max-pending connections were in their handshake when one more came";
    } else if (state_.load() == State::admitted) {
      log_.result = TestLog::Result::error;
      log_.why = aborted_ ? std::string("the server stopped: ") + e.what() : e.what();
    } else {
      log_.result = TestLog::Result::refused;
      log_.refused_at = step_;
      log_.why = e.what();
    }
    if (opts_.verbose) std::fprintf(stderr, "mtperf serve: %s: %s\n", peer_.c_str(), e.what());
    if (!aborted_) {
      try {
        send_message(link_, {MsgType::error, {{"message", e.what()}}}, 1000);
      } catch (const std::exception&) {
        // The client is gone; nothing more to tell it.
      }
    }
  }
  try {
    opts_.log(format_test_log(log_));
  } catch (const std::exception&) {
    // A log that cannot be written loses its line; the server goes on.
  }
}

std::optional<TrafficCounters> ServerSession::live() const {
  std::lock_guard lock(live_mu_);
  if (!live_) return std::nullopt;
  TrafficCounters t = *live_;
  if (const Runner* r = runner_.load()) {
    CounterValues v = r->totals();
    t.bytes_sent = v.bytes_sent;
    t.bytes_recv = v.bytes_recv;
    t.transactions = v.transactions;
  }
  return t;
}

void ServerSession::let_go_of_runner() {
  std::lock_guard lock(live_mu_);
  runner_ = nullptr;
  if (live_) {
    live_->bytes_sent = log_.bytes_sent;
    live_->bytes_recv = log_.bytes_recv;
    live_->transactions = log_.transactions;
  }
}

void ServerSession::count(const SideResult& result) {
  log_.counted = true;
  for (const FlowResult& f : result.flows) {
    log_.bytes_sent += f.total.bytes_sent;
    log_.bytes_recv += f.total.bytes_recv;
    log_.transactions += f.total.transactions;
  }
  log_.flow_errors = result.errors.size();
}

std::vector<std::unique_ptr<FlowSlot>> ServerSession::open_flows(const TestSpec& spec,
                                                                 Transport& transport,
                                                                 uint64_t cookie,
                                                                 nlohmann::json& ports) {
  SockAddr local = control_socket::local_address(fd_);
  local.set_port(0);
  std::vector<std::unique_ptr<FlowSlot>> flows;
  listeners_.clear();
  // A descriptor for each listener (each closes as its flow is accepted, so a connection takes
  // its listener's place; crr keeps its listeners and opens connections beside them), the soft
  // limit raised as far as this process may; and a local port for each listener. Both are checked
  // before the first listener is bound, so a test over either limit is refused with its name,
  // not cut short.
  const uint32_t n = spec.flows_total();
  const std::string what = std::to_string(n) + (n == 1 ? " flow" : " flows") + " on the server";
  ensure_open_files((kind_of(spec.workload).per_transaction ? 2 : 1) * uint64_t(n), what);
  check_local_ports(n, what, opts_.proc_root);
  for (uint32_t i = 0; i < spec.flows_total(); ++i) {
    auto f = std::make_unique<FlowSlot>();
    f->id = i;
    f->role = role_of(spec, i, Side::server);
    f->proto = spec.proto;
    if (f->role == Role::sender) f->rate_bps = spec.stream_rate_bps() / spec.flows;
    // A multi-adapter test names each flow's address; the client matched it to one of ours.
    SockAddr where = spec.flow_servers.empty() ? local : numeric_address(spec.flow_servers[i], 0);
    listeners_.push_back(transport.listen(where, flow_setup(spec, i, cookie, transport.caps())));
    ports.push_back(listeners_.back()->port());
    flows.push_back(std::move(f));
  }
  return flows;
}

void ServerSession::accept_flows(const TestSpec& spec,
                                 std::vector<std::unique_ptr<FlowSlot>>& flows) {
  int64_t deadline = deadline_in(kSetupTimeoutMs);
  bool watch_control = true;
  start_.reset();
  std::vector<bool> given_up(flows.size(), false);  // START named them: never waited for
  for (size_t i = 0; i < flows.size(); ++i) {
    FlowListener& l = *listeners_[i];
    if (flows[i]->role == Role::crr_server) {  // connections come with each transaction
      flows[i]->endpoint = l.release();
      continue;
    }
    // A connection that is not this flow's (a stranger, a wrong cookie) is dropped and counted;
    // the flow goes on waiting for its own until the deadline, or until START gives it up.
    while (!flows[i]->endpoint && !given_up[i]) {
      Wake w = wait_for_flow(l.wait_fd(), fd_, deadline, watch_control);
      if (w == Wake::control) {
        // Anything after START waits for the runner (a client sends nothing more before
        // STARTED): only the flows are watched from then on.
        if (start_) watch_control = false;
        if (!start_) read_start(spec, given_up);
        continue;
      }
      if (w == Wake::timeout) {
        throw ProtocolError("flow " + std::to_string(i) + ": the client never connected" +
                            (l.rejected() ? " (" + std::to_string(l.rejected()) +
                                                " connection attempts without the test's cookie "
                                                "were dropped)"
                                          : ""));
      }
      flows[i]->endpoint = l.accept(deadline);
    }
    rejected_ += l.rejected();
    listeners_[i].reset();  // its descriptor and port, free for the next flow's connection
  }
  listeners_.clear();
  if (!start_) read_start(spec, given_up);
  // The flows the client gave up run on neither side; one the server took all the same (its
  // connect failed late on the client) is closed here. The others keep their ids.
  size_t kept = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    if (given_up[flows[i]->id]) continue;
    flows[kept++] = std::move(flows[i]);
  }
  log_.not_connected = uint32_t(flows.size() - kept);
  flows.resize(kept);
}

// The client sends START once each of its connects has ended, naming those that failed.
void ServerSession::read_start(const TestSpec& spec, std::vector<bool>& given_up) {
  start_ = expect(link_, MsgType::start, kMaxRequestBody, kSetupTimeoutMs);
  for (uint32_t id : not_connected_from_json(start_->body, spec.flows_total()))
    given_up[id] = true;
}

Message ServerSession::receive(MsgType want, int64_t deadline_ns) {
  Message m = recv_message_until(link_, kMaxRequestBody, deadline_ns);
  if (m.type != want) {
    throw ProtocolError("expected " + std::string(to_string(want)) + ", got " +
                        std::string(to_string(m.type)));
  }
  return m;
}

// The server proves the key first (over the client's nonce and its own challenge); the client
// proves it next, and from then on every frame is sealed (link.hpp). Returns the challenge.
std::string ServerSession::authenticate(const Message& hello, const std::string& key,
                                        nlohmann::json& welcome, int64_t deadline_ns) {
  step_ = "auth";
  const std::string nonce = nonce_field(hello.body, "nonce", "the client's HELLO");
  std::string challenge = random_hex(16);
  welcome["challenge"] = challenge;
  welcome["proof"] = prove(key, "server", nonce, challenge);
  send_message_until(link_, {MsgType::welcome, welcome}, deadline_ns);
  Message auth;
  try {
    auth = receive(MsgType::auth, deadline_ns);
  } catch (const ProtocolError& e) {
    throw ProtocolError(std::string("authentication failed: no AUTH after the key challenge (a "
                                    "client without the key, or with another, gives up here): ") +
                        e.what());
  }
  if (!mac_matches(mac_of(auth), auth_mac(key, challenge)))
    throw ProtocolError("authentication failed: the client's key does not match the server's");
  link_.seal(key, false, nonce, challenge);
  step_ = "handshake";
  return challenge;
}

TestSpec ServerSession::handshake(int64_t deadline_ns) {
  Message hello = receive(MsgType::hello, deadline_ns);
  // Our addresses, so that a client running over several adapters can send each flow to the
  // address on its adapter's subnet; with a key, only to a client that proved it has the key.
  nlohmann::json addresses = addresses_to_json(interface_addresses());
  nlohmann::json welcome = {{"version", kVersion}};
  std::string challenge;
  const std::string key = key_.get();  // a reload from now on is for the next connection
  bool keyed = !key.empty();
  if (keyed) {
    challenge = authenticate(hello, key, welcome, deadline_ns);
    send_message_until(link_, {MsgType::authorized, {{"addresses", addresses}}}, deadline_ns);
  } else {
    welcome["addresses"] = addresses;
    send_message_until(link_, {MsgType::welcome, welcome}, deadline_ns);
  }
  Message req = receive(MsgType::test, deadline_ns);
  auto it = req.body.find("test");
  if (it == req.body.end()) throw ProtocolError("TEST without a test description");
  if (keyed && !mac_matches(mac_of(req), test_mac(key, challenge, *it))) {
    step_ = "auth";
    throw ProtocolError(
        "authentication failed: the TEST's MAC does not match its body (altered on the way?)");
  }
  step_ = "test";
  TestSpec spec;
  from_json(*it, spec);
  log_.spec = spec;
  validate(spec);
  step_ = "handshake";
  return spec;
}

namespace {

// --stop-on-error: the server's window ended at its flows' failure; STOP tells the client, which
// ends its own as on SIGINT. A client that is gone hears nothing: the test ends as it would.
std::function<void(const EarlyStop&)> stop_teller(Link& link, std::mutex& send_mu) {
  return [&link, &send_mu](const EarlyStop& s) {
    nlohmann::json body = {
        {"cause", to_string(s.cause)}, {"at_s", s.at_s}, {"reason", s.why.substr(0, 200)}};
    try {
      std::lock_guard lock(send_mu);
      send_message(link, {MsgType::stop, body}, kSetupTimeoutMs);
    } catch (const std::exception&) {
    }
  };
}

}  // namespace

std::unique_ptr<Transport> ServerSession::create_transport(const TestSpec& spec) {
  step_ = "transport";
  const TransportEntry& entry = find_transport(spec.transport);
  check_params(entry, spec.transport_params);
  ProbeResult probe = entry.probe("/");
  if (!probe.usable) {
    throw ProtocolError("transport " + spec.transport +
                        " is not usable on the server: " + probe.why);
  }
  return entry.create(spec.transport_params);
}

Admission::Ticket ServerSession::admit(const TestSpec& spec, Transport& transport,
                                       int64_t deadline_ns) {
  // What the test would cost, checked before anything is set up.
  step_ = "limits";
  check_policy(spec, opts_, read_host_facts(opts_), transport.extra_threads_per_worker());
  MemoryFigure memory = test_memory(spec, transport);
  check_memory(memory, opts_.max_memory, spec, transport.caps(), "on the server",
               "mtperf serve --max-memory");
  step_ = "busy";
  Admission::Ticket ticket = admission_.admit(memory.total());
  step_ = "handshake";
  State want = State::pending;
  if (!state_.compare_exchange_strong(want, State::admitted) || now_ns() > deadline_ns) {
    throw ProtocolError("the handshake took too long or the server dropped it");
  }
  return ticket;
}

std::vector<std::unique_ptr<FlowSlot>> ServerSession::set_up_flows(const TestSpec& spec,
                                                                   Transport& transport) {
  uint64_t cookie = random_u64();
  nlohmann::json ports = nlohmann::json::array();
  auto flows = open_flows(spec, transport, cookie, ports);
  send_message(link_, {MsgType::ready, {{"ports", ports}, {"cookie", cookie}}}, kSetupTimeoutMs);
  accept_flows(spec, flows);
  if (opts_.verbose && log_.not_connected > 0) {
    std::fprintf(stderr, "mtperf serve: %s: %u of %u flows did not connect; the test goes on\n",
                 peer_.c_str(), log_.not_connected, spec.flows_total());
  }
  return flows;
}

void ServerSession::start_runner(Runner& runner, const TestSpec& spec, std::mutex& send_mu) {
  runner.set_netdevs(flow_netdevs(spec.flow_servers, fd_));
  runner.set_adapters(adapter_irqs("/"));
  runner.set_stop_on_error(spec.stop_on_error);
  if (spec.stop_on_error) runner.set_stop_callback(stop_teller(link_, send_mu));
  {
    std::lock_guard lock(live_mu_);
    live_ = TrafficCounters{spec.transport, std::string(to_string(spec.workload)),
                            std::string(to_string(spec.proto))};
    runner_ = &runner;
  }
  if (aborted_) runner.abort();
  runner.start();
}

void ServerSession::await_done(Runner& runner, const TestSpec& spec, std::mutex& send_mu) {
  try {
    {
      std::lock_guard lock(send_mu);
      send_message(link_, {MsgType::started, nlohmann::json::object()}, kSetupTimeoutMs);
    }
    double wait_s = spec.warmup_s + spec.duration_s + Runner::kLingerS + 60;
    expect(link_, MsgType::done, kMaxRequestBody, int(wait_s * 1000));
    runner.clock().finish.store(true);
  } catch (...) {
    runner.abort();  // the client vanished or misbehaved: stop and free everything now
    count(runner.join());
    let_go_of_runner();
    throw;
  }
}

void ServerSession::exchange() {
  int64_t deadline = deadline_in(opts_.handshake_timeout_ms);
  TestSpec spec = handshake(deadline);
  std::unique_ptr<Transport> transport = create_transport(spec);
  Admission::Ticket ticket = admit(spec, *transport, deadline);
  auto flows = set_up_flows(spec, *transport);

  std::mutex send_mu;  // STARTED from here, STOP from the runner's clock thread
  Runner runner(spec, Side::server, *transport, run_worker, std::move(flows), spec.server_cpus);
  start_runner(runner, spec, send_mu);
  await_done(runner, spec, send_mu);
  SideResult result = runner.join();
  count(result);
  let_go_of_runner();
  result.side = Side::server;
  send_message(link_, {MsgType::result, side_to_json(result)}, kSetupTimeoutMs);
}

}  // namespace mtperf::control
