// `mtperf serve --iperf3` against the real iperf3 client (Debian 12: 3.12) on 127.0.0.1: TCP,
// -R, --bidir, -P 4, each comparing the bytes the client reports (-J) with the bytes the server
// counted; eight clients at once, counted in /metrics; and the hostile clients: one that stops
// mid-handshake, a 4 GiB length, oversized or mistyped parameters, authentication, a busy
// server. iperf3 3.12 takes whole seconds for -t (it reads "0.5" as 0, a test without end), so
// the runs are -t 1.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "control/server.hpp"
#include "peers/iperf3/protocol.hpp"
#include "peers/iperf3/server.hpp"
#include "peers/iperf3/server_machine.hpp"
#include "tests/peers/iperf3_server.hpp"
#include "tests/support/command.hpp"
#include "tests/support/skip.hpp"

using namespace mtperf;
using nlohmann::json;

MTPERF_TEST_REQUIRES(mtperf::test::why_no_iperf3());

namespace {

// `mtperf serve --iperf3 127.0.0.1:0 --metrics 127.0.0.1:0` in this process: the control server
// (admission, counters, /metrics) with the iperf3 server beside it, as cli/misc_cmds.cpp builds
// them; every test's TestLog kept for the checks.
struct Serve {
  explicit Serve(int handshake_ms = 5000, uint32_t max_sessions = 16) {
    control::ServerOptions o;
    o.bind = "127.0.0.1";
    o.port = 0;
    o.metrics = "127.0.0.1:0";
    o.max_sessions = max_sessions;
    o.handshake_timeout_ms = handshake_ms;
    o.log = [this](const std::string& line) {
      std::lock_guard lock(mu);
      lines.push_back(line);
    };
    server = std::make_unique<control::Server>(o);
    iperf3::ServeOptions io;
    io.bind = "127.0.0.1";
    io.port = 0;
    io.handshake_timeout_ms = handshake_ms;
    io.max_memory = server->options().max_memory;
    io.done = [this](const control::TestLog& log) {
      {
        std::lock_guard lock(mu);
        logs.push_back(log);
      }
      server->record_peer_test(log);
    };
    iperf3 = std::make_unique<iperf3::Server>(io, server->admission());
  }
  ~Serve() {
    iperf3.reset();
    server.reset();
  }
  // The first `n` tests' logs, once they have ended (the client may exit first).
  std::vector<control::TestLog> wait_logs(size_t n) {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard lock(mu);
        if (logs.size() >= n) return logs;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard lock(mu);
    FAIL("only " << logs.size() << " of " << n << " tests ended");
    return logs;
  }
  // The server's last log line. serve records a test (wait_logs) before it writes its line, so
  // the line is waited for as the test is.
  std::string last_line() {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard lock(mu);
        if (!lines.empty()) return lines.back();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return "";
  }
  std::string client_cmd(const std::string& args) const {
    return std::string(test::kIperf3) + " -c 127.0.0.1 -p " + std::to_string(iperf3->port()) +
           " -J " + args + " 2>&1";
  }

  std::mutex mu;
  std::vector<control::TestLog> logs;
  std::vector<std::string> lines;
  std::unique_ptr<control::Server> server;
  std::unique_ptr<iperf3::Server> iperf3;
};

json client_json(const Serve& s, const std::string& args) {
  test::CommandResult r = test::run_command(s.client_cmd(args));
  INFO(r.out);
  REQUIRE(r.rc == 0);
  return json::parse(r.out);
}

uint64_t bytes_of(const json& doc, const char* sum) {
  return doc.at("end").at(sum).at("bytes").get<uint64_t>();
}

// What a stream the server sends on may hold in flight when the client stops reading at its
// TEST_END (iperf3's client reads nothing after it, so those bytes are counted sent, never
// received): the sender's socket buffer and the receiver's, at their kernel maxima.
uint64_t in_flight_bound() {
  auto max_of = [](const char* path) {
    std::ifstream f(path);
    uint64_t lo = 0, def = 0, hi = 0;
    f >> lo >> def >> hi;
    return hi;
  };
  return max_of("/proc/sys/net/ipv4/tcp_wmem") + max_of("/proc/sys/net/ipv4/tcp_rmem");
}

size_t open_fds() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (::readdir(d) != nullptr)
      ++n;
    ::closedir(d);
  }
  return n;
}

