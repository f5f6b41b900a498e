#include "control/protocol.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "workloads/json_field.hpp"

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
    case MsgType::auth:
      return "AUTH";
    case MsgType::authorized:
      return "AUTHORIZED";
    case MsgType::stop:
      return "STOP";
    case MsgType::join:
      return "JOIN";
    case MsgType::roster:
      return "ROSTER";
    case MsgType::clock:
      return "CLOCK";
    case MsgType::round:
      return "ROUND";
    case MsgType::results:
      return "RESULTS";
    case MsgType::finish:
      return "FINISH";
  }
  return "?";
}

std::string encode(const Message& m) {
  return encode(m.type, m.body.dump());
}

std::string encode(MsgType type, std::string_view body) {
  std::string out(kHeaderBytes, '\0');
  out.reserve(kHeaderBytes + body.size() + 32);  // and a sealed frame's trailer
  std::memcpy(out.data(), "MTPF", 4);
  out[4] = char(kVersion);
  out[5] = char(type);
  uint32_t len = uint32_t(body.size());
  for (int i = 0; i < 4; ++i)
    out[8 + i] = char((len >> (24 - 8 * i)) & 0xff);
  out += body;
  return out;
}

void decode_header(const uint8_t* h, MsgType& type, uint32_t& length, uint32_t max_body) {
  if (std::memcmp(h, "MTPF", 4) != 0) {
    throw ProtocolError("control: bad frame magic (the peer is not an mtperf server or client)");
  }
  if (h[4] != kVersion) {
    throw ProtocolError("control: protocol version " + std::to_string(h[4]) + " (this is " +
                        std::to_string(kVersion) + ")");
  }
  if (h[5] < uint8_t(MsgType::hello) || h[5] > uint8_t(kLastMsgType)) {
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

namespace {

[[noreturn]] void io_failure(const char* what, int err) {
  if (err == ETIMEDOUT) throw ProtocolError(std::string("control: timed out ") + what);
  if (err == 0) throw ProtocolError("control: the peer closed the control connection");
  throw ProtocolError(std::string("control: ") + what + ": " + std::strerror(err));
}

// Waits for `events` on fd until the deadline; false when it passed.
bool wait_until(int fd, short events, int64_t deadline_ns) {
  for (;;) {
    int64_t left_ns = deadline_ns - now_ns();
    if (left_ns <= 0) return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, int(std::min<int64_t>((left_ns + 999999) / 1000000, 1 << 30)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // let the next call report the error
  }
}

}  // namespace

// Every byte of [data, data + len) by the deadline, however the peer spreads them out.
void read_all_until(int fd, char* data, size_t len, int64_t deadline_ns) {
  while (len > 0) {
    ssize_t n = ::recv(fd, data, len, MSG_DONTWAIT);
    if (n > 0) {
      data += n;
      len -= size_t(n);
      continue;
    }
    if (n == 0) io_failure("receiving", 0);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) io_failure("receiving", errno);
    if (!wait_until(fd, POLLIN, deadline_ns)) io_failure("receiving", ETIMEDOUT);
  }
}

void write_all_until(int fd, const char* data, size_t len, int64_t deadline_ns) {
  while (len > 0) {
    ssize_t n = ::send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data += n;
      len -= size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) io_failure("sending", errno);
    if (!wait_until(fd, POLLOUT, deadline_ns)) io_failure("sending", ETIMEDOUT);
  }
}

void send_message_until(int fd, const Message& m, int64_t deadline_ns) {
  std::string frame = encode(m);
  write_all_until(fd, frame.data(), frame.size(), deadline_ns);
}

Message recv_message_until(int fd, uint32_t max_body, int64_t deadline_ns) {
  uint8_t h[kHeaderBytes];
  read_all_until(fd, reinterpret_cast<char*>(h), sizeof h, deadline_ns);
  MsgType type;
  uint32_t len;
  decode_header(h, type, len, max_body);
  std::string body(len, '\0');
  read_all_until(fd, body.data(), len, deadline_ns);
  return decode(type, body);
}

Message expect_until(int fd, MsgType want, uint32_t max_body, int64_t deadline_ns) {
  return check_type(recv_message_until(fd, max_body, deadline_ns), want);
}

Message check_type(Message m, MsgType want) {
  if (m.type == MsgType::error) {
    auto it = m.body.find("message");
    std::string text = it != m.body.end() && it->is_string()
                           ? it->get<std::string>().substr(0, 1024)
                           : "(no message)";
    throw ProtocolError("server: " + text);
  }
  if (m.type != want) {
    throw ProtocolError("control: expected " + std::string(to_string(want)) + ", got " +
                        std::string(to_string(m.type)));
  }
  return m;
}

void send_message(int fd, const Message& m, int timeout_ms) {
  send_message_until(fd, m, deadline_in(timeout_ms));
}

Message recv_message(int fd, uint32_t max_body, int timeout_ms) {
  return recv_message_until(fd, max_body, deadline_in(timeout_ms));
}

Message expect(int fd, MsgType want, uint32_t max_body, int timeout_ms) {
  return expect_until(fd, want, max_body, deadline_in(timeout_ms));
}

namespace {

std::string hex_of(const unsigned char* p, size_t n) {
  return fmt::format("{:02x}", fmt::join(p, p + n, ""));
}

}  // namespace

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key.data(), int(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac,
           &len) == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed in OpenSSL");
  }
  return hex_of(mac, len);
}

