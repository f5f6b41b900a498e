// Control frames: what goes out comes back, and every malformed header is refused with a
// message that names what was wrong.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "control/protocol.hpp"

using namespace mtperf::control;

namespace {

const uint8_t* bytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

Message decode_frame(const std::string& frame, uint32_t max_body = kMaxRequestBody) {
  REQUIRE(frame.size() >= kHeaderBytes);
  MsgType type;
  uint32_t len = 0;
  decode_header(bytes(frame), type, len, max_body);
  REQUIRE(frame.size() == kHeaderBytes + len);
  return decode(type, std::string_view(frame).substr(kHeaderBytes));
}

std::string hello_frame() {
  return encode({MsgType::hello, {{"version", kVersion}}});
}

}  // namespace

TEST_CASE("a frame decodes to the message that was encoded", "[protocol]") {
  nlohmann::json body = {{"ports", {5001, 5002}}, {"cookie", uint64_t(1) << 63}, {"s", "x"}};
  for (auto type : {MsgType::hello, MsgType::welcome, MsgType::test, MsgType::ready, MsgType::start,
                    MsgType::started, MsgType::done, MsgType::result, MsgType::error, MsgType::auth,
                    MsgType::authorized}) {
    std::string frame = encode({type, body});
    CHECK(frame.substr(0, 4) == "MTPF");
    CHECK(uint8_t(frame[4]) == kVersion);
    Message m = decode_frame(frame);
    CHECK(m.type == type);
    CHECK(m.body == body);
  }
}

TEST_CASE("the body length is big-endian after the 12-byte header", "[protocol]") {
  std::string frame = encode({MsgType::start, nlohmann::json::object()});
  REQUIRE(frame.size() == kHeaderBytes + 2);  // "{}"
  CHECK(frame[8] == 0);
  CHECK(frame[9] == 0);
  CHECK(frame[10] == 0);
  CHECK(frame[11] == 2);
  CHECK(decode_frame(frame).body.empty());
}

TEST_CASE("a bad magic is refused", "[protocol]") {
  std::string frame = hello_frame();
  frame[0] = 'X';
  MsgType t;
  uint32_t len;
  CHECK_THROWS_AS(decode_header(bytes(frame), t, len, kMaxRequestBody), ProtocolError);
  CHECK_THROWS_WITH(decode_header(bytes(frame), t, len, kMaxRequestBody), Catch::Contains("magic"));
}

TEST_CASE("another protocol version is refused, naming both versions", "[protocol]") {
  std::string frame = hello_frame();
  frame[4] = char(kVersion + 1);
  MsgType t;
  uint32_t len;
  CHECK_THROWS_AS(decode_header(bytes(frame), t, len, kMaxRequestBody), ProtocolError);
  CHECK_THROWS_WITH(decode_header(bytes(frame), t, len, kMaxRequestBody),
                    Catch::Contains("version " + std::to_string(kVersion + 1)));
}

TEST_CASE("an unknown message type is refused", "[protocol]") {
  for (uint8_t bad : {uint8_t(0), uint8_t(uint8_t(kLastMsgType) + 1), uint8_t(255)}) {
    std::string frame = hello_frame();
    frame[5] = char(bad);
    MsgType t;
    uint32_t len;
    CHECK_THROWS_AS(decode_header(bytes(frame), t, len, kMaxRequestBody), ProtocolError);
    CHECK_THROWS_WITH(decode_header(bytes(frame), t, len, kMaxRequestBody),
                      Catch::Contains("unknown message type " + std::to_string(bad)));
  }
}

TEST_CASE("a body over the limit is refused before it is read", "[protocol]") {
  std::string frame = hello_frame();
  uint32_t big = kMaxRequestBody + 1;
  for (int i = 0; i < 4; ++i)
    frame[8 + i] = char((big >> (24 - 8 * i)) & 0xff);
  MsgType t;
  uint32_t len;
  CHECK_THROWS_AS(decode_header(bytes(frame), t, len, kMaxRequestBody), ProtocolError);
  CHECK_THROWS_WITH(decode_header(bytes(frame), t, len, kMaxRequestBody),
                    Catch::Contains(std::to_string(big)) && Catch::Contains("limit"));
  // The same length passes where the bound is larger (a client reading a RESULT).
  decode_header(bytes(frame), t, len, kMaxResultBody);
  CHECK(len == big);
  CHECK(t == MsgType::hello);
}

