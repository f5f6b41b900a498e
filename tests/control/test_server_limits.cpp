// The server against clients that cost it: idle and dripping connections, more connections than
// it lets wait, tests over its policy or its memory budget, clients from outside --allow. Each
// is turned away without holding up anyone else, and a normal client is served throughout.
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "control/client.hpp"
#include "control/local_server.hpp"
#include "control/protocol.hpp"
#include "control/server.hpp"
#include "transports/inet/inet.hpp"

using namespace mtperf;
using namespace mtperf::control;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kTimeoutMs = 5000;

int connect_to(const LocalServer& s) {
  return inet::connect_to(inet::resolve(s.address(), 0), Proto::tcp, SocketOptions{}, kTimeoutMs);
}

struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds)
      ::close(fd);
  }
};

TestSpec short_rr() {
  TestSpec s;
  s.workload = Workload::rr;
  s.duration_s = 0.2;
  s.warmup_s = 0;
  return s;
}

TestOutcome run_against(const LocalServer& server, TestSpec spec = short_rr()) {
  ClientOptions o;
  o.server = server.address();
  return run_test(spec, o);
}

void serves(const LocalServer& server) {
  TestOutcome out = run_against(server);
  CHECK(out.client.errors.empty());
  REQUIRE(out.server);
  CHECK(out.server->errors.empty());
  CHECK(out.client.flows.at(0).total.transactions > 0);
}

