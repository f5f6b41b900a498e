// serve --metrics: the server's counters over HTTP in the Prometheus text format.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "control/client.hpp"
#include "control/local_server.hpp"
#include "control/metrics.hpp"
#include "control/server.hpp"
#include "transports/inet/inet.hpp"

using namespace mtperf;
using namespace mtperf::control;

namespace {

constexpr int kTimeoutMs = 5000;

// One HTTP request to 127.0.0.1:port, the whole answer back (the server closes after it).
std::string http(uint16_t port, const std::string& request) {
  int fd =
      inet::connect_to(inet::resolve("127.0.0.1", port), Proto::tcp, SocketOptions{}, kTimeoutMs);
  REQUIRE(inet::write_all(fd, request.data(), request.size(), kTimeoutMs));
  std::string out;
  char buf[4096];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int left = int(std::chrono::duration_cast<std::chrono::milliseconds>(
                       deadline - std::chrono::steady_clock::now())
                       .count());
    if (left <= 0 || ::poll(&p, 1, left) <= 0) break;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, size_t(n));
  }
  ::close(fd);
  return out;
}

std::string scrape(uint16_t port) {
  return http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
}

}  // namespace

TEST_CASE("the metrics text names each counter once, with HELP and TYPE", "[server][metrics]") {
  ServerCounters m;
  m.tests_ok = 3;
  m.tests_refused = 1;
  m.traffic.push_back({"socket", "stream", "tcp", 1, 12345, 0});
  m.traffic.push_back({"uring", "rr", "tcp", 7, 7, 7});
  m.memory_in_use = 4096;
  std::string text = format_metrics(m);
  CHECK_THAT(text, Catch::Contains("# TYPE mtperf_serve_tests_total counter\n"
                                   "mtperf_serve_tests_total{result=\"ok\"} 3\n"
                                   "mtperf_serve_tests_total{result=\"error\"} 0\n"
                                   "mtperf_serve_tests_total{result=\"refused\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE mtperf_serve_bytes_received_total counter\n"
                                   "mtperf_serve_bytes_received_total{transport=\"socket\","
                                   "workload=\"stream\",proto=\"tcp\"} 12345\n"
                                   "mtperf_serve_bytes_received_total{transport=\"uring\","
                                   "workload=\"rr\",proto=\"tcp\"} 7\n"));
  CHECK_THAT(text, Catch::Contains("\nmtperf_serve_memory_in_use_bytes 4096\n"));
  CHECK(text.find("# TYPE mtperf_serve_tests_total") ==
        text.rfind("# TYPE mtperf_serve_tests_total"));
}

TEST_CASE("a server with --metrics counts a finished test on /metrics", "[server][metrics]") {
  ServerOptions o;
  o.metrics = "127.0.0.1:0";
  o.log = [](const std::string&) {};
  LocalServer server(o);
  const uint16_t port = server.server().metrics_port();
  REQUIRE(port != 0);
  std::string before = scrape(port);
  CHECK_THAT(before, Catch::StartsWith("HTTP/1.0 200 OK\r\n"));
  CHECK_THAT(before, Catch::Contains("text/plain; version=0.0.4"));
  CHECK_THAT(before, Catch::Contains("\nmtperf_serve_tests_total{result=\"ok\"} 0\n"));

  ClientOptions c;
  c.server = server.address();
  TestSpec spec;
  spec.duration_s = 0.3;
  spec.warmup_s = 0;
  TestOutcome out = run_test(spec, c);
  REQUIRE(out.server);
  const uint64_t recv = out.server->flows.at(0).total.bytes_recv;
  CHECK(recv > 0);
  // The server counts the test when its session ends, just after the client has the result.
  std::string after;
  for (int i = 0; i < 50; ++i) {
    after = scrape(port);
    if (after.find("{result=\"ok\"} 1\n") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK_THAT(after, Catch::Contains("\nmtperf_serve_tests_total{result=\"ok\"} 1\n"));
  CHECK_THAT(after, Catch::Contains("\nmtperf_serve_bytes_received_total{transport=\"socket\","
                                    "workload=\"stream\",proto=\"tcp\"} " +
                                    std::to_string(recv) + "\n"));
  CHECK_THAT(after, Catch::Contains("\nmtperf_serve_tests_running 0\n"));

  CHECK_THAT(http(port, "GET / HTTP/1.0\r\n\r\n"), Catch::StartsWith("HTTP/1.0 404"));
  CHECK_THAT(http(port, "POST /metrics HTTP/1.0\r\n\r\n"), Catch::StartsWith("HTTP/1.0 405"));
}

namespace {

// The value of the series that starts with `series` ("name{labels}") in a scrape; -1 if absent.
int64_t value_of(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + series.size() + 2));
}

}  // namespace

