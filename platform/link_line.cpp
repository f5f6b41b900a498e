#include "platform/link_line.hpp"

#include <charconv>
#include <cmath>
#include <exception>

namespace mtperf {

std::optional<double> parse_rdma_rate(std::string_view rate) {
  // The kernel writes "%d%s Gb/sec (%dX %s)": a whole or a decimal number of Gb/s.
  double v = 0;
  const char* end = rate.data() + rate.size();
  auto [ptr, ec] = std::from_chars(rate.data(), end, v);
  if (ec != std::errc() || !std::isfinite(v) || v <= 0) return std::nullopt;
  std::string_view rest(ptr, size_t(end - ptr));
  if (rest.rfind(" Gb/sec", 0) != 0) return std::nullopt;
  return v * 1e9;
}

LinkLine link_line(const Topology& topology, const RdmaDevices& rdma, std::string_view interface) {
  LinkLine out;
  const Adapter* a = topology.find_adapter(interface);
  if (a == nullptr) return out;
  out.adapter = a->name;
  if (a->speed_mbps && *a->speed_mbps > 0) out.speed_bps = double(*a->speed_mbps) * 1e6;
  // The port that carries the interface: the topology's, else the RDMA devices' own view.
  std::optional<RdmaPortRef> ref;
  if (!a->rdma_device.empty() && a->rdma_port > 0)
    ref = RdmaPortRef{a->rdma_device, a->rdma_port};
  else
    ref = rdma.port_of_netdev(a->name);
  if (!ref) return out;
  const RdmaDevice* dev = rdma.find(ref->device);
  const RdmaPort* port = dev ? dev->find_port(ref->port) : nullptr;
  if (port == nullptr || !port->active()) return out;
  out.rdma_rate_bps = parse_rdma_rate(port->rate);
  if (out.rdma_rate_bps) out.rdma_port = ref->device + "/" + std::to_string(ref->port);
  return out;
}

LinkLine link_line_of_address(const std::string& address, const std::string& root) {
  LinkLine out;
  if (address.empty()) return out;
  try {
    for (const InterfaceAddress& a : interface_addresses())
      if (a.address == address) out.adapter = a.interface;
  } catch (const std::exception&) {
    return out;  // no getifaddrs: unknown
  }
  if (out.adapter.empty()) return out;
  try {
    const std::string adapter = out.adapter;
    out = link_line(read_topology(root), read_rdma_devices(root), adapter);
    out.adapter = adapter;
  } catch (const std::exception&) {
    // No sysfs to read (a container without /sys): the interface is known, its speed is not.
  }
  return out;
}

}  // namespace mtperf