// A raw client for the hostile cases: connected, with a 5 s receive timeout.
int dial(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}
// GET `path` from 127.0.0.1:port, the whole answer (HTTP/1.0: the server closes when done).
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
void put(int fd, const std::vector<uint8_t>& b) {
  REQUIRE(::send(fd, b.data(), b.size(), MSG_NOSIGNAL) == ssize_t(b.size()));
}
void put_cookie(int fd, const iperf3::Cookie& c) {
  put(fd, std::vector<uint8_t>(c.begin(), c.end()));
}
// Everything the server sends until it closes (or 5 s pass).
std::vector<uint8_t> drain(int fd) {
  std::vector<uint8_t> all;
  uint8_t b[256];
  for (ssize_t n; (n = ::recv(fd, b, sizeof b, 0)) > 0;)
    all.insert(all.end(), b, b + n);
  return all;
}
json tcp_params() {
  return {{"tcp", true},     {"omit", 0},     {"time", 1},     {"num", 0},
          {"blockcount", 0}, {"parallel", 1}, {"len", 131072}, {"client_version", "3.12"}};
}

}  // namespace

TEST_CASE("iperf3 -c (TCP): the bytes the client sent are the bytes the server counted") {
  Serve s;
  const json doc = client_json(s, "-t 1");
  const auto logs = s.wait_logs(1);
  INFO(logs[0].why << " / client: " << doc.value("error", std::string("no error")));
  REQUIRE(logs[0].result == control::TestLog::Result::ok);
  // The server reads each stream until it is quiet after TEST_END, so nothing the client wrote
  // is left uncounted: equal, to the byte.
  CHECK(bytes_of(doc, "sum_sent") > 0);
  CHECK(bytes_of(doc, "sum_sent") == bytes_of(doc, "sum_received"));
  CHECK(bytes_of(doc, "sum_received") == logs[0].bytes_recv);
  CHECK(logs[0].bytes_sent == 0);
  CHECK_THAT(s.last_line(), Catch::Contains("protocol=iperf3 workload=stream proto=tcp flows=1"));
}

TEST_CASE(
    "iperf3 -c -R: the server's bytes sent are in the client's report, received within "
    "what was in flight") {
  Serve s;
  const json doc = client_json(s, "-t 1 -R");
  const auto logs = s.wait_logs(1);
  INFO(logs[0].why << " / client: " << doc.value("error", std::string("no error")));
  REQUIRE(logs[0].result == control::TestLog::Result::ok);
  CHECK(bytes_of(doc, "sum_sent") == logs[0].bytes_sent);
  CHECK(bytes_of(doc, "sum_received") > 0);
  CHECK(bytes_of(doc, "sum_received") <= bytes_of(doc, "sum_sent"));
  CHECK(bytes_of(doc, "sum_sent") - bytes_of(doc, "sum_received") <= in_flight_bound());
}

TEST_CASE("iperf3 -c --bidir: both directions counted by both sides") {
  Serve s;
  const json doc = client_json(s, "-t 1 --bidir");
  const auto logs = s.wait_logs(1);
  INFO(logs[0].why << " / client: " << doc.value("error", std::string("no error")));
  REQUIRE(logs[0].result == control::TestLog::Result::ok);
  CHECK(bytes_of(doc, "sum_sent") == bytes_of(doc, "sum_received"));
  CHECK(bytes_of(doc, "sum_received") == logs[0].bytes_recv);
  CHECK(bytes_of(doc, "sum_sent_bidir_reverse") == logs[0].bytes_sent);
  CHECK(bytes_of(doc, "sum_received_bidir_reverse") <= logs[0].bytes_sent);
  CHECK(logs[0].bytes_sent - bytes_of(doc, "sum_received_bidir_reverse") <= in_flight_bound());
}

TEST_CASE("iperf3 -c -P 4: every stream's bytes agree, stream by stream") {
  Serve s;
  const json doc = client_json(s, "-t 1 -P 4 -l 64K -N --get-server-output");
  const auto logs = s.wait_logs(1);
  INFO(logs[0].why << " / client: " << doc.value("error", std::string("no error")));
  REQUIRE(logs[0].result == control::TestLog::Result::ok);
  const json& streams = doc.at("end").at("streams");
  REQUIRE(streams.size() == 4);
  for (const json& st : streams) {
    INFO(st.dump());
    CHECK(st.at("sender").at("bytes").get<uint64_t>() > 0);
    CHECK(st.at("sender").at("bytes") == st.at("receiver").at("bytes"));
  }
  CHECK(bytes_of(doc, "sum_received") == logs[0].bytes_recv);
  CHECK_THAT(doc.at("server_output_text").get<std::string>(),
             Catch::Contains("mtperf serve --iperf3"));
}

