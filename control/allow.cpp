#include "control/allow.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <stdexcept>

#include "platform/number.hpp"

namespace mtperf::control {
namespace {

bool prefix_matches(const uint8_t* a, const uint8_t* b, int prefix_length) {
  int full = prefix_length / 8, rest = prefix_length % 8;
  if (std::memcmp(a, b, size_t(full)) != 0) return false;
  if (rest == 0) return true;
  uint8_t mask = uint8_t(0xff << (8 - rest));
  return (a[full] & mask) == (b[full] & mask);
}

}  // namespace

std::string Cidr::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(family, bytes, buf, sizeof buf);
  return std::string(buf) + "/" + std::to_string(prefix_length);
}

Cidr parse_cidr(const std::string& text) {
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument("'" + text.substr(0, 64) + "' is not a network: " + why);
  };
  if (text.empty() || text.size() > 64) bad("expected ADDRESS[/PREFIX]");
  std::string address = text, prefix;
  if (auto slash = text.find('/'); slash != std::string::npos) {
    address = text.substr(0, slash);
    prefix = text.substr(slash + 1);
  }
  Cidr c;
  if (inet_pton(AF_INET, address.c_str(), c.bytes) == 1) {
    c.family = AF_INET;
  } else if (inet_pton(AF_INET6, address.c_str(), c.bytes) == 1) {
    c.family = AF_INET6;
  } else {
    bad("not a numeric IPv4 or IPv6 address");
  }
  int max_len = c.family == AF_INET ? 32 : 128;
  c.prefix_length = max_len;
  if (!prefix.empty() || text.back() == '/') {
    const std::optional<uint64_t> length = parse_whole(prefix, 0, 999);
    if (!length) bad("the prefix length must be a number");
    if (*length > uint64_t(max_len)) bad("the prefix length is over " + std::to_string(max_len));
    c.prefix_length = int(*length);
  }
  Cidr net = c;
  for (int bit = c.prefix_length; bit < max_len; ++bit)
    net.bytes[bit / 8] &= uint8_t(~(0x80 >> (bit % 8)));
  if (std::memcmp(net.bytes, c.bytes, sizeof c.bytes) != 0) {
    bad("address bits set past the prefix length (did you mean " + net.to_string() + "?)");
  }
  return c;
}

bool allowed(const std::vector<Cidr>& allowed, const SockAddr& peer) {
  if (allowed.empty()) return true;
  uint8_t v4[4], v6[16];
  bool has_v4 = false, has_v6 = false;
  if (peer.family() == AF_INET) {
    auto* sin = reinterpret_cast<const sockaddr_in*>(&peer.ss);
    std::memcpy(v4, &sin->sin_addr, 4);
    has_v4 = true;
  } else if (peer.family() == AF_INET6) {
    auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&peer.ss);
    std::memcpy(v6, &sin6->sin6_addr, 16);
    has_v6 = true;
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(v6, mapped, 12) == 0) {
      std::memcpy(v4, v6 + 12, 4);
      has_v4 = true;
    }
  }
  for (const Cidr& c : allowed) {
    if (c.family == AF_INET && has_v4 && prefix_matches(v4, c.bytes, c.prefix_length)) return true;
    if (c.family == AF_INET6 && has_v6 && prefix_matches(v6, c.bytes, c.prefix_length)) return true;
  }
  return false;
}

}  // namespace mtperf::control
