// Sealed control frames (control/link.hpp) over socket pairs: what one end seals the other takes,
// in order; a frame modified, replayed, reordered, reflected, injected or carried over from
// another connection is refused, naming it; try_recv() takes a frame however it is cut up.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "control/link.hpp"

using namespace mtperf;
using namespace mtperf::control;

namespace {

constexpr int kMs = 2000;
const std::string kKey = "k3y";
const std::string kA = std::string(32, 'a'), kB = std::string(32, 'b');

struct Pair {
  int fd[2];
  Pair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0); }
  ~Pair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
  // Every byte waiting at end i.
  std::string drain(int i) const {
    std::string out(65536, '\0');
    ssize_t n = ::recv(fd[i], out.data(), out.size(), MSG_DONTWAIT);
    out.resize(n > 0 ? size_t(n) : 0);
    return out;
  }
  void put(int i, const std::string& bytes) const {
    write_all_until(fd[i], bytes.data(), bytes.size(), deadline_in(kMs));
  }
};

Message clock(int n) {
  return {MsgType::clock, {{"n", n}}};
}

// The bytes `link` sends for m.
std::string sealed_bytes(Link& link, const Pair& p, int other, const Message& m) {
  link.send(m, deadline_in(kMs));
  return p.drain(other);
}

}  // namespace

TEST_CASE("sealed frames go both ways, in order", "[link]") {
  Pair p;
  Link a(p.fd[0]), b(p.fd[1]);
  a.seal(kKey, true, kA, kB);
  b.seal(kKey, false, kA, kB);
  for (int i = 0; i < 3; ++i) {
    send_message(a, clock(i), kMs);
    CHECK(recv_message(b, 1024, kMs).body.at("n") == i);
    send_message(b, clock(10 + i), kMs);
    CHECK(recv_message(a, 1024, kMs).body.at("n") == 10 + i);
  }
}

