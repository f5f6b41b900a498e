#include "control/routes.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <stdexcept>

#include "platform/netdev_stats.hpp"
#include "transports/api/control_socket.hpp"
#include "workloads/json_field.hpp"

namespace mtperf::control {
namespace {

// The address as bytes (4 or 16); empty when it is not numeric.
std::vector<uint8_t> bytes_of(const std::string& address) {
  uint8_t buf[16];
  if (inet_pton(AF_INET, address.c_str(), buf) == 1) return {buf, buf + 4};
  if (inet_pton(AF_INET6, address.c_str(), buf) == 1) return {buf, buf + 16};
  return {};
}

bool link_local(const InterfaceAddress& a) {
  return a.family == AF_INET6 && a.address.starts_with("fe80:");
}

}  // namespace

nlohmann::json addresses_to_json(const std::vector<InterfaceAddress>& addresses) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& a : addresses)
    if (!link_local(a))
      out.push_back(
          {{"interface", a.interface}, {"address", a.address}, {"prefix_length", a.prefix_length}});
  return out;
}

std::vector<InterfaceAddress> addresses_from_json(const nlohmann::json& j) {
  if (!j.is_array()) throw std::invalid_argument("addresses: not a list");
  if (j.size() > 4096) throw std::invalid_argument("addresses: more than 4096 entries");
  std::vector<InterfaceAddress> out;
  for (const auto& e : j) {
    InterfaceAddress a;
    try {
      if (!e.is_object()) throw std::invalid_argument("not an object");
      a.interface = json_field::required<std::string>(e, "addresses", "interface");
      a.address = json_field::required<std::string>(e, "addresses", "address");
      a.prefix_length = json_field::required<int>(e, "addresses", "prefix_length");
    } catch (const std::invalid_argument& why) {
      throw std::invalid_argument("addresses: malformed entry " + e.dump().substr(0, 120) + " (" +
                                  why.what() + ")");
    }
    // IFNAMSIZ, and the longest numeric IPv6 address text.
    if (a.interface.size() > 15 || a.address.size() > 45)
      throw std::invalid_argument("addresses: malformed entry " + e.dump().substr(0, 120) +
                                  " (name or address too long)");
    auto bytes = bytes_of(a.address);
    if (bytes.empty() || a.prefix_length < 0 || a.prefix_length > int(bytes.size() * 8))
      throw std::invalid_argument("addresses: bad address " + a.address + "/" +
                                  std::to_string(a.prefix_length));
    a.family = bytes.size() == 4 ? AF_INET : AF_INET6;
    out.push_back(std::move(a));
  }
  return out;
}

bool same_subnet(const std::string& a, const std::string& b, int prefix_length) {
  auto x = bytes_of(a), y = bytes_of(b);
  if (x.empty() || x.size() != y.size() || prefix_length < 0 || prefix_length > int(x.size() * 8))
    return false;
  int full = prefix_length / 8, rest = prefix_length % 8;
  if (std::memcmp(x.data(), y.data(), size_t(full)) != 0) return false;
  if (rest == 0) return true;
  uint8_t mask = uint8_t(0xff << (8 - rest));
  return (x[size_t(full)] & mask) == (y[size_t(full)] & mask);
}

std::string server_address_for(const InterfaceAddress& local,
                               const std::vector<InterfaceAddress>& server) {
  // Another host's address on the subnet; our own when client and server share the host.
  const InterfaceAddress* same_host = nullptr;
  for (const auto& s : server) {
    if (!same_subnet(local.address, s.address, local.prefix_length)) continue;
    if (s.address != local.address) return s.address;
    same_host = &s;
  }
  if (same_host != nullptr) return same_host->address;
  std::string has;
  for (const auto& s : server)
    has += (has.empty() ? "" : ", ") + s.address + "/" + std::to_string(s.prefix_length);
  throw std::runtime_error("the server has no address on the subnet of " + local.address + "/" +
                           std::to_string(local.prefix_length) + " (" + local.interface +
                           "); it has: " + (has.empty() ? "none" : has));
}

const InterfaceAddress& find_local(const std::string& address,
                                   const std::vector<InterfaceAddress>& local) {
  for (const auto& a : local)
    if (a.address == address) return a;
  throw std::runtime_error("this host has no address " + address);
}

std::vector<std::string> flow_netdevs(const std::vector<std::string>& flow_addresses,
                                      int control_fd) {
  std::vector<std::string> addresses = flow_addresses;
  if (addresses.empty()) {
    try {
      SockAddr local = control_socket::local_address(control_fd);
      char host[INET6_ADDRSTRLEN] = {};
      const void* raw = local.family() == AF_INET
                            ? static_cast<const void*>(
                                  &reinterpret_cast<const sockaddr_in*>(local.get())->sin_addr)
                            : static_cast<const void*>(
                                  &reinterpret_cast<const sockaddr_in6*>(local.get())->sin6_addr);
      if (inet_ntop(local.family(), raw, host, sizeof host)) addresses.push_back(host);
    } catch (const std::exception&) {
      return {};
    }
  }
  return netdevs_of_addresses(addresses);
}

}  // namespace mtperf::control