// Seconds until the server closes fd (recv sees EOF or an error), at most `limit_s`.
double seconds_until_closed(int fd, double limit_s) {
  auto t0 = Clock::now();
  char buf[256];
  while (std::chrono::duration<double>(Clock::now() - t0).count() < limit_s) {
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

TEST_CASE("20 idle connections do not keep a normal client out", "[server][limits]") {
  // They never send HELLO. They used to hold the 16 session places until their idle timeout,
  // and the client failed with "the peer closed the control connection".
  LocalServer server;
  Fds idle;
  for (int i = 0; i < 20; ++i)
    idle.fds.push_back(connect_to(server));
  serves(server);
}

TEST_CASE("connections beyond max_pending drop the oldest, never the newest", "[server][limits]") {
  ServerOptions o;
  o.max_pending = 4;
  LocalServer server(o);
  Fds idle;
  for (int i = 0; i < 10; ++i)
    idle.fds.push_back(connect_to(server));
  serves(server);  // the newest connection: its handshake completes
  // The oldest idle ones were closed to make room.
  CHECK(seconds_until_closed(idle.fds.front(), 2) < 1.5);
}

TEST_CASE("a client dripping its HELLO is cut off at the handshake deadline", "[server][limits]") {
  // One byte every 200 ms: each byte used to restart a per-read idle timeout, forever.
  ServerOptions o;
  o.handshake_timeout_ms = 800;
  LocalServer server(o);
  int fd = connect_to(server);
  std::string frame = encode({MsgType::hello, {{"version", kVersion}}});
  auto t0 = Clock::now();
  bool cut = false;
  for (size_t i = 0; i < frame.size() - 1; ++i) {
    if (send(fd, frame.data() + i, 1, MSG_NOSIGNAL) != 1) {
      cut = true;
      break;
    }
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN)) {
      cut = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!cut) s += seconds_until_closed(fd, 3);
  ::close(fd);
  CHECK(s < 1.6);
  serves(server);
}

TEST_CASE("a silent client after HELLO is cut off at the handshake deadline", "[server][limits]") {
  ServerOptions o;
  o.handshake_timeout_ms = 500;
  LocalServer server(o);
  int fd = connect_to(server);
  send_message(fd, {MsgType::hello, {{"version", kVersion}}}, kTimeoutMs);
  CHECK(recv_message(fd, kMaxRequestBody, kTimeoutMs).type == MsgType::welcome);
  CHECK(seconds_until_closed(fd, 3) < 1.5);
  ::close(fd);
}

TEST_CASE("a test over the server's policy is refused, naming the limit", "[server][limits]") {
  ServerOptions o;
  o.max_flows = 4;
  o.max_threads = 2;
  LocalServer server(o);
  TestSpec s = short_rr();
  s.flows = 8;
  CHECK_THROWS_WITH(run_against(server, s), Catch::Contains("flows: 8 data connections") &&
                                                Catch::Contains("limit of 4") &&
                                                Catch::Contains("--max-flows"));
  s.flows = 4;
  s.threads = 4;
  CHECK_THROWS_WITH(run_against(server, s), Catch::Contains("threads: 4 worker threads") &&
                                                Catch::Contains("--max-threads"));
  s.threads = 2;
  TestOutcome out = run_against(server, s);
  CHECK(out.client.errors.empty());
}

TEST_CASE("server CPUs must be online and offered", "[server][limits]") {
  ServerOptions o;
  o.cpus = {0};
  LocalServer server(o);
  TestSpec s = short_rr();
  s.server_cpus = {4095};
  CHECK_THROWS_WITH(run_against(server, s), Catch::Contains("server cpus: CPU 4095"));
}

TEST_CASE("a congestion control the host does not list is refused", "[server][limits]") {
  // The fixture host allows reno and cubic (and has bbr and htcp for a privileged process).
  ServerOptions o;
  o.proc_root = std::string(MTPERF_FIXTURES) + "/limits/h1";
  LocalServer server(o);
  TestSpec s = short_rr();
  s.sock.congestion = "vegas";
  // Straight to the server: the client checks its own host's list first.
  int fd = connect_to(server);
  send_message(fd, {MsgType::hello, {{"version", kVersion}}}, kTimeoutMs);
  REQUIRE(recv_message(fd, kMaxRequestBody, kTimeoutMs).type == MsgType::welcome);
  send_message(fd, {MsgType::test, {{"test", s}}}, kTimeoutMs);
  Message m = recv_message(fd, kMaxRequestBody, kTimeoutMs);
  ::close(fd);
  CHECK(m.type == MsgType::error);
  CHECK_THAT(m.body.value("message", ""),
             Catch::Contains("congestion: 'vegas'") && Catch::Contains("reno cubic"));
  // A name the fixture host lists goes through to the set-up.
  s.sock.congestion = "reno";
  fd = connect_to(server);
  send_message(fd, {MsgType::hello, {{"version", kVersion}}}, kTimeoutMs);
  REQUIRE(recv_message(fd, kMaxRequestBody, kTimeoutMs).type == MsgType::welcome);
  send_message(fd, {MsgType::test, {{"test", s}}}, kTimeoutMs);
  CHECK(recv_message(fd, kMaxRequestBody, kTimeoutMs).type == MsgType::ready);
  ::close(fd);
}

TEST_CASE("a test over the server's memory budget is refused, naming the figure",
          "[server][limits]") {
  ServerOptions o;
  o.max_memory = 4u << 20;
  LocalServer server(o);
  TestSpec s = short_rr();
  s.flows = 64;
  CHECK_THROWS_WITH(run_against(server, s),
                    Catch::Contains("the test needs") && Catch::Contains("on the server") &&
                        Catch::Contains("limit of 4 MiB") && Catch::Contains("--max-memory"));
  serves(server);
}

TEST_CASE("rr with an 8 MiB response runs: the buffers hold it", "[server][limits]") {
  // -r 1,8M used to end with "server flow 0: send: Bad address".
  LocalServer server;
  TestSpec s = short_rr();
  s.resp_size = 8u << 20;
  TestOutcome out = run_against(server, s);
  CHECK(out.client.errors.empty());
  REQUIRE(out.server);
  CHECK(out.server->errors.empty());
  CHECK(out.client.flows.at(0).total.bytes_recv >= 8u << 20);
}

TEST_CASE("the memory of running tests together is bounded", "[server][limits]") {
  Admission a(4, 100);
  auto t1 = a.admit(60);
  CHECK_THROWS_WITH(a.admit(50), Catch::Contains("server busy") && Catch::Contains("100 bytes"));
  {
    auto t2 = a.admit(40);
    CHECK(a.running() == 2);
    CHECK(a.memory_in_use() == 100);
  }
  CHECK(a.running() == 1);
  CHECK(a.memory_in_use() == 60);
  auto t3 = a.admit(10), t4 = a.admit(10), t5 = a.admit(10);
  CHECK_THROWS_WITH(a.admit(1), Catch::Contains("--max-sessions"));
}

TEST_CASE("a client outside --allow is closed at once and counted", "[server][limits]") {
  ServerOptions o;
  o.allow = {parse_cidr("192.0.2.0/24"), parse_cidr("2001:db8::/32")};
  o.bind = "127.0.0.1";
  o.port = 0;
  Server server(o);
  std::thread t([&] { server.run(); });
  int fd = inet::connect_to(inet::resolve("127.0.0.1", server.port()), Proto::tcp, SocketOptions{},
                            kTimeoutMs);
  CHECK(seconds_until_closed(fd, 3) < 1);
  ::close(fd);
  CHECK(server.counters().refused == 1);
  server.stop();
  t.join();
}

TEST_CASE("a client inside --allow is served", "[server][limits]") {
  ServerOptions o;
  o.allow = {parse_cidr("127.0.0.0/8")};
  LocalServer server(o);
  serves(server);
}
