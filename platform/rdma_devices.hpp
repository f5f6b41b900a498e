#pragma once
// RDMA devices, their ports and their port counters, read through a root directory (default "/")
// from sysfs:
//   <root>/sys/class/infiniband/<dev>/{node_guid,node_type,parent,device/net/<if>/dev_port}
//   <root>/sys/class/infiniband/<dev>/ports/<n>/{state,phys_state,link_layer,rate,gids/<i>,
//       gid_attrs/types/<i>,gid_attrs/ndevs/<i>,counters/*,hw_counters/*}
// Symbolic links resolve inside the root (platform/root_fs.hpp), so a fixture tree reads like the
// host it describes. Missing or unreadable files mean "unknown", never an error: the kernel
// answers the type and netdev of an unused GID entry with EINVAL, and an InfiniBand port has no
// GID netdevs at all.
//
// A port's network interfaces come from its GIDs' netdevs (RoCE); failing that from the soft
// device's parent (rxe, siw: one port over one netdev); failing that from the netdevs of the
// device's own bus device whose dev_port + 1 is the port number (IPoIB, a port without GIDs yet).
//
// Thread-safety: the functions hold no state; results are plain values.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "platform/topology.hpp"

namespace mtperf {

// The kernel's port states (enum ib_port_state).
enum class RdmaPortState { nop, down, init, armed, active, active_defer, unknown };
// "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER", "unknown": the kernel's own words.
std::string to_string(RdmaPortState state);

struct RdmaGid {
  int index = 0;       // the entry of the port's GID table
  std::string gid;     // as sysfs prints it: "fe80:0000:0000:0000:5054:00ff:fe12:3456"
  std::string type;    // "RoCE v2", "IB/RoCE v1"; "" when the kernel gives none
  std::string netdev;  // the interface the GID belongs to; "" on InfiniBand
};

struct RdmaPort {
  int number = 0;  // 1-based, as the verbs number ports
  RdmaPortState state = RdmaPortState::unknown;
  std::string state_text;            // the kernel's word for it: "ACTIVE" (sysfs: "4: ACTIVE")
  std::string phys_state;            // "LinkUp", "Disabled", "Polling", ... (sysfs: "5: LinkUp")
  std::string link_layer;            // "InfiniBand" or "Ethernet"; "" when unknown
  std::string rate;                  // "100 Gb/sec (4X EDR)"; "" when unknown
  std::vector<RdmaGid> gids;         // the entries in use (non-zero), ascending by index
  std::vector<std::string> netdevs;  // the port's network interfaces, ascending

  bool active() const { return state == RdmaPortState::active; }
  bool rocev2() const;  // a RoCE v2 GID is configured
};

struct RdmaDevice {
  std::string name;             // "mlx5_0", "rxe0"
  std::string node_guid;        // "5054:00ff:fe12:3456"; "" when unknown
  std::string node_type;        // "CA", "RNIC", ... (sysfs: "1: CA"); "" when unknown
  std::string parent;           // soft devices (rxe, siw): the netdev they ride on; "" otherwise
  std::vector<RdmaPort> ports;  // ascending by number

  const RdmaPort* find_port(int number) const;
};

// One port of one device.
struct RdmaPortRef {
  std::string device;
  int port = 0;
  bool operator==(const RdmaPortRef&) const = default;
};

struct RdmaDevices {
  bool kernel_support = false;      // <root>/sys/class/infiniband exists
  std::vector<RdmaDevice> devices;  // ascending by name

  const RdmaDevice* find(std::string_view name) const;
  // The port a network interface belongs to (the first, by device name and port number, when
  // several claim it); empty when none does.
  std::optional<RdmaPortRef> port_of_netdev(std::string_view netdev) const;
  // The network interfaces of a port; empty when the port is unknown or has none.
  std::vector<std::string> netdevs_of(const RdmaPortRef& port) const;
};

// Never throws: a host without RDMA reads as kernel_support == false.
RdmaDevices read_rdma_devices(const std::string& root = "/");

// ---- Port counters: the device's own witness that the application's bytes crossed it. ----

// Bounds on what is read and on what a peer may send (control/side_json.cpp).
inline constexpr size_t kMaxRdmaPorts = 64;        // ports, all devices together
inline constexpr size_t kMaxRdmaCounters = 128;    // counters per port
inline constexpr size_t kMaxRdmaCounterName = 64;  // characters of a counter's name
inline constexpr size_t kMaxRdmaDeviceName =
    64;  // characters of a device's name (IB_DEVICE_NAME_MAX)

struct RdmaPortCounters {
  std::string device;
  int port = 0;
  // ports/<n>/counters/* by name, then ports/<n>/hw_counters/* by name (as "hw_counters/<name>"
  // when counters/ has the same name). Raw values, in each counter's own unit: port_xmit_data
  // and port_rcv_data count 4-byte words.
  std::map<std::string, uint64_t> counters;
};

// Every port's counters now, ascending by device and port, within the bounds above. Cheap when
// there is nothing to read: one directory listing when /sys/class/infiniband is missing or empty.
// Never throws.
std::vector<RdmaPortCounters> read_rdma_counters(const std::string& root = "/");

// after - before, port by port and counter by counter. A port or counter missing on either side,
// or a counter that went backwards (reset, or a 32-bit counter that wrapped), is left out.
std::vector<RdmaPortCounters> rdma_counter_deltas(const std::vector<RdmaPortCounters>& before,
                                                  const std::vector<RdmaPortCounters>& after);

// What a port's counter deltas say in plain units.
struct RdmaTraffic {
  // port_xmit_data / port_rcv_data x 4 (those count 4-byte words); empty without them (rxe).
  std::optional<uint64_t> bytes_sent, bytes_received;
  // port_xmit_packets / port_rcv_packets, else rxe's hw_counters sent_pkts / rcvd_pkts.
  std::optional<uint64_t> packets_sent, packets_received;
  // The error counters that are not zero, by name.
  std::vector<std::pair<std::string, uint64_t>> errors;
};
RdmaTraffic rdma_traffic(const RdmaPortCounters& port);

// True for counters that count faults: errors, discards, drops, retries, out-of-sequence and
// duplicate packets, link downs (symbol_error, port_xmit_discards, out_of_sequence,
// rnr_nak_retry_err, link_downed, ...).
bool is_rdma_error_counter(std::string_view name);

// The addresses of the network interfaces of the ACTIVE ports of `devs`, link-local ones left
// out, in the devices' and ports' order (`addrs`: interface_addresses()): the addresses at which
// this host is reached over RDMA.
std::vector<InterfaceAddress> rdma_port_addresses(const RdmaDevices& devs,
                                                  const std::vector<InterfaceAddress>& addrs);

// The receive-not-ready counters of `ports` (those whose name says rnr), summed: a SEND that met
// no receive shows there, whatever the sender believed of the receiver.
uint64_t rnr_count(const std::vector<RdmaPortCounters>& ports);

}  // namespace mtperf
