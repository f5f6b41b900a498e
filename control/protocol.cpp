#include "control/protocol.hpp"

#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cerrno>
#include <cstring>

#include "transports/inet/inet.hpp"

namespace mtperf::control {

std::string_view to_string(MsgType t) {
  switch (t) {
    case MsgType::hello:
      return "HELLO";
    case MsgType::welcome:
      return "WELCOME";
    case MsgType::test:
      return "TEST";
    case MsgType::ready:
      return "READY";
    case MsgType::start:
      return "START";
    case MsgType::started:
      return "STARTED";
    case MsgType::done:
      return "DONE";
    case MsgType::result:
      return "RESULT";
    case MsgType::error:
      return "ERROR";
  }
  return "?";
}

std::string encode(const Message& m) {
  std::string body = m.body.dump();
  std::string out(kHeaderBytes, '\0');
  std::memcpy(out.data(), "MTPF", 4);
  out[4] = char(kVersion);
  out[5] = char(m.type);
  uint32_t len = uint32_t(body.size());
  for (int i = 0; i < 4; ++i)
    out[8 + i] = char((len >> (24 - 8 * i)) & 0xff);
  return out + body;
}

void decode_header(const uint8_t* h, MsgType& type, uint32_t& length, uint32_t max_body) {
  if (std::memcmp(h, "MTPF", 4) != 0) {
    throw ProtocolError("control: bad frame magic (the peer is not an mtperf server or client)");
  }
  if (h[4] != kVersion) {
    throw ProtocolError("control: protocol version " + std::to_string(h[4]) + " (this is " +
                        std::to_string(kVersion) + ")");
  }
  if (h[5] < uint8_t(MsgType::hello) || h[5] > uint8_t(MsgType::error)) {
    throw ProtocolError("control: unknown message type " + std::to_string(h[5]));
  }
  type = MsgType(h[5]);
  length = (uint32_t(h[8]) << 24) | (uint32_t(h[9]) << 16) | (uint32_t(h[10]) << 8) | h[11];
  if (length > max_body) {
    throw ProtocolError("control: " + std::string(to_string(type)) + " body of " +
                        std::to_string(length) + " bytes exceeds the limit of " +
                        std::to_string(max_body));
  }
}

Message decode(MsgType type, std::string_view body) {
  Message m;
  m.type = type;
  m.body = nlohmann::json::parse(body, nullptr, false);
  if (m.body.is_discarded() || !m.body.is_object()) {
    throw ProtocolError("control: " + std::string(to_string(type)) + " body is not a JSON object");
  }
  return m;
}

static std::string io_failure(const char* what) {
  if (errno == ETIMEDOUT) return std::string("control: timed out ") + what;
  if (errno == 0) return "control: the peer closed the control connection";
  return std::string("control: ") + what + ": " + std::strerror(errno);
}

void send_message(int fd, const Message& m, int timeout_ms) {
  std::string frame = encode(m);
  if (!inet::write_all(fd, frame.data(), frame.size(), timeout_ms)) {
    throw ProtocolError(io_failure("sending"));
  }
}

Message recv_message(int fd, uint32_t max_body, int timeout_ms) {
  uint8_t h[kHeaderBytes];
  if (!inet::read_exact(fd, h, sizeof h, timeout_ms)) throw ProtocolError(io_failure("receiving"));
  MsgType type;
  uint32_t len;
  decode_header(h, type, len, max_body);
  std::string body(len, '\0');
  if (len > 0 && !inet::read_exact(fd, body.data(), len, timeout_ms)) {
    throw ProtocolError(io_failure("receiving"));
  }
  return decode(type, body);
}

Message expect(int fd, MsgType want, uint32_t max_body, int timeout_ms) {
  Message m = recv_message(fd, max_body, timeout_ms);
  if (m.type == MsgType::error) {
    throw ProtocolError("server: " + m.body.value("message", std::string("(no message)")));
  }
  if (m.type != want) {
    throw ProtocolError("control: expected " + std::string(to_string(want)) + ", got " +
                        std::string(to_string(m.type)));
  }
  return m;
}

std::string auth_response(const std::string& key, const std::string& challenge) {
  unsigned char mac[32];
  unsigned int len = sizeof mac;
  HMAC(EVP_sha256(), key.data(), int(key.size()),
       reinterpret_cast<const unsigned char*>(challenge.data()), challenge.size(), mac, &len);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += hex[mac[i] >> 4];
    out += hex[mac[i] & 15];
  }
  return out;
}

std::string random_hex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), int(bytes)) != 1) {
    throw std::runtime_error("no random bytes from OpenSSL");
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

}  // namespace mtperf::control
