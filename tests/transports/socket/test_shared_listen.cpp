// The TCP flows of one test share one listening socket on the server and may connect in any
// order; a connection without the test's cookie, or for a flow that has its connection already,
// is dropped and counted.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "platform/clock.hpp"
#include "transports/api/registry.hpp"
#include "transports/inet/endpoint.hpp"
#include "transports/inet/flow_hello.hpp"
#include "transports/inet/inet.hpp"

using namespace mtperf;

namespace {

constexpr int kTimeoutMs = 5000;

FlowSetup setup_of(uint32_t flow, uint64_t cookie, const SocketOptions& sock) {
  FlowSetup s;
  s.flow = flow;
  s.cookie = cookie;
  s.proto = Proto::tcp;
  s.sock = &sock;
  return s;
}

// What the server session does for one flow: wait on its listener, accept, until it has its
// connection (nullptr when the deadline passed).
std::unique_ptr<Endpoint> accept_flow(FlowListener& l, int64_t deadline) {
  std::unique_ptr<Endpoint> ep;
  while (!ep) {
    pollfd p{l.wait_fd(), POLLIN, 0};
    if (::poll(&p, 1, ms_until(deadline)) <= 0) return nullptr;
    ep = l.accept(deadline);
  }
  return ep;
}

// The flow id a connection carries in its first byte after the hello (the test writes it).
uint8_t first_byte(Endpoint& ep) {
  auto& s = static_cast<inet::SocketEndpoint&>(ep);
  uint8_t b = 0xff;
  REQUIRE(inet::read_exact(s.fd, &b, 1, kTimeoutMs));
  return b;
}

void send_byte(Endpoint& ep, uint8_t b) {
  auto& s = static_cast<inet::SocketEndpoint&>(ep);
  REQUIRE(inet::write_all(s.fd, &b, 1, kTimeoutMs));
}

}  // namespace

TEST_CASE("TCP flows share one listening port and are accepted whatever order they connect in",
          "[inet][listen]") {
  auto server = find_transport("socket").create({});
  auto client = find_transport("socket").create({});
  const SocketOptions sock;
  const uint64_t cookie = 0x1234'5678'9abc'def0;
  const SockAddr where = numeric_address("127.0.0.1", 0);
  constexpr uint32_t kFlows = 5;
  std::vector<std::unique_ptr<FlowListener>> listeners;
  for (uint32_t i = 0; i < kFlows; ++i)
    listeners.push_back(server->listen(where, setup_of(i, cookie, sock)));
  for (auto& l : listeners)
    CHECK(l->port() == listeners[0]->port());  // one port for the test, not one a flow

  // The client connects the flows last to first; each says which it is after its hello.
  SockAddr to = where;
  to.set_port(listeners[0]->port());
  const int64_t deadline = deadline_in(kTimeoutMs);
  std::vector<std::unique_ptr<Endpoint>> out(kFlows);
  for (uint32_t i = kFlows; i-- > 0;) {
    out[i] = client->connect(to, SockAddr{}, setup_of(i, cookie, sock), deadline);
    send_byte(*out[i], uint8_t(i));
  }
  // The server takes them first to last: each listener gets its own flow's connection.
  for (uint32_t i = 0; i < kFlows; ++i) {
    auto in = accept_flow(*listeners[i], deadline);
    REQUIRE(in);
    CHECK(first_byte(*in) == i);
  }
}

TEST_CASE("a shared listener drops a stranger and a second connection for a flow",
          "[inet][listen]") {
  auto server = find_transport("socket").create({});
  auto client = find_transport("socket").create({});
  const SocketOptions sock;
  const uint64_t cookie = 42;
  const SockAddr where = numeric_address("127.0.0.1", 0);
  auto l0 = server->listen(where, setup_of(0, cookie, sock));
  auto l1 = server->listen(where, setup_of(1, cookie, sock));
  SockAddr to = where;
  to.set_port(l0->port());
  const int64_t deadline = deadline_in(kTimeoutMs);

  // A stranger (another cookie), then flow 1 twice, then flow 0.
  auto stranger = client->connect(to, SockAddr{}, setup_of(0, cookie + 1, sock), deadline);
  auto first1 = client->connect(to, SockAddr{}, setup_of(1, cookie, sock), deadline);
  send_byte(*first1, 1);
  auto second1 = client->connect(to, SockAddr{}, setup_of(1, cookie, sock), deadline);
  auto flow0 = client->connect(to, SockAddr{}, setup_of(0, cookie, sock), deadline);
  send_byte(*flow0, 0);

  auto in0 = accept_flow(*l0, deadline);
  REQUIRE(in0);
  CHECK(first_byte(*in0) == 0);
  CHECK(l0->rejected() == 2);  // the stranger and flow 1's second connection
  auto in1 = accept_flow(*l1, deadline);
  REQUIRE(in1);
  CHECK(first_byte(*in1) == 1);

  // The stranger's connection was closed by the server.
  auto& s = static_cast<inet::SocketEndpoint&>(*stranger);
  uint8_t b;
  CHECK(recv(s.fd, &b, 1, 0) <= 0);
}

TEST_CASE("UDP flows and crr's listeners keep a socket each", "[inet][listen]") {
  auto server = find_transport("socket").create({});
  const SocketOptions sock;
  const SockAddr where = numeric_address("127.0.0.1", 0);
  FlowSetup udp0 = setup_of(0, 7, sock), udp1 = setup_of(1, 7, sock);
  udp0.proto = udp1.proto = Proto::udp;
  auto u0 = server->listen(where, udp0);
  auto u1 = server->listen(where, udp1);
  CHECK(u0->port() != u1->port());
  FlowSetup crr0 = setup_of(0, 8, sock), crr1 = setup_of(1, 8, sock);
  crr0.per_transaction = crr1.per_transaction = true;
  auto c0 = server->listen(where, crr0);
  auto c1 = server->listen(where, crr1);
  CHECK(c0->port() != c1->port());
}
