#pragma once
// The control protocol: one TCP connection per test, length-prefixed frames with JSON bodies.
//
//   client                                         server
//     | -- HELLO   {version}                   -->  |
//     | <-- WELCOME {version, challenge}        --  |   the server has a key: nothing else
//     | <-- WELCOME {version, addresses}        --  |   no key: its addresses at once
//     | -- AUTH    {mac}                       -->  |   key only: mac = M("auth")
//     | <-- AUTHORIZED {addresses}              --  |   key only: or ERROR, and the end
//     | -- TEST    {test, mac?}                -->  |   mac (key only) = M("test", test)
//     | <-- READY   {ports[], cookie}           --  |   or ERROR {message}: bad field, limit
//     |  (data: each flow connects to ports[i] and proves the cookie, see endpoint.hpp)
//     | -- START   {not_connected?}            -->  |   flows whose connect failed: the server
//     |                                             |   stops waiting for them, drops them
//     | <-- STARTED {}                          --  |   both sides run warm-up + window
//     | <-- STOP    {cause, at_s, reason}       --  |   test.stop_on_error only: the server's
//     |                                             |   flows failed; the client ends the window
//     | -- DONE    {}                          -->  |   the client's flows have ended
//     | <-- RESULT  {server side figures}       --  |
//
// Frame: "MTPF" | version (1) | type (1) | reserved (2) | body length (4, big-endian) | body.
// A whole frame, sent or received, has one absolute deadline (a peer that drips a byte at a time
// is cut off at it, not kept alive by each byte). The handshake, from the connection to a TEST
// the server accepts, has one too (ServerOptions::handshake_timeout_ms); until then a connection
// is pending, counted apart from the tests running. An unknown type, a bad magic or an oversize
// body ends the exchange with an error that names it.
//
// Authentication (a pre-shared key K; the challenge C is 32 lowercase hex characters, sent as
// text and used as its 32 ASCII bytes):
//   M("auth")    = hex(HMAC-SHA256(K, "mtperf auth" 0x00 C))
//   M("test", T) = hex(HMAC-SHA256(K, "mtperf test" 0x00 C 0x00 T))
// where T is the TEST body's "test" value exactly as it is on the wire. Both ends write JSON
// in one canonical form — object keys in byte order, no whitespace, the shortest escapes and
// the shortest round-trip numbers (nlohmann::json::dump() with no indent) — and the server
// checks the MAC over the canonical form of the object it parsed, which equals the bytes sent
// by a client that wrote the canonical form. hex() is lowercase; MACs are compared in constant
// time. The server says nothing about the host (its addresses) until AUTH is proven.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/clock.hpp"

namespace mtperf::control {

inline constexpr uint8_t kVersion = 3;  // 3: HELLO's nonce, WELCOME's proof, sealed frames
inline constexpr uint16_t kDefaultPort = 12865;
inline constexpr size_t kHeaderBytes = 12;
inline constexpr uint32_t kMaxRequestBody = 64 * 1024;  // what a server accepts
inline constexpr uint32_t kMaxResultBody = 64u << 20;   // what a client accepts
inline constexpr size_t kFlowHelloBytes = 16;

enum class MsgType : uint8_t {
  hello = 1,
  welcome = 2,
  test = 3,
  ready = 4,
  start = 5,
  started = 6,
  done = 7,
  result = 8,
  error = 9,
  auth = 10,
  authorized = 11,
  stop = 12,
  // `mtperf fleet` (fleet/protocol.hpp): a rank and the coordinator, rank 0.
  join = 13,
  roster = 14,
  clock = 15,
  round = 16,
  results = 17,
  finish = 18,
};
inline constexpr MsgType kLastMsgType = MsgType::finish;
std::string_view to_string(MsgType t);

struct Message {
  MsgType type = MsgType::error;
  nlohmann::json body;
};

// Thrown for a protocol violation or a failed exchange; the message says what and with whom.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string encode(const Message& m);
// The same frame from a body already dumped (JSON text, as Message::body.dump() makes it).
std::string encode(MsgType type, std::string_view body);
// Parses a frame header; throws ProtocolError naming the bad magic, version, type or length.
void decode_header(const uint8_t* h, MsgType& type, uint32_t& length, uint32_t max_body);
Message decode(MsgType type, std::string_view body);

// CLOCK_MONOTONIC now, and timeout_ms from now, in ns: the deadlines below (platform/clock.hpp).
inline int64_t monotonic_ns() {
  return now_ns();
}
using mtperf::deadline_in;

// Every byte of [data, data + len) read from (written to) a socket by deadline_ns, however the
// peer spreads them out; ProtocolError on timeout, EOF or a socket error.
void read_all_until(int fd, char* data, size_t len, int64_t deadline_ns);
void write_all_until(int fd, const char* data, size_t len, int64_t deadline_ns);

// Blocking frame I/O over a socket: the whole frame by deadline_ns (CLOCK_MONOTONIC); throws
// ProtocolError on timeout, EOF ("the peer closed the control connection") or a malformed frame.
void send_message_until(int fd, const Message& m, int64_t deadline_ns);
Message recv_message_until(int fd, uint32_t max_body, int64_t deadline_ns);
// Receives and checks the type; an ERROR frame from the peer is thrown as its message.
Message expect_until(int fd, MsgType want, uint32_t max_body, int64_t deadline_ns);
// The check of expect_until on a message already received: m itself when it is of type want.
Message check_type(Message m, MsgType want);
// The same with the whole frame due timeout_ms from now.
void send_message(int fd, const Message& m, int timeout_ms);
Message recv_message(int fd, uint32_t max_body, int timeout_ms);
Message expect(int fd, MsgType want, uint32_t max_body, int timeout_ms);

// HMAC-SHA256(key, data) as lowercase hex (64 characters).
std::string hmac_sha256_hex(std::string_view key, std::string_view data);
// M("auth") and M("test", T) of the drawing above; `test` is the TEST body's "test" value.
std::string auth_mac(std::string_view key, std::string_view challenge);
std::string test_mac(std::string_view key, std::string_view challenge, const nlohmann::json& test);
// Constant-time comparison (CRYPTO_memcmp) of a MAC received with the one expected; a MAC of
// another length is unequal.
bool mac_matches(std::string_view received, std::string_view expected);
std::string random_hex(size_t bytes);

// START's "not_connected": the flows whose connect failed on the client (without --need-all the
// test goes on with the others), as [first, last] ranges of flow ids, ascending and apart, so
// that a storm of failures at the end of the set-up stays a few bytes. `ids` ascending.
nlohmann::json not_connected_to_json(const std::vector<uint32_t>& ids);
// The ids of START's "not_connected" (none when absent), each checked against a test of `flows`
// flows: ranges [first, last] with first <= last < flows, ascending and apart, at most `flows`
// of them, and at least one flow left connected. Throws ProtocolError naming the bad entry.
std::vector<uint32_t> not_connected_from_json(const nlohmann::json& start, uint32_t flows);

}  // namespace mtperf::control
