// An in-process server on 127.0.0.1 (port 0) facing misbehaving clients: each one gets an error
// or a close, and the server goes on serving the next client.
#include <unistd.h>

#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "control/client.hpp"
#include "control/local_server.hpp"
#include "control/protocol.hpp"
#include "control/server.hpp"
#include "transports/inet/inet.hpp"

using namespace mtperf;
using namespace mtperf::control;

namespace {

constexpr int kTimeoutMs = 5000;

// A raw control connection, closed when it goes out of scope.
struct Conn {
  int fd;
  explicit Conn(const LocalServer& s)
      : fd(inet::connect_to(inet::resolve(s.address(), 0), Proto::tcp, SocketOptions{},
                            kTimeoutMs)) {}
  ~Conn() { close(); }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  void send_raw(const std::string& bytes) const {
    REQUIRE(inet::write_all(fd, bytes.data(), bytes.size(), kTimeoutMs));
  }
  void send(MsgType t, nlohmann::json body) const {
    send_message(fd, {t, std::move(body)}, kTimeoutMs);
  }
  Message recv() const { return recv_message(fd, kMaxResultBody, kTimeoutMs); }
  void hello() const {
    send(MsgType::hello, {{"version", kVersion}});
    CHECK(recv().type == MsgType::welcome);
  }
};

TestSpec short_stream() {
  TestSpec s;
  s.workload = Workload::stream;
  s.duration_s = 0.3;
  s.warmup_s = 0;
  return s;
}

// A normal client's test, checked: both sides' figures, and the bytes agree exactly (the TCP
// receiver reads to the end of the stream).
void serves_a_stream(const LocalServer& server, const std::string& key = "") {
  ClientOptions o;
  o.server = server.address();
  o.key = key;
  TestOutcome out = run_test(short_stream(), o);
  CHECK(out.client.errors.empty());
  REQUIRE(out.server);
  CHECK(out.server->errors.empty());
  REQUIRE(out.client.flows.size() == 1);
  REQUIRE(out.server->flows.size() == 1);
  CHECK(out.client.flows[0].total.bytes_sent > 0);
  CHECK(out.client.flows[0].total.bytes_sent == out.server->flows[0].total.bytes_recv);
}

// What a misbehaving client hears back: an ERROR frame's message, or "" when the server closed.
std::string answer_to(const Conn& c) {
  try {
    Message m = c.recv();
    CHECK(m.type == MsgType::error);
    return m.body.value("message", std::string("(ERROR without a message)"));
  } catch (const ProtocolError&) {
    return "";  // closed
  }
}

}  // namespace

TEST_CASE("a normal client is served", "[server]") {
  LocalServer server;
  serves_a_stream(server);
  serves_a_stream(server);
}

TEST_CASE("garbage bytes get an error or a close, and the server keeps serving", "[server]") {
  LocalServer server;
  {
    Conn c(server);
    c.send_raw("GET / HTTP/1.0\r\nHost: x\r\n\r\n");
    std::string answer = answer_to(c);
    if (!answer.empty()) CHECK_THAT(answer, Catch::Contains("magic"));
  }
  {
    Conn c(server);
    c.send_raw("\x01\x02");  // a partial header, then nothing
    c.close();
  }
  serves_a_stream(server);
}

TEST_CASE("a malformed frame is refused with a message naming the problem", "[server]") {
  LocalServer server;
  SECTION("another protocol version") {
    Conn c(server);
    std::string frame = encode({MsgType::hello, {{"version", 9}}});
    frame[4] = 9;
    c.send_raw(frame);
    CHECK_THAT(answer_to(c), Catch::Contains("version 9"));
  }
  SECTION("an unknown message type") {
    Conn c(server);
    std::string frame = encode({MsgType::hello, {{"version", kVersion}}});
    frame[5] = 42;
    c.send_raw(frame);
    CHECK_THAT(answer_to(c), Catch::Contains("unknown message type 42"));
  }
  SECTION("a body over the request limit") {
    Conn c(server);
    std::string frame = encode({MsgType::hello, {{"version", kVersion}}});
    frame[8] = 0x40;  // 1 GiB
    c.send_raw(frame.substr(0, kHeaderBytes));
    CHECK_THAT(answer_to(c), Catch::Contains("exceeds the limit"));
  }
  SECTION("a body that is not JSON") {
    Conn c(server);
    std::string frame = encode({MsgType::hello, {{"version", kVersion}}});
    std::string body = "{not json!}";
    frame.resize(kHeaderBytes);
    frame[11] = char(body.size());
    c.send_raw(frame + body);
    CHECK_THAT(answer_to(c), Catch::Contains("not a JSON object"));
  }
  SECTION("a TEST before the HELLO") {
    Conn c(server);
    c.send(MsgType::test, {{"test", nlohmann::json(short_stream())}});
    CHECK_THAT(answer_to(c), Catch::Contains("expected HELLO"));
  }
  serves_a_stream(server);
}

TEST_CASE("an over-limit test gets an ERROR naming the field", "[server]") {
  LocalServer server;
  SECTION("flows") {
    Conn c(server);
    c.hello();
    nlohmann::json test = short_stream();
    test["flows"] = 100000;
    c.send(MsgType::test, {{"test", test}});
    Message m = c.recv();
    CHECK(m.type == MsgType::error);
    CHECK_THAT(m.body.value("message", ""), Catch::Contains("flows"));
  }
  SECTION("an unknown field") {
    Conn c(server);
    c.hello();
    nlohmann::json test = short_stream();
    test["turbo"] = true;
    c.send(MsgType::test, {{"test", test}});
    Message m = c.recv();
    CHECK(m.type == MsgType::error);
    CHECK_THAT(m.body.value("message", ""), Catch::Contains("test.turbo"));
  }
  SECTION("no test at all") {
    Conn c(server);
    c.hello();
    c.send(MsgType::test, nlohmann::json::object());
    Message m = c.recv();
    CHECK(m.type == MsgType::error);
    CHECK_THAT(m.body.value("message", ""), Catch::Contains("test description"));
  }
  serves_a_stream(server);
}

TEST_CASE("a client that says nothing does not stop another client's test", "[server]") {
  LocalServer server;
  Conn silent(server);
  serves_a_stream(server);
  Conn another_silent(server);
  serves_a_stream(server);
}

TEST_CASE("a client that vanishes after READY leaves the server serving", "[server]") {
  LocalServer server;
  {
    Conn c(server);
    c.hello();
    c.send(MsgType::test, {{"test", nlohmann::json(short_stream())}});
    Message ready = c.recv();
    REQUIRE(ready.type == MsgType::ready);
    CHECK(ready.body.at("ports").size() == 1);
  }
  serves_a_stream(server);
}

TEST_CASE("a server with a key serves only clients that know it", "[server]") {
  ServerOptions o;
  o.key = "correct horse";
  LocalServer server(o);
  serves_a_stream(server, "correct horse");
  ClientOptions wrong;
  wrong.server = server.address();
  wrong.key = "battery staple";
  CHECK_THROWS_WITH(run_test(short_stream(), wrong), Catch::Contains("authentication"));
  ClientOptions none;
  none.server = server.address();
  CHECK_THROWS_WITH(run_test(short_stream(), none), Catch::Contains("--key"));
  serves_a_stream(server, "correct horse");
}
