#pragma once
// The line rate of the adapter that carries an address: what a fleet judges its pairs against
// (`pair.throughput>=0.9*line`). Two figures, each where the host reports it:
//   - the interface's speed in sysfs (<root>/sys/class/net/<if>/speed, Mbit/s): Ethernet; veth
//     reports a nominal 10000, loopback and virtio none;
//   - the RDMA port's rate (<root>/sys/class/infiniband/<dev>/ports/<n>/rate, the kernel's
//     active width x active speed, "100 Gb/sec (4X EDR)") of the port that carries the interface.
// Read through platform/topology.hpp and platform/rdma_devices.hpp; never throws: what cannot be
// read is unknown. Units: bits/s.
#include <optional>
#include <string>
#include <string_view>

#include "platform/rdma_devices.hpp"
#include "platform/topology.hpp"

namespace mtperf {

struct LinkLine {
  std::string adapter;                  // the interface holding the address; "" when none does
  std::optional<double> speed_bps;      // its sysfs speed; empty when unknown or link down
  std::optional<double> rdma_rate_bps;  // its RDMA port's active width x speed; empty when none
  std::string rdma_port;                // "mlx5_0/1"; "" when none
};

// "100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)", "25 Gb/sec (1X EDR)": the figure in bits/s;
// empty for anything else (an empty file, an unknown unit, no number).
std::optional<double> parse_rdma_rate(std::string_view rate);

// The figures of one interface, from a topology and the RDMA devices already read.
LinkLine link_line(const Topology& topology, const RdmaDevices& rdma, std::string_view interface);

// The interface holding `address` in this network namespace (numeric, IPv4 or IPv6) and its
// figures under `root`. An address no interface holds (or "") gives an empty LinkLine.
LinkLine link_line_of_address(const std::string& address, const std::string& root = "/");

}  // namespace mtperf
