// `mtperf serve --sockperf` under serve's rules, with the real sockperf 3.7 clients on 127.0.0.1:
// a client from outside --allow refused (TCP closed before a byte is read, UDP dropped
// unanswered), a TCP client over --max-sessions refused as busy, and each client's messages
// counted in /metrics with protocol="sockperf" when it ends. Each sockperf run is -t 1.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <thread>

#include "control/allow.hpp"
#include "control/server.hpp"
#include "peers/sockperf/server.hpp"
#include "tests/peers/sockperf_tools.hpp"
#include "tests/support/skip.hpp"

using namespace mtperf;
using mtperf::test::run_sockperf_client;

MTPERF_TEST_REQUIRES(mtperf::test::why_no_sockperf());

namespace {

// `mtperf serve --sockperf 127.0.0.1:0 --metrics 127.0.0.1:0` in this process, as
// cli/misc_cmds.cpp builds it: the control server (admission, counters, /metrics) with the
// sockperf server beside it; every client's TestLog kept for the checks.
struct Serve {
  explicit Serve(std::vector<control::Cidr> allow = {}, uint32_t max_sessions = 16) {
    control::ServerOptions o;
    o.bind = "127.0.0.1";
    o.port = 0;
    o.metrics = "127.0.0.1:0";
    o.max_sessions = max_sessions;
    o.log = [](const std::string&) {};
    server = std::make_unique<control::Server>(o);
    sockperf::ServeOptions so;
    so.bind = "127.0.0.1";
    so.port = 0;
    so.udp_idle_ms = 300;
    so.allow = std::move(allow);
    so.admission = &server->admission();
    so.done = [this](const control::TestLog& log) {
      {
        std::lock_guard lock(mu);
        logs.push_back(log);
      }
      server->record_peer_test(log);
    };
    sockperf = std::make_unique<sockperf::Server>(so);
  }
  ~Serve() {
    sockperf.reset();
    server.reset();
  }
  // The first n clients' logs once they have ended (a UDP client: udp_idle_ms after its last
  // datagram), within 5 s.
  std::vector<control::TestLog> wait_logs(size_t n) {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard lock(mu);
        if (logs.size() >= n) return logs;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard lock(mu);
    FAIL("only " << logs.size() << " of " << n << " clients ended");
    return logs;
  }
  std::string port() const { return std::to_string(sockperf->port()); }