std::string auth_mac(std::string_view key, std::string_view challenge) {
  std::string data = "mtperf auth";
  data += '\0';
  data += challenge;
  return hmac_sha256_hex(key, data);
}

std::string test_mac(std::string_view key, std::string_view challenge, const nlohmann::json& test) {
  std::string data = "mtperf test";
  data += '\0';
  data += challenge;
  data += '\0';
  data += test.dump();
  return hmac_sha256_hex(key, data);
}

bool mac_matches(std::string_view received, std::string_view expected) {
  if (received.size() != expected.size() || expected.empty()) return false;
  return CRYPTO_memcmp(received.data(), expected.data(), expected.size()) == 0;
}

std::string random_hex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), int(bytes)) != 1) {
    throw std::runtime_error("no random bytes from OpenSSL");
  }
  return hex_of(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
}

nlohmann::json not_connected_to_json(const std::vector<uint32_t>& ids) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1)
      ++j;
    out.push_back({ids[i], ids[j]});
    i = j + 1;
  }
  return out;
}

std::vector<uint32_t> not_connected_from_json(const nlohmann::json& start, uint32_t flows) {
  auto it = start.find("not_connected");
  if (it == start.end()) return {};
  const std::string field = "START.not_connected";
  auto bad = [&](const std::string& where, const std::string& why) -> void {
    throw ProtocolError("the client's " + where + ": " + why);
  };
  if (!it->is_array()) bad(field, std::string("wrong type: ") + it->type_name() + ", not a list");
  if (it->size() > flows) {
    bad(field,
        std::to_string(it->size()) + " ranges for a test of " + std::to_string(flows) + " flows");
  }
  std::vector<uint32_t> ids;
  uint64_t lowest = 0;  // where the next range may start: ranges ascend and do not overlap
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& r = (*it)[i];
    const std::string where = field + "[" + std::to_string(i) + "]";
    if (!r.is_array() || r.size() != 2) bad(where, "not a [first, last] pair of flow ids");
    uint32_t first = 0, last = 0;
    try {
      first = json_field::integer<uint32_t>(r[0], where + "[0]");
      last = json_field::integer<uint32_t>(r[1], where + "[1]");
    } catch (const std::invalid_argument& e) {
      throw ProtocolError(std::string("the client's ") + e.what());
    }
    if (last < first) bad(where, "last flow " + std::to_string(last) + " before the first");
    if (last >= flows) {
      bad(where, "flow " + std::to_string(last) + " is not in the test (flows 0.." +
                     std::to_string(flows - 1) + ")");
    }
    if (first < lowest)
      bad(where, "flow " + std::to_string(first) + " listed again or out of order");
    for (uint64_t f = first; f <= last; ++f)
      ids.push_back(uint32_t(f));
    lowest = uint64_t(last) + 1;
  }
  if (!ids.empty() && ids.size() >= flows) {
    bad(field, "every flow of the test; a test with no flow connected ends before START");
  }
  return ids;
}

}  // namespace mtperf::control
