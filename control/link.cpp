#include "control/link.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace mtperf::control {
namespace {

constexpr size_t kTrailerBytes = 32;

std::string labelled(std::string_view tag, std::string_view label, std::string_view a,
                     std::string_view b) {
  std::string data(tag);
  for (std::string_view part : {label, a, b}) {
    data += '\0';
    data += part;
  }
  return data;
}

void hmac_raw(const void* key, size_t key_len, const std::string& data, unsigned char* out) {
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key, int(key_len), reinterpret_cast<const unsigned char*>(data.data()),
           data.size(), out, &len) == nullptr ||
      len != kTrailerBytes)
    throw std::runtime_error("HMAC-SHA256 failed in OpenSSL");
}

[[noreturn]] void mac_failed() {
  throw std::runtime_error("HMAC-SHA256 failed in OpenSSL");
}

// An HMAC-SHA256 context keyed with `key`.
EVP_MAC_CTX* keyed_mac(const std::array<unsigned char, 32>& key) {
  static EVP_MAC* const hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (hmac == nullptr) mac_failed();
  EVP_MAC_CTX* c = EVP_MAC_CTX_new(hmac);
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  if (c == nullptr || EVP_MAC_init(c, key.data(), key.size(), params) != 1) {
    EVP_MAC_CTX_free(c);
    mac_failed();
  }
  return c;
}

// The trailer of frame (header | body) number seq under the direction's keyed context.
void trailer(EVP_MAC_CTX* mac, uint64_t seq, std::string_view frame, unsigned char* out) {
  unsigned char count[8];
  for (int i = 0; i < 8; ++i)
    count[i] = (unsigned char)((seq >> (56 - 8 * i)) & 0xff);
  size_t len = 0;
  if (EVP_MAC_init(mac, nullptr, 0, nullptr) != 1 || EVP_MAC_update(mac, count, 8) != 1 ||
      EVP_MAC_update(mac, reinterpret_cast<const unsigned char*>(frame.data()), frame.size()) !=
          1 ||
      EVP_MAC_final(mac, out, &len, kTrailerBytes) != 1 || len != kTrailerBytes)
    mac_failed();
}

}  // namespace

std::string prove(std::string_view key, std::string_view role, std::string_view nonce_init,
                  std::string_view nonce_resp) {
  return hmac_sha256_hex(key, labelled("mtperf prove", role, nonce_init, nonce_resp));
}

std::string nonce_field(const nlohmann::json& body, const char* field, const std::string& who) {
  auto it = body.find(field);
  const bool ok =
      it != body.end() && it->is_string() && it->get_ref<const std::string&>().size() == 32 &&
      it->get_ref<const std::string&>().find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!ok) {
    throw ProtocolError(who + "." + field +
                        (it == body.end() ? ": missing (a peer of an older version?)"
                                          : ": not 32 lowercase hex characters"));
  }
  return it->get<std::string>();
}

void Link::MacFree::operator()(EVP_MAC_CTX* c) const {
  EVP_MAC_CTX_free(c);
}

Link::~Link() = default;

void Link::seal(std::string_view key, bool initiator, std::string_view nonce_init,
                std::string_view nonce_resp) {
  std::array<unsigned char, 32> init_key{}, resp_key{};
  hmac_raw(key.data(), key.size(), labelled("mtperf seal", "initiator", nonce_init, nonce_resp),
           init_key.data());
  hmac_raw(key.data(), key.size(), labelled("mtperf seal", "responder", nonce_init, nonce_resp),
           resp_key.data());
  send_mac_.reset(keyed_mac(initiator ? init_key : resp_key));
  recv_mac_.reset(keyed_mac(initiator ? resp_key : init_key));
  OPENSSL_cleanse(init_key.data(), init_key.size());
  OPENSSL_cleanse(resp_key.data(), resp_key.size());
  send_seq_ = recv_seq_ = 0;
  sealed_ = true;
}

void Link::send(const Message& m, int64_t deadline_ns) {
  send_frame(encode(m), deadline_ns);
}

