// sockperf's header and framing (peers/sockperf/protocol.hpp), and hostile peers both ways: a
// length too large or too small, a short header, a peer that stops mid-message or says nothing.
// Each is bounded (nothing held past one message), deadlined and named. No sockperf needed.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "peers/sockperf/client.hpp"
#include "peers/sockperf/protocol.hpp"
#include "peers/sockperf/server.hpp"

using namespace mtperf::sockperf;

namespace {

std::vector<uint8_t> message(uint64_t seq, uint16_t flags, uint32_t length) {
  std::vector<uint8_t> m(length < kHeaderBytes ? kHeaderBytes : length, 0xab);
  encode({seq, flags, length}, m.data());
  return m;
}

// A header alone: what a peer sends before a message it never sends.
std::vector<uint8_t> header_only(uint64_t seq, uint16_t flags, uint32_t length) {
  std::vector<uint8_t> m(kHeaderBytes);
  encode({seq, flags, length}, m.data());
  return m;
}

int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

// A server on port 0 whose log lines the test reads.
struct LoggedServer {
  std::vector<std::string> lines;
  std::mutex mu;
  std::unique_ptr<Server> server;
  explicit LoggedServer(int idle_ms = 60000) {
    ServeOptions o;
    o.bind = "127.0.0.1";
    o.port = 0;
    o.idle_timeout_ms = idle_ms;
    o.log = [this](const std::string& l) {
      std::lock_guard<std::mutex> g(mu);
      lines.push_back(l);
    };
    server = std::make_unique<Server>(o);
  }
  // The first log line, waiting at most 3 s.
  std::string first_line() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> g(mu);
        if (!lines.empty()) return lines[0];
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return "";
  }
};

}  // namespace

TEST_CASE("the header is 14 big-endian bytes: sequence, flags, length of the whole message") {
  uint8_t b[kHeaderBytes];
  encode({0x0102030405060708ull, 0x0003, 0x0000004c}, b);
  const uint8_t want[] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 3, 0, 0, 0, 0x4c};
  CHECK(std::equal(b, b + kHeaderBytes, want));
  Header h;
  REQUIRE(decode(b, sizeof b, h) == HeaderStatus::ok);
  CHECK(h.seq == 0x0102030405060708ull);
  CHECK(h.flags == (kFlagClient | kFlagPong));
  CHECK(h.length == 76);
}

TEST_CASE("decode refuses a short header and a length outside 14..65507") {
  Header h;
  auto m = message(1, kFlagClient, 64);
  CHECK(decode(m.data(), 13, h) == HeaderStatus::short_header);
  encode({1, kFlagClient, 13}, m.data());
  CHECK(decode(m.data(), 14, h) == HeaderStatus::too_short);
  encode({1, kFlagClient, 0xffffffffu}, m.data());
  CHECK(decode(m.data(), 14, h) == HeaderStatus::too_long);
  encode({1, kFlagClient, kMaxMessage}, m.data());
  CHECK(decode(m.data(), 14, h) == HeaderStatus::ok);
  CHECK(to_string(HeaderStatus::too_long).find("length") != std::string::npos);
}

TEST_CASE("the framer reassembles messages however the stream is cut") {
  std::vector<uint8_t> stream;
  for (uint64_t i = 1; i <= 50; ++i) {
    auto m = message(i, kFlagClient, uint32_t(14 + i * 7));
    stream.insert(stream.end(), m.begin(), m.end());
  }
  for (size_t cut : {size_t(1), size_t(3), size_t(13), size_t(14), size_t(100), stream.size()}) {
    StreamFramer f(1024);
    uint64_t next = 1;
    for (size_t at = 0; at < stream.size(); at += cut)
      REQUIRE(f.feed(stream.data() + at, std::min(cut, stream.size() - at),
                     [&](const Header& h, uint8_t* msg) {
                       CHECK(h.seq == next);
                       CHECK(h.length == 14 + next * 7);
                       CHECK(msg[h.length - 1] == 0xab);
                       ++next;
                     }));
    CHECK(next == 51);
    CHECK(f.pending() == 0);
  }
}

TEST_CASE("the framer stops at a length over its bound and names it") {
  StreamFramer f(1024);
  auto m = header_only(7, kFlagClient | kFlagPong, 1u << 30);
  int called = 0;
  CHECK_FALSE(f.feed(m.data(), kHeaderBytes, [&](const Header&, uint8_t*) { ++called; }));
  CHECK(called == 0);
  CHECK(f.error() == HeaderStatus::too_long);
  CHECK(f.last_header().length == (1u << 30));
  CHECK_FALSE(f.feed(m.data(), 1, [&](const Header&, uint8_t*) { ++called; }));
}

