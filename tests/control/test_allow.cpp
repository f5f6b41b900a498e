// --allow networks: parsed strictly, matched by prefix, v4 clients of a v6 listener included.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <catch2/catch.hpp>

#include "control/allow.hpp"
#include "transports/inet/inet.hpp"

using namespace mtperf;
using namespace mtperf::control;

namespace {

SockAddr addr(const std::string& a) {
  return numeric_address(a, 4000);
}

}  // namespace

TEST_CASE("networks parse with and without a prefix", "[allow]") {
  Cidr c = parse_cidr("10.0.0.0/8");
  CHECK(c.family == AF_INET);
  CHECK(c.prefix_length == 8);
  CHECK(c.to_string() == "10.0.0.0/8");
  CHECK(parse_cidr("192.0.2.7").prefix_length == 32);
  CHECK(parse_cidr("::1").prefix_length == 128);
  CHECK(parse_cidr("2001:db8::/32").family == AF_INET6);
  CHECK(parse_cidr("0.0.0.0/0").prefix_length == 0);
}

TEST_CASE("a malformed network is refused, naming it", "[allow]") {
  for (const char* bad : {"", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/x", "host.example",
                          "2001:db8::/129", "10.0.0.0/-1", "10.1.0.0/8"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_cidr(bad), std::invalid_argument);
  }
  CHECK_THROWS_WITH(parse_cidr("10.1.0.0/8"), Catch::Contains("did you mean 10.0.0.0/8"));
}

TEST_CASE("a peer is allowed when one network holds it", "[allow]") {
  std::vector<Cidr> nets = {parse_cidr("10.0.0.0/8"), parse_cidr("192.0.2.0/25"),
                            parse_cidr("2001:db8::/32")};
  CHECK(allowed(nets, addr("10.200.3.4")));
  CHECK(allowed(nets, addr("192.0.2.127")));
  CHECK_FALSE(allowed(nets, addr("192.0.2.128")));
  CHECK_FALSE(allowed(nets, addr("127.0.0.1")));
  CHECK(allowed(nets, addr("2001:db8:1::5")));
  CHECK_FALSE(allowed(nets, addr("2001:db9::5")));
  CHECK_FALSE(allowed(nets, addr("::1")));
  // An IPv4 client of a server listening on :: shows as ::ffff:a.b.c.d.
  CHECK(allowed(nets, addr("::ffff:10.1.2.3")));
  CHECK_FALSE(allowed(nets, addr("::ffff:11.1.2.3")));
  CHECK(allowed({}, addr("203.0.113.9")));  // no --allow: everyone
  CHECK(allowed({parse_cidr("0.0.0.0/0")}, addr("203.0.113.9")));
}
