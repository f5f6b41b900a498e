#pragma once
// The control protocol: one TCP connection per test, length-prefixed frames with JSON bodies.
//
//   client                                         server
//     | -- HELLO   {version, auth?}            -->  |
//     | <-- WELCOME {version, challenge?}       --  |   challenge: when the server has a key
//     | -- TEST    {test, auth?}               -->  |   auth: HMAC-SHA256(key, challenge), hex
//     | <-- READY   {ports[], cookie}           --  |   or ERROR {message}: bad field, limit
//     |  (data: each flow connects to ports[i] and sends its 16-byte hello: cookie, flow id)
//     | -- START   {}                          -->  |
//     | <-- STARTED {}                          --  |   both sides run warm-up + window
//     | -- DONE    {}                          -->  |   the client's flows have ended
//     | <-- RESULT  {server side figures}       --  |
//
// Frame: "MTPF" | version (1) | type (1) | reserved (2) | body length (4, big-endian) | body.
// Every read has a deadline and a size bound; an unknown type, a bad magic or an oversize body
// ends the exchange with an error that names it.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mtperf::control {

inline constexpr uint8_t kVersion = 1;
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
};
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
// Parses a frame header; throws ProtocolError naming the bad magic, version, type or length.
void decode_header(const uint8_t* h, MsgType& type, uint32_t& length, uint32_t max_body);
Message decode(MsgType type, std::string_view body);

// Blocking frame I/O over a socket with a deadline; throws ProtocolError on timeout, EOF
// ("the peer closed the control connection") or a malformed frame.
void send_message(int fd, const Message& m, int timeout_ms);
Message recv_message(int fd, uint32_t max_body, int timeout_ms);
// Receives and checks the type; an ERROR frame from the peer is thrown as its message.
Message expect(int fd, MsgType want, uint32_t max_body, int timeout_ms);

// HMAC-SHA256(key, challenge) as lowercase hex.
std::string auth_response(const std::string& key, const std::string& challenge);
std::string random_hex(size_t bytes);

}  // namespace mtperf::control