  std::mutex mu;
  std::vector<control::TestLog> logs;
  std::unique_ptr<control::Server> server;
  std::unique_ptr<sockperf::Server> sockperf;
};

int dial(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

std::string http_get(uint16_t port, const std::string& path) {
  int fd = dial(port);
  const std::string req = "GET " + path + " HTTP/1.0\r\n\r\n";
  REQUIRE(::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == ssize_t(req.size()));
  std::string all;
  char b[4096];
  for (ssize_t n; (n = ::recv(fd, b, sizeof b, 0)) > 0;)
    all.append(b, size_t(n));
  ::close(fd);
  return all;
}

std::string series(const char* name, const char* workload, const char* proto, uint64_t v) {
  return std::string(name) + "{protocol=\"sockperf\",workload=\"" + workload + "\",proto=\"" +
         proto + "\"} " + std::to_string(v) + "\n";
}

}  // namespace

TEST_CASE("serve --sockperf: a TCP ping-pong client's messages and pongs in /metrics") {
  Serve s;
  auto r = run_sockperf_client("pp --tcp -i 127.0.0.1 -p " + s.port() + " -t 1 -m 64");
  INFO(r.output);
  REQUIRE(r.rc == 0);
  const auto logs = s.wait_logs(1);
  const auto& l = logs.at(0);
  INFO(l.why);
  CHECK(l.protocol == "sockperf");
  CHECK(l.result == control::TestLog::Result::ok);
  REQUIRE(l.spec);
  CHECK(l.spec->workload == Workload::rr);
  // Every message sockperf sent was counted, each 64 bytes, and each answered with a pong.
  const uint64_t messages = s.sockperf->counts().messages.load();
  CHECK(messages == uint64_t(r.sent));
  CHECK(l.bytes_recv == messages * 64);
  CHECK(l.transactions == s.sockperf->counts().pongs.load());
  CHECK(l.bytes_sent == l.transactions * 64);
  const std::string m = http_get(s.server->metrics_port(), "/metrics");
  INFO(m);
  CHECK_THAT(
      m, Catch::Contains(series("mtperf_serve_bytes_received_total", "rr", "tcp", messages * 64)));
  CHECK_THAT(
      m, Catch::Contains(series("mtperf_serve_transactions_total", "rr", "tcp", l.transactions)));
  CHECK_THAT(m, Catch::Contains("mtperf_serve_tests_total{result=\"ok\"} 1\n"));
}

TEST_CASE("serve --sockperf: a UDP client ends when it falls silent, counted in /metrics") {
  Serve s;
  auto r = run_sockperf_client("pp -i 127.0.0.1 -p " + s.port() + " -t 1 -m 64");
  INFO(r.output);
  REQUIRE(r.rc == 0);
  const auto logs = s.wait_logs(1);
  const auto& l = logs.at(0);
  REQUIRE(l.spec);
  CHECK(l.spec->proto == Proto::udp);
  const uint64_t messages = s.sockperf->counts().messages.load();
  CHECK(messages == uint64_t(r.sent));
  CHECK(l.bytes_recv == messages * 64);
  const std::string m = http_get(s.server->metrics_port(), "/metrics");
  INFO(m);
  CHECK_THAT(
      m, Catch::Contains(series("mtperf_serve_bytes_received_total", "rr", "udp", messages * 64)));
}

TEST_CASE("serve --sockperf: clients from outside --allow are refused, nothing counted") {
  Serve s({control::parse_cidr("192.0.2.0/24")});
  // TCP: closed before a byte is read; sockperf gives up (its exit status is its own business).
  auto r = run_sockperf_client("pp --tcp -i 127.0.0.1 -p " + s.port() + " -t 1 -m 64");
  const auto logs = s.wait_logs(1);
  CHECK(logs.at(0).result == control::TestLog::Result::refused);
  CHECK(logs.at(0).refused_at == "allow");
  CHECK(!logs.at(0).counted);
  // UDP: every datagram dropped unanswered.
  auto u = run_sockperf_client("pp -i 127.0.0.1 -p " + s.port() + " -t 1 -m 64");
  INFO(r.output << u.output);
  CHECK(s.sockperf->counts().messages.load() == 0);
  CHECK(s.sockperf->counts().pongs.load() == 0);
  CHECK(s.sockperf->counts().not_allowed.load() > 1);
  const std::string m = http_get(s.server->metrics_port(), "/metrics");
  CHECK_THAT(m, Catch::Contains("mtperf_serve_refusals_total{reason=\"allow\"} 1\n"));
  CHECK(m.find("protocol=\"sockperf\"") == std::string::npos);
}

TEST_CASE("serve --sockperf: a TCP client over --max-sessions is refused as busy") {
  Serve s({}, 1);
  int first = dial(s.sockperf->port());
  for (int i = 0; i < 300 && s.sockperf->counts().connections.load() < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(s.sockperf->counts().connections.load() == 1);
  int second = dial(s.sockperf->port());
  char b;
  CHECK(::recv(second, &b, 1, 0) == 0);  // closed by the server, nothing sent
  auto logs = s.wait_logs(1);
  CHECK(logs.at(0).result == control::TestLog::Result::refused);
  CHECK(logs.at(0).refused_at == "busy");
  CHECK_THAT(logs.at(0).why, Catch::Contains("--max-sessions"));
  ::close(second);
  ::close(first);
  logs = s.wait_logs(2);  // the first ends as a client that sent nothing
  CHECK(logs.at(1).result == control::TestLog::Result::ok);
  // Its session is given back as the client's entry goes, just after its log.
  for (int i = 0; i < 100 && s.server->admission().running() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(s.server->admission().running() == 0);
}
