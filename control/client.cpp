#include "control/client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/protocol.hpp"
#include "control/routes.hpp"
#include "control/side_json.hpp"
#include "transports/inet/inet.hpp"
#include "workloads/engine_config.hpp"

namespace mtperf::control {
namespace {

constexpr int kSetupTimeoutMs = 10000;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Fills spec.flow_servers from the server's addresses in WELCOME: each flow goes to the server's
// address on the subnet of its source address.
void route_flows(TestSpec& spec, const ClientOptions& opts, const nlohmann::json& welcome,
                 std::vector<std::string>& sources) {
  auto it = welcome.find("addresses");
  if (it == welcome.end())
    throw ProtocolError("the server does not list its addresses; it cannot serve --adapters");
  std::vector<InterfaceAddress> server;
  try {
    server = addresses_from_json(*it);
  } catch (const std::invalid_argument& e) {
    throw ProtocolError(std::string("server's WELCOME: ") + e.what());
  }
  auto local = interface_addresses();
  spec.flow_servers.clear();
  for (uint32_t i = 0; i < spec.flows_total(); ++i) {
    const std::string& src = opts.flow_sources[i % opts.flow_sources.size()];
    sources.push_back(src);
    spec.flow_servers.push_back(server_address_for(find_local(src, local), server));
  }
}

std::vector<std::unique_ptr<FlowSlot>> open_flows(const TestSpec& spec, Transport& transport,
                                                  const SockAddr& server,
                                                  const nlohmann::json& ready,
                                                  const std::vector<std::string>& sources) {
  auto ports = ready.at("ports").get<std::vector<uint16_t>>();
  uint64_t cookie = ready.at("cookie").get<uint64_t>();
  if (ports.size() != spec.flows_total()) {
    throw ProtocolError("READY lists " + std::to_string(ports.size()) + " ports for " +
                        std::to_string(spec.flows_total()) + " flows");
  }
  int64_t deadline = now_ns() + int64_t(kSetupTimeoutMs) * 1000000;
  std::vector<std::unique_ptr<FlowSlot>> flows;
  for (uint32_t i = 0; i < spec.flows_total(); ++i) {
    auto f = std::make_unique<FlowSlot>();
    f->id = i;
    f->role = role_of(spec, i, Side::client);
    f->proto = spec.proto;
    if (f->role == Role::sender) f->rate_bps = spec.stream_rate_bps() / spec.flows;
    SockAddr remote = spec.flow_servers.empty() ? server : inet::numeric(spec.flow_servers[i], 0);
    remote.set_port(ports[i]);
    SockAddr source;
    if (!sources.empty()) {
      source = inet::numeric(sources[i], 0);
    } else if (!spec.sock.source.empty()) {
      source = inet::resolve(spec.sock.source, 0);
    }
    f->endpoint = transport.connect(remote, source, flow_setup(spec, i, cookie, transport.caps()),
                                    deadline);
    flows.push_back(std::move(f));
  }
  return flows;
}

}  // namespace

TestOutcome run_test(const TestSpec& spec_in, const ClientOptions& opts,
                     IntervalCallback on_interval) {
  TestSpec spec = spec_in;
  validate(spec);
  const TransportEntry& entry = find_transport(spec.transport);
  check_params(entry, spec.transport_params);
  ProbeResult probe = entry.probe("/");
  if (!probe.usable) {
    throw std::runtime_error("transport " + spec.transport + " is not usable here: " + probe.why);
  }
  auto transport = entry.create(spec.transport_params);
  inet::raise_fd_limit();

  SockAddr server = inet::resolve(opts.server, kDefaultPort);
  Fd ctl;
  ctl.fd = inet::connect_to(server, Proto::tcp, SocketOptions{}, opts.connect_timeout_ms);
  nlohmann::json hello = {{"version", kVersion}};
  send_message(ctl.fd, {MsgType::hello, hello}, kSetupTimeoutMs);
  Message welcome = expect(ctl.fd, MsgType::welcome, kMaxRequestBody, kSetupTimeoutMs);
  nlohmann::json test = {{"test", spec}};
  if (auto c = welcome.body.find("challenge"); c != welcome.body.end()) {
    if (opts.key.empty()) throw ProtocolError("the server wants a key (--key)");
    test["auth"] = auth_response(opts.key, c->get<std::string>());
  }
  std::vector<std::string> sources;
  if (!opts.flow_sources.empty()) {
    route_flows(spec, opts, welcome.body, sources);
    validate(spec);
    test["test"] = spec;
  }
  send_message(ctl.fd, {MsgType::test, test}, kSetupTimeoutMs);
  Message ready = expect(ctl.fd, MsgType::ready, kMaxRequestBody, kSetupTimeoutMs);
  auto flows = open_flows(spec, *transport, server, ready.body, sources);

  send_message(ctl.fd, {MsgType::start, nlohmann::json::object()}, kSetupTimeoutMs);
  expect(ctl.fd, MsgType::started, kMaxRequestBody, kSetupTimeoutMs);
  Runner runner(spec, Side::client, *transport, std::move(flows), opts.cpus);
  runner.set_interval_callback(std::move(on_interval));
  runner.start();
  TestOutcome out;
  out.client = runner.join();
  out.transport_settings = transport->effective_settings();
  out.server_address = server.to_string();
  out.flow_sources = std::move(sources);
  out.flow_servers = spec.flow_servers;
  Message result;
  try {
    send_message(ctl.fd, {MsgType::done, nlohmann::json::object()}, kSetupTimeoutMs);
    result = expect(ctl.fd, MsgType::result, kMaxResultBody, kSetupTimeoutMs + 30000);
  } catch (const ProtocolError& e) {
    // The server went away during the test: what the flows saw of it says more.
    if (out.client.errors.empty()) throw;
    throw ProtocolError(out.client.errors.front() + " (the server is gone: " + e.what() + ")");
  }
  try {
    out.server = side_from_json(result.body);
  } catch (const std::invalid_argument& e) {
    throw ProtocolError(std::string("server's RESULT: ") + e.what());
  }
  return out;
}

}  // namespace mtperf::control