TEST_CASE("/metrics shows a running test and its bytes so far; at its end, the client's bytes",
          "[server][metrics]") {
  ServerOptions o;
  o.metrics = "127.0.0.1:0";
  o.log = [](const std::string&) {};
  LocalServer server(o);
  const uint16_t port = server.server().metrics_port();
  ClientOptions c;
  c.server = server.address();
  TestSpec spec;
  spec.duration_s = 3;
  spec.warmup_s = 0;
  TestOutcome out;
  std::thread client([&] { out = run_test(spec, c); });
  const std::string recv_series =
      "mtperf_serve_bytes_received_total{transport=\"socket\",workload=\"stream\",proto=\"tcp\"}";
  // While the test runs its bytes grow, scrape after scrape.
  int64_t first = -1, later = -1;
  std::string during;
  for (int i = 0; i < 40 && later <= first; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    during = scrape(port);
    if (value_of(during, "mtperf_serve_tests_running") != 1) continue;
    int64_t v = value_of(during, recv_series);
    if (v <= 0) continue;
    if (first < 0) {
      first = v;
    } else {
      later = v;
    }
  }
  INFO(during);
  CHECK(first > 0);
  CHECK(later > first);
  CHECK(value_of(during, "mtperf_serve_memory_in_use_bytes") > 0);
  client.join();
  REQUIRE(out.server);
  // The report's bytes, exactly, once the session has ended (a moment after the client's end).
  std::string after;
  for (int i = 0; i < 50; ++i) {
    after = scrape(port);
    if (value_of(after, "mtperf_serve_tests_running") == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const int64_t server_recv = int64_t(out.server->flows.at(0).total.bytes_recv);
  CHECK(value_of(after, recv_series) == server_recv);
  CHECK(server_recv == int64_t(out.client.flows.at(0).total.bytes_sent));
  CHECK(value_of(after, "mtperf_serve_memory_in_use_bytes") == 0);
}

TEST_CASE("/metrics counts refusals by the step that refused them", "[server][metrics]") {
  ServerOptions o;
  o.metrics = "127.0.0.1:0";
  o.key = "right";
  o.max_memory = 64 << 20;
  o.log = [](const std::string&) {};
  LocalServer server(o);
  const uint16_t port = server.server().metrics_port();
  auto run = [&](const std::string& key, uint32_t flows) {
    ClientOptions c;
    c.server = server.address();
    c.key = key;
    TestSpec spec;
    spec.duration_s = 0.2;
    spec.warmup_s = 0;
    spec.flows = flows;
    spec.verify_seed = 1;  // every flow's own buffers: 64 MiB is too little for 500 flows
    return run_test(spec, c);
  };
  CHECK_THROWS(run("wrong", 1));
  CHECK_THROWS(run("wrong", 1));
  CHECK_THROWS_WITH(run("right", 500), Catch::Contains("--max-memory"));
  std::string text;
  for (int i = 0; i < 50; ++i) {
    text = scrape(port);
    if (value_of(text, "mtperf_serve_tests_total{result=\"refused\"}") == 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(value_of(text, "mtperf_serve_tests_total{result=\"refused\"}") == 3);
  CHECK(value_of(text, "mtperf_serve_refusals_total{reason=\"auth\"}") == 2);
  CHECK(value_of(text, "mtperf_serve_refusals_total{reason=\"limits\"}") == 1);
  CHECK(value_of(text, "mtperf_serve_refusals_total{reason=\"busy\"}") == -1);
}

TEST_CASE("--metrics without a port is refused", "[server][metrics]") {
  ServerOptions o;
  o.metrics = "127.0.0.1";
  CHECK_THROWS_WITH(LocalServer(o), Catch::Contains("ADDRESS:PORT"));
}
