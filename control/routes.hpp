#pragma once
// Which server address each flow goes to when a test spans several adapters: the server lists
// its interface addresses in WELCOME, and every flow, leaving from the address of its adapter,
// goes to the server's address on the same subnet (one IP subnet per adapter, as on a
// multi-adapter test bed). Pure: the addresses are passed in.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/topology.hpp"

namespace mtperf::control {

// WELCOME's "addresses": [{"interface", "address", "prefix_length"}], link-local IPv6 left out.
nlohmann::json addresses_to_json(const std::vector<InterfaceAddress>& addresses);
// Strict: throws std::invalid_argument naming the malformed entry.
std::vector<InterfaceAddress> addresses_from_json(const nlohmann::json& j);

// Whether a and b are on one subnet of the given prefix length (same family).
bool same_subnet(const std::string& a, const std::string& b, int prefix_length);

// The server address on the subnet of `local` (an address of this host with its prefix): one
// other than local's own, or local's own when the server runs on this host; throws
// std::runtime_error naming the local address and what the server has.
std::string server_address_for(const InterfaceAddress& local,
                               const std::vector<InterfaceAddress>& server);

// The local address entry for `address` among this host's; throws std::runtime_error when this
// host has no such address.
const InterfaceAddress& find_local(const std::string& address,
                                   const std::vector<InterfaceAddress>& local);

// The network devices of this host that carry the flows: those holding `flow_addresses` (this
// side's address of each flow), or, when there are none, the one holding this side's end of the
// control connection `control_fd`. Never throws; empty when none is found.
std::vector<std::string> flow_netdevs(const std::vector<std::string>& flow_addresses,
                                      int control_fd);

}  // namespace mtperf::control