TEST_CASE("iperf3 -c -u -b 100M: every datagram sent is received or counted lost") {
  Serve s;
  const json doc = client_json(s, "-t 1 -u -b 100M");
  const auto logs = s.wait_logs(1);
  INFO(logs[0].why << " / client: " << doc.value("error", std::string("no error")));
  REQUIRE(logs[0].result == control::TestLog::Result::ok);
  const uint64_t blksize = doc.at("start").at("test_start").at("blksize").get<uint64_t>();
  const json& sum = doc.at("end").at("sum");
  INFO(sum.dump());
  // Each datagram is blksize bytes; the server's loss is the gaps below the highest sequence it
  // saw, as iperf3's. What was sent after that sequence (the tail: dropped at the end, on a
  // loaded host by a full socket buffer, and invisible to a count of gaps) is neither received
  // nor lost: sent = received + lost + tail, tail >= 0, all whole datagrams.
  CHECK(logs[0].bytes_recv > 0);
  CHECK(logs[0].bytes_recv % blksize == 0);
  const uint64_t sent = sum.at("packets").get<uint64_t>();
  const uint64_t received = logs[0].bytes_recv / blksize;
  const uint64_t lost = sum.at("lost_packets").get<uint64_t>();
  CHECK(sent * blksize == sum.at("bytes").get<uint64_t>());
  CHECK(received + lost <= sent);
  WARN("iperf3 -u -b 100M -> serve --iperf3: " << sent << " datagrams sent, " << received
                                               << " received, " << lost << " lost, tail "
                                               << sent - std::min(sent, received + lost));
  CHECK_THAT(s.last_line(), Catch::Contains("workload=stream proto=udp"));
}

TEST_CASE("iperf3 -c -u -R with 64-bit counters: the server's datagrams, counted by the client") {
  Serve s;
  const json doc = client_json(s, "-t 1 -u -b 50M -R --udp-counters-64bit");
  const auto logs = s.wait_logs(1);
  INFO(logs[0].why << " / client: " << doc.value("error", std::string("no error")));
  REQUIRE(logs[0].result == control::TestLog::Result::ok);
  const uint64_t blksize = doc.at("start").at("test_start").at("blksize").get<uint64_t>();
  const json& sum = doc.at("end").at("sum");
  INFO(sum.dump());
  // The client's report carries the server's bytes and datagrams; the client's own loss count
  // is the gaps it saw in the server's 64-bit sequence numbers (what a loaded host drops from
  // the client's socket buffer: no bound asserted beyond the datagrams sent).
  CHECK(sum.at("bytes").get<uint64_t>() == logs[0].bytes_sent);
  CHECK(sum.at("packets").get<uint64_t>() * blksize == logs[0].bytes_sent);
  CHECK(sum.at("lost_packets").get<uint64_t>() <= sum.at("packets").get<uint64_t>());
}

TEST_CASE("eight iperf3 clients started together all complete, their bytes in /metrics") {
  Serve s;
  std::vector<FILE*> clients;
  for (int i = 0; i < 8; ++i)
    clients.push_back(::popen(s.client_cmd("-t 1").c_str(), "r"));
  uint64_t sent = 0;
  for (FILE* p : clients) {
    REQUIRE(p != nullptr);
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
      out.append(buf, n);
    INFO(out);
    CHECK(::pclose(p) == 0);
    sent += bytes_of(json::parse(out), "sum_sent");
  }
  const auto logs = s.wait_logs(8);
  uint64_t counted = 0;
  for (const auto& l : logs) {
    CHECK(l.result == control::TestLog::Result::ok);
    counted += l.bytes_recv;
  }
  CHECK(counted == sent);
  const std::string metrics = http_get(s.server->metrics_port(), "/metrics");
  const std::string series =
      "mtperf_serve_bytes_received_total{protocol=\"iperf3\",workload=\"stream\",proto=\"tcp\"} " +
      std::to_string(sent) + "\n";
  CHECK_THAT(metrics, Catch::Contains(series));
  CHECK_THAT(metrics, Catch::Contains("mtperf_serve_tests_total{result=\"ok\"} 8\n"));
}

