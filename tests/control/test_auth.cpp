// A server with a key: it proves the key first (WELCOME's proof over the client's nonce), nothing
// about the host before the client proves it (AUTH), every frame after AUTH sealed (a frame
// injected, replayed or altered on the path is refused), and the proof covers the TEST body.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "control/client.hpp"
#include "control/link.hpp"
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
  Link link;
  std::string nonce = random_hex(16);
  explicit Conn(const LocalServer& s)
      : fd(inet::connect_to(inet::resolve(s.address(), 0), Proto::tcp, SocketOptions{},
                            kTimeoutMs)),
        link(fd) {}
  ~Conn() { ::close(fd); }
  void send(MsgType t, nlohmann::json body) {
    send_message(link, {t, std::move(body)}, kTimeoutMs);
  }
  Message recv() { return recv_message(link, kMaxResultBody, kTimeoutMs); }
  // HELLO -> WELCOME, the server's proof checked; returns the challenge.
  std::string hello() {
    send(MsgType::hello, {{"version", kVersion}, {"nonce", nonce}});
    Message w = recv();
    REQUIRE(w.type == MsgType::welcome);
    CHECK_FALSE(w.body.contains("addresses"));  // nothing about the host before the proof
    const std::string challenge = w.body.at("challenge").get<std::string>();
    CHECK(w.body.at("proof") == prove(kKey, "server", nonce, challenge));
    return challenge;
  }
  // hello(), AUTH, then sealed: AUTHORIZED.
  std::string authorized() {
    std::string challenge = hello();
    send(MsgType::auth, {{"mac", auth_mac(kKey, challenge)}});
    link.seal(kKey, true, nonce, challenge);
    REQUIRE(recv().type == MsgType::authorized);
    return challenge;
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
  c.link.seal(kKey, true, c.nonce, challenge);
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
  c.authorized();
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
  CHECK_THROWS_WITH(run_test(short_rr(), o), Catch::Contains("--key-file"));
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

TEST_CASE("a keyed server refuses a HELLO without a nonce, naming it", "[auth]") {
  LocalServer server(keyed());
  Conn c(server);
  c.send(MsgType::hello, {{"version", kVersion}});
  Message m = c.recv();
  CHECK(m.type == MsgType::error);
  CHECK_THAT(m.body.value("message", ""), Catch::Contains("HELLO.nonce: missing"));
}

TEST_CASE("after AUTH, a frame injected, replayed or altered on the path is refused", "[auth]") {
  LocalServer server(keyed());
  SECTION("injected: a TEST with a forged trailer after AUTH") {
    Conn c(server);
    c.authorized();
    std::string frame = encode({MsgType::test, {{"test", short_rr()}}}) + std::string(32, 'x');
    write_all_until(c.fd, frame.data(), frame.size(), deadline_in(kTimeoutMs));
    Message m = c.recv();  // the server's ERROR, itself sealed: it comes from the server
    CHECK(m.type == MsgType::error);
    CHECK_THAT(m.body.value("message", ""), Catch::Contains("failed its integrity check"));
  }
  SECTION("altered: one byte of a sealed TEST flipped") {
    Conn c(server);
    std::string challenge = c.authorized();
    nlohmann::json t = short_rr();
    const std::string mac = test_mac(kKey, challenge, t);
    // A sealed frame made by a second link of the same keys, then altered in flight.
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    Link tap(sv[0]);
    tap.seal(kKey, true, c.nonce, challenge);
    tap.send({MsgType::test, {{"test", t}, {"mac", mac}}}, deadline_in(kTimeoutMs));
    std::string frame(4096, '\0');
    ssize_t n = ::read(sv[1], frame.data(), frame.size());
    REQUIRE(n > 44);
    frame.resize(size_t(n));
    frame[20] ^= 0x01;
    ::close(sv[0]);
    ::close(sv[1]);
    write_all_until(c.fd, frame.data(), frame.size(), deadline_in(kTimeoutMs));
    Message m = c.recv();
    CHECK(m.type == MsgType::error);
    CHECK_THAT(m.body.value("message", ""), Catch::Contains("failed its integrity check"));
  }
}

TEST_CASE("a keyed client refuses a server that does not ask for the key (no downgrade)",
          "[auth]") {
  LocalServer server;  // no key
  ClientOptions o;
  o.server = server.address();
  o.key = kKey;
  CHECK_THROWS_WITH(run_test(short_rr(), o),
                    Catch::Contains("does not ask for a key") &&
                        Catch::Contains("refusing to run unauthenticated"));
}

TEST_CASE("a peer that is not an mtperf server is named as such, with its address", "[auth]") {
  int lfd = inet::listen_on(inet::resolve("127.0.0.1:0", 0), Proto::tcp, SocketOptions{}, 4);
  const std::string where = inet::local_address(lfd).to_string();
  std::thread other([lfd] {
    int fd = inet::accept_within(lfd, kTimeoutMs);
    if (fd < 0) return;
    const std::string banner = "SSH-2.0-OpenSSH_9.2\r\n";
    (void)::write(fd, banner.data(), banner.size());
    char c;
    (void)::read(fd, &c, 1);
    ::close(fd);
  });
  ClientOptions o;
  o.server = where;
  CHECK_THROWS_WITH(run_test(short_rr(), o),
                    Catch::Contains("the server at " + where) &&
                        Catch::Contains("does not speak mtperf's control protocol"));
  other.join();
  ::close(lfd);
}

// Issue 40: a listener that never speaks is told apart from one that speaks another protocol:
// after the setup deadline (10 s) the error names the address and asks whether an mtperf server
// listens there.
TEST_CASE("a peer that never answers the HELLO is named, with its address, after the deadline",
          "[auth]") {
  int lfd = inet::listen_on(inet::resolve("127.0.0.1:0", 0), Proto::tcp, SocketOptions{}, 4);
  const std::string where = inet::local_address(lfd).to_string();
  std::thread silent([lfd] {
    int fd = inet::accept_within(lfd, kTimeoutMs);
    if (fd < 0) return;
    // Reads the HELLO and whatever follows, answers nothing, until the client leaves.
    char buf[512];
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 20'000) > 0 && ::read(fd, buf, sizeof buf) > 0) {
    }
    ::close(fd);
  });
  ClientOptions o;
  o.server = where;
  CHECK_THROWS_WITH(run_test(short_rr(), o),
                    Catch::Contains("the server at " + where + " sent nothing within 10 s") &&
                        Catch::Contains("is an mtperf server (mtperf serve) listening there"));
  silent.join();
  ::close(lfd);
}