namespace {

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += char(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

std::string labelled(const char* tag, const char* label) {
  std::string out = tag;
  for (const std::string& part : {std::string(label), kA, kB})
    out += '\0' + part;
  return out;
}

}  // namespace

TEST_CASE("a sealed frame's trailer is HMAC-SHA256(K_dir, seq | frame), as link.hpp draws it",
          "[link]") {
  Pair p;
  Link a(p.fd[0]), b(p.fd[1]);
  a.seal(kKey, true, kA, kB);
  b.seal(kKey, false, kA, kB);
  const std::string init = unhex(hmac_sha256_hex(kKey, labelled("mtperf seal", "initiator")));
  const std::string resp = unhex(hmac_sha256_hex(kKey, labelled("mtperf seal", "responder")));
  for (uint64_t seq = 0; seq < 3; ++seq) {
    std::string count(8, '\0');
    count[7] = char(seq);
    const Message m = clock(int(seq));
    const std::string frame = encode(m);
    const std::string from_a = sealed_bytes(a, p, 1, m);
    CHECK(from_a == frame + unhex(hmac_sha256_hex(init, count + frame)));
    p.put(0, from_a);
    CHECK(recv_message(b, 1024, kMs).body.at("n") == int(seq));
    const std::string from_b = sealed_bytes(b, p, 0, m);
    CHECK(from_b == frame + unhex(hmac_sha256_hex(resp, count + frame)));
    p.put(1, from_b);
    CHECK(recv_message(a, 1024, kMs).body.at("n") == int(seq));
  }
}

TEST_CASE(
    "a sealed frame altered, replayed, reordered, reflected or of another connection is "
    "refused",
    "[link]") {
  Pair p;
  Link a(p.fd[0]), b(p.fd[1]);
  a.seal(kKey, true, kA, kB);
  b.seal(kKey, false, kA, kB);
  const std::string first = sealed_bytes(a, p, 1, clock(1));
  const std::string second = sealed_bytes(a, p, 1, clock(2));
  const auto refused = Catch::Contains("CLOCK frame failed its integrity check");
  SECTION("altered: a byte of the body") {
    std::string bad = first;
    bad[15] ^= 0x20;
    p.put(0, bad);
    CHECK_THROWS_WITH(b.recv(1024, deadline_in(kMs)), refused);
  }
  SECTION("altered: the trailer") {
    std::string bad = first;
    bad.back() ^= 0x01;
    p.put(0, bad);
    CHECK_THROWS_WITH(b.recv(1024, deadline_in(kMs)), refused);
  }
  SECTION("replayed") {
    p.put(0, first);
    CHECK(b.recv(1024, deadline_in(kMs)).body.at("n") == 1);
    p.put(0, first);
    CHECK_THROWS_WITH(b.recv(1024, deadline_in(kMs)), refused);
  }
  SECTION("reordered") {
    p.put(0, second);
    CHECK_THROWS_WITH(b.recv(1024, deadline_in(kMs)), refused);
  }
  SECTION("reflected back to its sender") {
    p.put(1, first);
    CHECK_THROWS_WITH(a.recv(1024, deadline_in(kMs)), refused);
  }
  SECTION("carried over from another connection (other nonces)") {
    Pair q;
    Link c(q.fd[1]);
    c.seal(kKey, false, kA, std::string(32, 'c'));
    q.put(0, first);
    CHECK_THROWS_WITH(c.recv(1024, deadline_in(kMs)), refused);
  }
  SECTION("injected: a plain frame where sealed ones are due") {
    p.put(0, encode(clock(3)) + std::string(32, '\0'));
    CHECK_THROWS_WITH(b.recv(1024, deadline_in(kMs)), refused);
  }
}

TEST_CASE("an unsealed ERROR is quoted, marked as unauthenticated, and still refused", "[link]") {
  Pair p;
  Link b(p.fd[1]);
  b.seal(kKey, false, kA, kB);
  p.put(0, encode({MsgType::error, {{"message", "rank 1 has joined already"}}}) +
               std::string(32, '\0'));
  CHECK_THROWS_WITH(b.recv(1024, deadline_in(kMs)),
                    Catch::Contains("its unauthenticated text: \"rank 1 has joined already\""));
}

TEST_CASE("try_recv takes a frame however it is cut up, and only once whole", "[link]") {
  Pair p;
  Link a(p.fd[0]), b(p.fd[1]);
  a.seal(kKey, true, kA, kB);
  b.seal(kKey, false, kA, kB);
  std::string bytes = sealed_bytes(a, p, 1, clock(7));
  bytes += sealed_bytes(a, p, 1, clock(8));
  Message m;
  for (size_t i = 0; i < bytes.size(); ++i) {
    CHECK_FALSE(b.try_recv(m, 1024));
    p.put(0, bytes.substr(i, 1));
    if (b.try_recv(m, 1024)) {
      CHECK(m.body.at("n") == (i < bytes.size() / 2 ? 7 : 8));
      CHECK((i + 1 == bytes.size() / 2 || i + 1 == bytes.size()));
    }
  }
}

TEST_CASE("try_recv reports the peer's close and an oversize frame", "[link]") {
  Pair p;
  Link b(p.fd[1]);
  Message m;
  p.put(0, encode({MsgType::clock, {{"pad", std::string(2000, 'x')}}}).substr(0, 12));
  CHECK_THROWS_WITH(b.try_recv(m, 1024), Catch::Contains("exceeds the limit of 1024"));
  Pair q;
  Link c(q.fd[1]);
  ::shutdown(q.fd[0], SHUT_WR);
  CHECK_THROWS_WITH(c.try_recv(m, 1024), Catch::Contains("closed"));
}

TEST_CASE("nonces are checked; the proofs differ by role and by nonce", "[link]") {
  CHECK(nonce_field({{"nonce", kA}}, "nonce", "HELLO") == kA);
  CHECK_THROWS_WITH(nonce_field(nlohmann::json::object(), "nonce", "HELLO"),
                    Catch::Contains("HELLO.nonce: missing"));
  CHECK_THROWS_WITH(nonce_field({{"nonce", "ABC"}}, "nonce", "HELLO"),
                    Catch::Contains("not 32 lowercase hex"));
  CHECK_THROWS(nonce_field({{"nonce", 5}}, "nonce", "HELLO"));
  CHECK(prove(kKey, "server", kA, kB) != prove(kKey, "coordinator", kA, kB));
  CHECK(prove(kKey, "server", kA, kB) != prove(kKey, "server", kB, kA));
  CHECK(prove(kKey, "server", kA, kB) != prove("other", "server", kA, kB));
}