TEST_CASE("hostile iperf3 clients are cut off at the deadline or refused, naming what was wrong") {
  const size_t fds_before = open_fds();
  {
    Serve s(300);
    const uint16_t port = s.iperf3->port();
    const auto t0 = std::chrono::steady_clock::now();
    {  // connects and says nothing
      int fd = dial(port);
      CHECK(drain(fd).empty());
      ::close(fd);
    }
    {  // the cookie, then nothing
      int fd = dial(port);
      put_cookie(fd, iperf3::make_cookie());
      CHECK(drain(fd) == std::vector<uint8_t>{9});  // PARAM_EXCHANGE, then closed
      ::close(fd);
    }
    {  // half the parameters, then nothing
      int fd = dial(port);
      put_cookie(fd, iperf3::make_cookie());
      std::vector<uint8_t> f = iperf3::frame_json(tcp_params());
      f.resize(f.size() / 2);
      put(fd, f);
      drain(fd);
      ::close(fd);
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(waited < 3);  // three deadlines of 0.3 s, not the receive timeouts of 5 s
    {                   // CVE-2023-38403: a length of 4 GiB
      int fd = dial(port);
      put_cookie(fd, iperf3::make_cookie());
      put(fd, {0xff, 0xff, 0xff, 0xff, '{', '}'});
      drain(fd);
      ::close(fd);
    }
    {  // CVE-2024-53580: a string where a number belongs
      int fd = dial(port);
      put_cookie(fd, iperf3::make_cookie());
      json p = tcp_params();
      p["time"] = "ten";
      put(fd, iperf3::frame_json(p));
      drain(fd);
      ::close(fd);
    }
    {  // parameters over iperf3's own 8 KiB bound
      int fd = dial(port);
      put_cookie(fd, iperf3::make_cookie());
      json p = tcp_params();
      p["padding"] = std::string(9000, 'x');
      put(fd, iperf3::frame_json(p));
      drain(fd);
      ::close(fd);
    }
    {  // the streams never come
      int fd = dial(port);
      put_cookie(fd, iperf3::make_cookie());
      put(fd, iperf3::frame_json(tcp_params()));
      CHECK(drain(fd) == std::vector<uint8_t>{9, 10});  // PARAM_EXCHANGE, CREATE_STREAMS
      ::close(fd);
    }
    {  // authentication, which this server has no users for: iperf3's "test authorization failed"
      int fd = dial(port);
      put_cookie(fd, iperf3::make_cookie());
      json p = tcp_params();
      p["username"] = "u";
      p["authtoken"] = "AAAA";
      put(fd, iperf3::frame_json(p));
      const std::vector<uint8_t> got = drain(fd);
      REQUIRE(got.size() == 10);
      CHECK(got[1] == uint8_t(-2));  // SERVER_ERROR
      CHECK(got[5] == 142);          // IEAUTHTEST
      ::close(fd);
    }
    const auto logs = s.wait_logs(8);
    const char* why[] = {"0 of the cookie's 37 bytes",
                         "the parameters within 0.3 s",
                         "the parameters within 0.3 s",
                         "announces 4294967295 bytes",
                         "parameter time",
                         "over the bound of 8192",
                         "0 of 1 streams connected",
                         "no iperf3 users"};
    for (size_t i = 0; i < 8; ++i) {
      INFO(i << ": " << logs[i].why);
      CHECK(logs[i].result == control::TestLog::Result::refused);
      CHECK_THAT(logs[i].why, Catch::Contains(why[i]));
    }
    CHECK(s.server->counters().tests_refused == 8);
  }
  CHECK(open_fds() == fds_before);  // nothing left behind
}

TEST_CASE("a test that does not fit beside the running ones is told the server is busy") {
  Serve s(2000, 1);
  control::Admission::Ticket running = s.server->admission().admit(1);  // the one place taken
  const test::CommandResult r = test::run_command(s.client_cmd("-t 1"));
  // (iperf3 3.12 with -J exits 0 here: the refusal is its JSON's "error")
  CHECK_THAT(r.out, Catch::Contains("the server is busy running a test"));
  const auto logs = s.wait_logs(1);
  CHECK(logs[0].refused_at == "busy");
  CHECK_THAT(logs[0].why, Catch::Contains("--max-sessions"));
}

TEST_CASE("the server machine: a whole conversation, and the client's bytes out of turn") {
  using Event = iperf3::ServerMachine::Event;
  iperf3::ServerMachine m;
  CHECK(m.take_output() == std::vector<uint8_t>{9});
  json p = tcp_params();
  p["parallel"] = 2;
  p["reverse"] = true;
  const std::vector<uint8_t> f = iperf3::frame_json(p);
  // Byte by byte, as a slow socket hands them out.
  Event e = Event::none;
  for (uint8_t b : f)
    e = m.feed({&b, 1});
  REQUIRE(e == Event::params);
  CHECK(m.params().parallel == 2);
  CHECK(m.params().reverse);
  m.create_streams();
  m.start_test();
  CHECK(m.take_output() == std::vector<uint8_t>{10, 1, 2});
  const uint8_t end = 4;
  REQUIRE(m.feed({&end, 1}) == Event::test_end);
  m.ask_results();
  iperf3::Results r;
  r.streams.push_back({});
  r.streams[0].id = 1;
  REQUIRE(m.feed(iperf3::frame_json(iperf3::to_json(r))) == Event::results);
  CHECK(m.client_results().streams.size() == 1);
  m.give_results(r);
  const uint8_t done = 16;
  CHECK(m.feed({&done, 1}) == Event::done);
  CHECK(m.finished());

  iperf3::ServerMachine early;
  REQUIRE(early.feed(iperf3::frame_json(tcp_params())) == Event::params);
  early.create_streams();
  const uint8_t terminate = 12;  // CLIENT_TERMINATE while its streams are awaited
  CHECK_THROWS_WITH(early.feed({&terminate, 1}), Catch::Contains("CLIENT_TERMINATE"));
}