void Link::send_frame(std::string frame, int64_t deadline_ns) {
  std::lock_guard lock(send_mu_);
  if (sealed_) {
    unsigned char t[kTrailerBytes];
    trailer(send_mac_.get(), send_seq_++, frame, t);
    frame.append(reinterpret_cast<const char*>(t), sizeof t);
  }
  write_all_until(fd_, frame.data(), frame.size(), deadline_ns);
}

Message Link::recv(uint32_t max_body, int64_t deadline_ns) {
  std::string frame(kHeaderBytes, '\0');
  read_all_until(fd_, frame.data(), kHeaderBytes, deadline_ns);
  MsgType type;
  uint32_t len = 0;
  decode_header(reinterpret_cast<const uint8_t*>(frame.data()), type, len, max_body);
  frame.resize(kHeaderBytes + len);
  read_all_until(fd_, frame.data() + kHeaderBytes, len, deadline_ns);
  unsigned char got[kTrailerBytes];
  if (sealed_) read_all_until(fd_, reinterpret_cast<char*>(got), sizeof got, deadline_ns);
  return finish(frame, got);
}

bool Link::try_recv(Message& out, uint32_t max_body) {
  for (;;) {
    size_t want = kHeaderBytes;
    if (partial_.size() >= kHeaderBytes) {
      MsgType type;
      uint32_t len = 0;
      decode_header(reinterpret_cast<const uint8_t*>(partial_.data()), type, len, max_body);
      want = kHeaderBytes + len + (sealed_ ? kTrailerBytes : 0);
      if (partial_.size() == want) break;
    }
    const size_t have = partial_.size();
    partial_.resize(want);
    ssize_t n = ::recv(fd_, partial_.data() + have, want - have, MSG_DONTWAIT);
    if (n <= 0) {
      partial_.resize(have);
      if (n == 0) throw ProtocolError("control: the peer closed the control connection");
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
      throw ProtocolError(std::string("control: receiving: ") + std::strerror(errno));
    }
    partial_.resize(have + size_t(n));
  }
  std::string frame = std::move(partial_);
  partial_.clear();
  unsigned char got[kTrailerBytes];
  if (sealed_) {
    std::memcpy(got, frame.data() + frame.size() - kTrailerBytes, kTrailerBytes);
    frame.resize(frame.size() - kTrailerBytes);
  }
  out = finish(frame, got);
  return true;
}

Message Link::finish(std::string& frame, const unsigned char* got) {
  MsgType type = MsgType(uint8_t(frame[5]));
  const std::string_view body(frame.data() + kHeaderBytes, frame.size() - kHeaderBytes);
  if (!sealed_) return decode(type, body);
  unsigned char want[kTrailerBytes];
  trailer(recv_mac_.get(), recv_seq_, frame, want);
  if (CRYPTO_memcmp(got, want, kTrailerBytes) != 0) {
    std::string what = "control: a " + std::string(to_string(type)) +
                       " frame failed its integrity check (modified, replayed, reordered or "
                       "injected on the path, or the peer's key differs): connection dropped";
    if (type == MsgType::error) {
      Message e = decode(type, body);
      auto it = e.body.find("message");
      if (it != e.body.end() && it->is_string())
        what += "; its unauthenticated text: \"" + it->get<std::string>().substr(0, 512) + "\"";
    }
    throw ProtocolError(what);
  }
  ++recv_seq_;
  return decode(type, body);
}

void send_message_until(Link& l, const Message& m, int64_t deadline_ns) {
  l.send(m, deadline_ns);
}

Message recv_message_until(Link& l, uint32_t max_body, int64_t deadline_ns) {
  return l.recv(max_body, deadline_ns);
}

Message expect_until(Link& l, MsgType want, uint32_t max_body, int64_t deadline_ns) {
  return check_type(l.recv(max_body, deadline_ns), want);
}

void send_message(Link& l, const Message& m, int timeout_ms) {
  l.send(m, deadline_in(timeout_ms));
}

Message recv_message(Link& l, uint32_t max_body, int timeout_ms) {
  return l.recv(max_body, deadline_in(timeout_ms));
}

Message expect(Link& l, MsgType want, uint32_t max_body, int timeout_ms) {
  return check_type(l.recv(max_body, deadline_in(timeout_ms)), want);
}

}  // namespace mtperf::control
