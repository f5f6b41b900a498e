// Which server address each flow of a multi-adapter test goes to: the one on its source
// address's subnet, from the addresses the server lists in WELCOME.
#include <arpa/inet.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>

#include "control/routes.hpp"

using namespace mtperf;
using namespace mtperf::control;

TEST_CASE("same_subnet compares the prefix bits only", "[routes]") {
  CHECK(same_subnet("10.231.1.1", "10.231.1.2", 24));
  CHECK_FALSE(same_subnet("10.231.1.1", "10.231.2.2", 24));
  CHECK(same_subnet("10.231.1.1", "10.231.2.2", 16));
  CHECK(same_subnet("192.168.0.130", "192.168.0.190", 26));  // both in .128/26
  CHECK_FALSE(same_subnet("192.168.0.130", "192.168.0.60", 26));
  CHECK(same_subnet("10.0.0.1", "99.9.9.9", 0));
  CHECK(same_subnet("fd00:1::1", "fd00:1::2", 64));
  CHECK_FALSE(same_subnet("fd00:1::1", "fd00:2::1", 64));
  CHECK_FALSE(same_subnet("10.0.0.1", "fd00::1", 0));  // families differ
  CHECK_FALSE(same_subnet("10.0.0.1", "not-an-address", 8));
  CHECK_FALSE(same_subnet("10.0.0.1", "10.0.0.2", 33));
}

TEST_CASE("each flow goes to the server's address on its subnet", "[routes]") {
  std::vector<InterfaceAddress> server = {{"lo", AF_INET, "127.0.0.1", 8},
                                          {"mtperf0f", AF_INET, "10.231.0.2", 24},
                                          {"mtperf1f", AF_INET, "10.231.1.2", 24},
                                          {"v6", AF_INET6, "fd00:1::2", 64}};
  CHECK(server_address_for({"mtperf1n", AF_INET, "10.231.1.1", 24}, server) == "10.231.1.2");
  CHECK(server_address_for({"mtperf0n", AF_INET, "10.231.0.1", 24}, server) == "10.231.0.2");
  CHECK(server_address_for({"v6", AF_INET6, "fd00:1::1", 64}, server) == "fd00:1::2");
  // Client and server on one host: the only address on the subnet is our own.
  CHECK(server_address_for({"lo", AF_INET, "127.0.0.1", 8}, server) == "127.0.0.1");
  CHECK_THROWS_WITH(server_address_for({"eth9", AF_INET, "10.9.9.1", 24}, server),
                    Catch::Contains("no address on the subnet of 10.9.9.1/24 (eth9)") &&
                        Catch::Contains("10.231.1.2/24"));
}

TEST_CASE("the server's address list survives JSON and is checked", "[routes]") {
  std::vector<InterfaceAddress> in = {{"eth0", AF_INET, "192.0.2.7", 24},
                                      {"eth0", AF_INET6, "fe80::1", 64},
                                      {"eth0", AF_INET6, "2001:db8::7", 64}};
  auto j = addresses_to_json(in);
  REQUIRE(j.size() == 2);  // link-local left out
  auto out = addresses_from_json(j);
  REQUIRE(out.size() == 2);
  CHECK(out[0].address == "192.0.2.7");
  CHECK(out[0].family == AF_INET);
  CHECK(out[1].family == AF_INET6);
  CHECK(out[1].prefix_length == 64);
  CHECK_THROWS_WITH(addresses_from_json(nlohmann::json::parse(R"([{"interface":"x"}])")),
                    Catch::Contains("malformed"));
  CHECK_THROWS_WITH(addresses_from_json(nlohmann::json::parse(
                        R"([{"interface":"x","address":"10.0.0.1","prefix_length":40}])")),
                    Catch::Contains("bad address 10.0.0.1/40"));
  CHECK_THROWS(addresses_from_json(nlohmann::json::object()));
}

TEST_CASE("an address list's numbers are read without narrowing", "[routes]") {
  // 2^32 + 24 used to become prefix length 24.
  nlohmann::json j = nlohmann::json::array({{{"interface", "eth0"},
                                             {"address", "10.0.0.1"},
                                             {"prefix_length", (int64_t(1) << 32) + 24}}});
  CHECK_THROWS_WITH(addresses_from_json(j),
                    Catch::Contains("prefix_length") && Catch::Contains("out of range"));
  j[0]["prefix_length"] = 24.5;
  CHECK_THROWS_WITH(addresses_from_json(j), Catch::Contains("prefix_length"));
  j[0]["prefix_length"] = 24;
  j[0]["interface"] = std::string(300, 'e');
  CHECK_THROWS_WITH(addresses_from_json(j), Catch::Contains("too long"));
  CHECK_THROWS(addresses_from_json(nlohmann::json::array({42})));
}

TEST_CASE("find_local names the address this host lacks", "[routes]") {
  std::vector<InterfaceAddress> local = {{"eth0", AF_INET, "192.0.2.7", 24}};
  CHECK(find_local("192.0.2.7", local).interface == "eth0");
  CHECK_THROWS_WITH(find_local("192.0.2.8", local), Catch::Contains("no address 192.0.2.8"));
}
