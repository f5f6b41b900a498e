// A server with a key: nothing about the host before the client proves the key (AUTH), and the
// proof covers the TEST body, so a test altered after the MAC is refused.
#include <unistd.h>

#include <string>

#include <catch2/catch.hpp>

#include "control/client.hpp"
#include "control/local_server.hpp"
#include "control/protocol.hpp"
#include "transports/inet/inet.hpp"

using namespace mtperf;
using namespace mtperf::control;

namespace {

constexpr int kTimeoutMs = 5000;
const std::string kKey = "correct horse";

struct Conn {
  int fd;
  explicit Conn(const LocalServer& s)
      : fd(inet::connect_to(inet::resolve(s.address(), 0), Proto::tcp, SocketOptions{},
                            kTimeoutMs)) {}
  ~Conn() { ::close(fd); }
  void send(MsgType t, nlohmann::json body) const {
    send_message(fd, {t, std::move(body)}, kTimeoutMs);
  }
  Message recv() const { return recv_message(fd, kMaxResultBody, kTimeoutMs); }
  // HELLO -> WELCOME; returns the challenge.
  std::string hello() const {
    send(MsgType::hello, {{"version", kVersion}});
    Message w = recv();
    REQUIRE(w.type == MsgType::welcome);
    CHECK_FALSE(w.body.contains("addresses"));  // nothing about the host before the proof
    return w.body.at("challenge").get<std::string>();
  }
};

TestSpec short_rr() {
  TestSpec s;
  s.workload = Workload::rr;
  s.duration_s = 0.2;
  s.warmup_s = 0;
  return s;
}

ServerOptions keyed() {
  ServerOptions o;
  o.key = kKey;
  return o;
}

}  // namespace

TEST_CASE("with a key, WELCOME carries a challenge and no addresses", "[auth]") {
  LocalServer server(keyed());
  Conn c(server);
  std::string challenge = c.hello();
  CHECK(challenge.size() == 32);
}

TEST_CASE("a wrong AUTH gets an error and never the addresses", "[auth]") {
  LocalServer server(keyed());
  Conn c(server);
  std::string challenge = c.hello();
  c.send(MsgType::auth, {{"mac", auth_mac("battery staple", challenge)}});
  Message m = c.recv();
  CHECK(m.type == MsgType::error);
  CHECK_THAT(m.body.value("message", ""), Catch::Contains("authentication failed"));
  CHECK_FALSE(m.body.contains("addresses"));
}

TEST_CASE("the old proof (a MAC of the challenge alone, in TEST) is refused", "[auth]") {
  LocalServer server(keyed());
  Conn c(server);
  std::string challenge = c.hello();
  c.send(MsgType::test, {{"test", short_rr()}, {"auth", hmac_sha256_hex(kKey, challenge)}});
  Message m = c.recv();
  CHECK(m.type == MsgType::error);
  CHECK_THAT(m.body.value("message", ""), Catch::Contains("expected AUTH"));
}

TEST_CASE("after AUTH, the addresses; a TEST altered after its MAC is refused", "[auth]") {
  LocalServer server(keyed());
  Conn c(server);
  std::string challenge = c.hello();
  c.send(MsgType::auth, {{"mac", auth_mac(kKey, challenge)}});
  Message ok = c.recv();
  REQUIRE(ok.type == MsgType::authorized);
  CHECK(ok.body.at("addresses").is_array());
  nlohmann::json signed_test = short_rr();
  nlohmann::json sent = signed_test;
  sent["flows"] = 64;  // changed on the way
  c.send(MsgType::test, {{"test", sent}, {"mac", test_mac(kKey, challenge, signed_test)}});
  Message m = c.recv();
  CHECK(m.type == MsgType::error);
  CHECK_THAT(m.body.value("message", ""), Catch::Contains("authentication failed"));
}

TEST_CASE("a TEST without its MAC is refused by a keyed server", "[auth]") {
  LocalServer server(keyed());
  Conn c(server);
  std::string challenge = c.hello();
  c.send(MsgType::auth, {{"mac", auth_mac(kKey, challenge)}});
  REQUIRE(c.recv().type == MsgType::authorized);
  c.send(MsgType::test, {{"test", short_rr()}});
  Message m = c.recv();
  CHECK(m.type == MsgType::error);
  CHECK_THAT(m.body.value("message", ""), Catch::Contains("authentication failed"));
}

TEST_CASE("a client with the key runs its test; without it, it is told why", "[auth]") {
  LocalServer server(keyed());
  ClientOptions o;
  o.server = server.address();
  o.key = kKey;
  TestOutcome out = run_test(short_rr(), o);
  CHECK(out.client.errors.empty());
  REQUIRE(out.server);
  CHECK(out.server->errors.empty());
  o.key = "battery staple";
  CHECK_THROWS_WITH(run_test(short_rr(), o), Catch::Contains("authentication failed"));
  o.key.clear();
  CHECK_THROWS_WITH(run_test(short_rr(), o), Catch::Contains("--key"));
}

TEST_CASE("without a key, WELCOME lists the addresses at once", "[auth]") {
  LocalServer server;
  Conn c(server);
  c.send(MsgType::hello, {{"version", kVersion}});
  Message w = c.recv();
  REQUIRE(w.type == MsgType::welcome);
  CHECK(w.body.at("addresses").is_array());
  CHECK_FALSE(w.body.contains("challenge"));
}
