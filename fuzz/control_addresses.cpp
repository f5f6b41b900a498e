// Fuzz target: the interface address list a server sends in WELCOME, as a client reads it to
// route the flows of a test over several adapters — addresses_from_json, then
// server_address_for() from a few local addresses of a client host.
//
// Input: the WELCOME body (JSON; its "addresses" entry is the list).
//
// Findings beyond crashes and sanitizer reports: an exception other than the documented ones
// (std::invalid_argument from the parser, std::runtime_error when no address fits); a chosen
// server address that is not in the list or not on the local address's subnet; an accepted list
// that does not come back the same through addresses_to_json (link-local entries aside, which
// it leaves out).
#include <sys/socket.h>

#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/routes.hpp"
#include "fuzz/fuzz_support.hpp"

namespace mtperf::fuzz {
namespace {

bool same(const InterfaceAddress& a, const InterfaceAddress& b) {
  return a.interface == b.interface && a.family == b.family && a.address == b.address &&
         a.prefix_length == b.prefix_length;
}

bool link_local(const InterfaceAddress& a) {
  return a.address.starts_with("fe80:");
}

void run(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const nlohmann::json welcome = nlohmann::json::parse(body, nullptr, false);
  if (welcome.is_discarded() || !welcome.is_object()) return;
  auto it = welcome.find("addresses");
  if (it == welcome.end()) return;
  std::vector<InterfaceAddress> server;
  try {
    server = control::addresses_from_json(*it);
  } catch (const std::invalid_argument&) {
    return;  // the client refuses the WELCOME, naming the entry
  }

  std::vector<InterfaceAddress> kept;
  for (const auto& a : server)
    if (!link_local(a)) kept.push_back(a);
  const auto again = control::addresses_from_json(control::addresses_to_json(server));
  check(again.size() == kept.size(), "addresses_to_json lost or added entries");
  for (size_t i = 0; i < kept.size(); ++i)
    check(same(again[i], kept[i]), "an address changed through addresses_to_json");

  // A client host with an address on a few common subnets, and each of the server's own.
  std::vector<InterfaceAddress> locals = {{"eth0", AF_INET, "10.0.0.1", 8},
                                          {"eth1", AF_INET, "192.168.1.10", 24},
                                          {"eth2", AF_INET6, "fd00::1", 64},
                                          {"eth3", AF_INET, "0.0.0.0", 0}};
  for (size_t i = 0; i < server.size() && i < 8; ++i)
    locals.push_back(server[i]);
  for (const auto& local : locals) {
    std::string chosen;
    try {
      chosen = control::server_address_for(local, server);
    } catch (const std::runtime_error&) {
      continue;  // no server address on that subnet: the client says so
    }
    bool listed = false;
    for (const auto& s : server)
      listed |= s.address == chosen;
    check(listed, "server_address_for chose an address the server does not have");
    check(control::same_subnet(local.address, chosen, local.prefix_length),
          "server_address_for chose an address on another subnet");
  }
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mtperf::fuzz::run(data, size);
  return 0;
}