TEST_CASE("a body that is not a JSON object is refused", "[protocol]") {
  CHECK_THROWS_WITH(decode(MsgType::test, "{not json"), Catch::Contains("TEST body"));
  CHECK_THROWS_AS(decode(MsgType::test, "[1, 2]"), ProtocolError);
  CHECK_THROWS_AS(decode(MsgType::test, ""), ProtocolError);
}

TEST_CASE("message type names", "[protocol]") {
  CHECK(to_string(MsgType::hello) == "HELLO");
  CHECK(to_string(MsgType::result) == "RESULT");
  CHECK(to_string(MsgType::error) == "ERROR");
}

TEST_CASE("the key proof is HMAC-SHA256 in hex", "[protocol]") {
  // RFC 4231 test case 2.
  CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  std::string a = random_hex(16), b = random_hex(16);
  CHECK(a.size() == 32);
  CHECK(a != b);
}

TEST_CASE("the MACs bind the key, the challenge and the TEST body", "[protocol][auth]") {
  const std::string key = "k", c1 = random_hex(16), c2 = random_hex(16);
  CHECK(auth_mac(key, c1).size() == 64);
  CHECK(auth_mac(key, c1) != auth_mac(key, c2));
  CHECK(auth_mac(key, c1) != auth_mac("other", c1));
  nlohmann::json t1 = {{"flows", 1}, {"workload", "rr"}}, t2 = {{"flows", 2}, {"workload", "rr"}};
  CHECK(test_mac(key, c1, t1) != test_mac(key, c1, t2));
  CHECK(test_mac(key, c1, t1) != test_mac(key, c2, t1));
  // The AUTH proof cannot stand in for a TEST's: they are labelled apart.
  CHECK(test_mac(key, c1, t1) != auth_mac(key, c1));
  // Computed over the canonical form: what the client sends parses back to the same MAC.
  nlohmann::json spec = {{"duration_s", 0.1}, {"rate_bps", 1e9 / 3}, {"name", "caf\u00e9\n"}};
  nlohmann::json body = {{"test", spec}};
  Message m = decode(MsgType::test, encode({MsgType::test, body}).substr(kHeaderBytes));
  CHECK(test_mac(key, c1, m.body.at("test")) == test_mac(key, c1, spec));
  // And the bytes on the wire are exactly the ones the MAC covers.
  CHECK(encode({MsgType::test, body}).find(spec.dump()) != std::string::npos);
}

TEST_CASE("MACs are compared whole, and unequal lengths never match", "[protocol][auth]") {
  std::string m = auth_mac("k", "c");
  CHECK(mac_matches(m, m));
  CHECK_FALSE(mac_matches(m.substr(0, 63), m));
  CHECK_FALSE(mac_matches("", m));
  CHECK_FALSE(mac_matches("", ""));
  std::string flipped = m;
  flipped[63] = flipped[63] == '0' ? '1' : '0';
  CHECK_FALSE(mac_matches(flipped, m));
}

TEST_CASE("a frame dripped a byte at a time still has one deadline", "[protocol]") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  std::string frame = encode({MsgType::hello, {{"version", kVersion}}});
  std::thread drip([&] {
    for (char c : frame) {
      if (send(sv[1], &c, 1, MSG_NOSIGNAL) != 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  auto t0 = std::chrono::steady_clock::now();
  // Each byte comes well within 500 ms; the frame as a whole does not.
  CHECK_THROWS_WITH(recv_message(sv[0], kMaxRequestBody, 500), Catch::Contains("timed out"));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(s < 0.8);
  ::shutdown(sv[0], SHUT_RDWR);
  drip.join();
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST_CASE("an ERROR's message is bounded when it is thrown", "[protocol]") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  send_message(sv[1], {MsgType::error, {{"message", std::string(10000, 'x')}}}, 1000);
  try {
    expect(sv[0], MsgType::ready, kMaxRequestBody, 1000);
    FAIL("no exception");
  } catch (const ProtocolError& e) {
    CHECK(std::string(e.what()).size() < 1100);
  }
  ::close(sv[0]);
  ::close(sv[1]);
}
