#pragma once
// `mtperf serve --allow CIDR...`: the networks a client may connect from. A connection from
// elsewhere is closed at once, before a byte is read, and counted. Pure functions over
// addresses, so they can be tested and fuzzed without sockets.
#include <cstdint>
#include <string>
#include <vector>

#include "transports/api/transport.hpp"

namespace mtperf::control {

struct Cidr {
  int family = 0;  // AF_INET or AF_INET6
  uint8_t bytes[16] = {};
  int prefix_length = 0;
  std::string to_string() const;
};

// "10.0.0.0/8", "192.0.2.7" (one host), "2001:db8::/32", "::1". Bits past the prefix must be
// zero ("10.1.0.0/8" is refused: it likely says something other than what was meant). Throws
// std::invalid_argument naming the text.
Cidr parse_cidr(const std::string& text);

// Whether `peer` is inside one of `allowed` (an empty list allows everyone). An IPv4-mapped IPv6
// peer (::ffff:192.0.2.7, a v4 client of a server listening on ::) matches IPv4 networks.
bool allowed(const std::vector<Cidr>& allowed, const SockAddr& peer);

}  // namespace mtperf::control