TEST_CASE("the server closes a client whose length is too large, naming it; others go on") {
  LoggedServer s;
  int bad = connect_to(s.server->port());
  auto m = header_only(1, kFlagClient | kFlagPong, 1u << 30);
  REQUIRE(::send(bad, m.data(), kHeaderBytes, 0) == ssize_t(kHeaderBytes));
  const std::string line = s.first_line();
  CHECK(line.find("a length over the largest message (length 1073741824)") != std::string::npos);
  char c;
  CHECK(::recv(bad, &c, 1, 0) <= 0);  // closed
  ::close(bad);
  // A good client still gets its pong.
  int good = connect_to(s.server->port());
  auto ping = message(1, kFlagClient | kFlagPong, 32);
  REQUIRE(::send(good, ping.data(), ping.size(), 0) == 32);
  uint8_t back[32];
  size_t got = 0;
  while (got < 32) {
    ssize_t r = ::recv(good, back + got, 32 - got, 0);
    REQUIRE(r > 0);
    got += size_t(r);
  }
  Header h;
  REQUIRE(decode(back, 32, h) == HeaderStatus::ok);
  CHECK(h.seq == 1);
  CHECK(h.flags == kFlagPong);  // the client flag cleared
  ::close(good);
  CHECK(s.server->counts().rejected.load() == 1);
  CHECK(s.server->counts().messages.load() == 1);
}

TEST_CASE("a client that stops mid-message, or says nothing, is ended at its deadline") {
  LoggedServer s(300);
  int fd = connect_to(s.server->port());
  auto m = message(1, kFlagClient | kFlagPong, 64);
  REQUIRE(::send(fd, m.data(), 20, 0) == 20);  // header and 6 of 50 payload bytes
  const auto t0 = std::chrono::steady_clock::now();
  const std::string line = s.first_line();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  CHECK(line.find("stopped mid-message (20 bytes held)") != std::string::npos);
  CHECK(line.find("silent for 300 ms") != std::string::npos);
  CHECK(s.server->counts().messages.load() == 0);
  ::close(fd);
}

TEST_CASE("a short header and a datagram whose length lies are dropped on UDP, counted") {
  LoggedServer s;
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(s.server->port());
  auto m = message(1, kFlagClient | kFlagPong, 64);
  ::sendto(fd, m.data(), 10, 0, reinterpret_cast<sockaddr*>(&a), sizeof a);  // short header
  ::sendto(fd, m.data(), 40, 0, reinterpret_cast<sockaddr*>(&a), sizeof a);  // says 64
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (s.server->counts().rejected.load() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(s.server->counts().rejected.load() == 2);
  CHECK(s.server->counts().messages.load() == 0);
  ::close(fd);
}

namespace {

// A fake sockperf server: accepts one connection and answers each message with `reply` (empty:
// nothing), then holds the connection until the test ends.
struct FakeServer {
  int listen_fd = -1;
  uint16_t port = 0;
  std::thread t;
  explicit FakeServer(std::vector<uint8_t> reply) {
    listen_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listen_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    ::listen(listen_fd, 1);
    socklen_t len = sizeof a;
    ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    t = std::thread([this, reply] {
      int fd = ::accept(listen_fd, nullptr, nullptr);
      if (fd < 0) return;
      uint8_t buf[256];
      if (::recv(fd, buf, sizeof buf, 0) > 0 && !reply.empty())
        ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::recv(fd, buf, sizeof buf, 0);  // until the client leaves
      ::close(fd);
    });
  }
  ~FakeServer() {
    ::shutdown(listen_fd, SHUT_RDWR);
    t.join();
    ::close(listen_fd);
  }
};

mtperf::TestSpec rr_spec() {
  mtperf::TestSpec spec;
  spec.workload = mtperf::Workload::rr;
  spec.duration_s = 0.5;
  spec.warmup_s = 0;
  spec.req_size = spec.resp_size = 64;
  return spec;
}

}  // namespace

TEST_CASE("the client names a pong whose length is too large") {
  FakeServer f(header_only(1, kFlagPong, 1u << 30));
  auto spec = rr_spec();
  CHECK_THROWS_WITH(run_test(spec, "127.0.0.1:" + std::to_string(f.port), 1000, 300),
                    Catch::Contains("a length over the largest message (length 1073741824)"));
}

TEST_CASE("the client gives up on a server that sends no pong, at its deadline") {
  FakeServer f({});
  auto spec = rr_spec();
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(run_test(spec, "127.0.0.1:" + std::to_string(f.port), 1000, 300),
                    Catch::Contains("sent no pong: nothing for 300 ms"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
}

TEST_CASE("the client names a server that stops mid-pong") {
  auto half = message(1, kFlagPong, 64);
  half.resize(20);
  FakeServer f(half);
  auto spec = rr_spec();
  CHECK_THROWS_WITH(run_test(spec, "127.0.0.1:" + std::to_string(f.port), 1000, 300),
                    Catch::Contains("sent no pong: nothing for 300 ms"));
}

TEST_CASE("what sockperf cannot do is refused before connecting, naming what it can") {
  auto spec = rr_spec();
  spec.workload = mtperf::Workload::crr;
  CHECK_THROWS_WITH(check_request(spec), Catch::Contains("has no sockperf mode") &&
                                             Catch::Contains("rr (ping-pong) and stream"));
  spec = rr_spec();
  spec.req_size = spec.resp_size = 8;
  CHECK_THROWS_WITH(check_request(spec), Catch::Contains("outside 14..65507"));
  spec = rr_spec();
  spec.resp_size = 128;
  CHECK_THROWS_WITH(check_request(spec), Catch::Contains("one size for both"));
  spec = rr_spec();
  spec.flows = 2;
  CHECK_THROWS_WITH(check_request(spec), Catch::Contains("one flow only"));
}
