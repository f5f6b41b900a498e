#pragma once
// Network adapter topology: adapter → PCI function → PCI controller (host bridge) → NUMA node,
// and adapter → IRQs → the CPUs that service them.
//
// Everything is read through a root directory (default "/") from sysfs and procfs:
//   <root>/sys/class/net/<if>/{ifindex,type,mtu,speed,operstate,flags,iflink,ifalias,uevent,
//                              tun_flags,bridge/,bonding/,device}
//   <root>/sys/devices/pci<domain>:<bus>/.../<pci function>/{numa_node,local_cpulist,msi_irqs/,
//                              driver,infiniband/}
//   <root>/sys/devices/system/{node/node<N>/cpulist,cpu/online}
//   <root>/proc/interrupts, <root>/proc/irq/<N>/{effective_affinity_list,smp_affinity_list}
//   <root>/sys/class/infiniband/... (platform/rdma_devices.hpp: each adapter's RDMA port)
// Symbolic links are resolved inside the root (an absolute target or a ".." past the root stays
// in the root), so a fixture tree with relative links reads like the host it was copied from.
//
// Missing files mean "unknown", never an error: a virtual adapter has no PCI function, a VM has no
// NUMA information, an old kernel has no effective_affinity_list. read_topology() throws only when
// <root>/sys/class/net cannot be listed. /sys shows the network namespace that mounted it, not the
// calling thread's: inside a testbed namespace, list adapters with interface_addresses().
//
// Emulated adapters (the userspace ATM link's TUN/TAP devices) name their emulated controller and
// interrupt CPUs in ifalias: "mtperf-emu controller=<name> cpus=<cpu list> [kind=<kind>]".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace mtperf {

enum class LinkType { ethernet, atm, infiniband, loopback, virtual_link, other };
std::string to_string(LinkType type);  // "ethernet", "atm", "infiniband", "loopback", "virtual"

struct Irq {
  int number = -1;
  std::string name;                 // action name(s) from /proc/interrupts, "" when not listed
  std::vector<int> effective_cpus;  // CPUs the IRQ is delivered to, ascending
  bool data_queue = false;  // carries packets (rx/tx/TxRx/comp queue or named after the adapter),
                            // as opposed to config/async/admin vectors of the same function
};

struct Adapter {
  std::string name;
  int ifindex = 0;
  LinkType type = LinkType::other;
  std::string kind;  // virtual kind: veth, tun, tap, bridge, bond, vlan, ifb, dummy, ...; "" for
                     // adapters on a bus
  int arp_type = 0;  // ARPHRD_* from sysfs "type"
  int mtu = 0;       // bytes
  std::optional<int64_t> speed_mbps;      // link speed in Mbit/s; empty when unknown or link down
  std::string operstate;                  // "up", "down", "unknown", ...
  bool admin_up = false;                  // IFF_UP
  bool up = false;                        // admin up and operstate up/unknown
  std::string driver;                     // e.g. ixgbe, mlx5_core, virtio_net; "" when unknown
  std::string bus_device;                 // the sysfs device the netdev hangs off (virtio2), if any
  std::string pci_address;                // PCI function, e.g. 0000:41:00.0; "" when not on PCI
  std::string controller;                 // PCI host bridge, e.g. pci0000:40; emulated name; or ""
  std::string root_port;                  // PCI root port under the controller; "" when none
  bool emulated = false;                  // controller and CPUs come from an mtperf-emu ifalias
  int numa_node = -1;                     // -1 when unknown
  std::vector<int> local_cpus;            // CPUs local to the device (local_cpulist)
  std::vector<Irq> irqs;                  // ascending by number
  std::vector<std::string> rdma_devices;  // e.g. mlx5_0 on the same PCI function; rxe0 over it
  // The RDMA port that carries this interface (its RoCE GIDs, the soft device over it, IPoIB's
  // dev_port; platform/rdma_devices.hpp): "" and 0 when none.
  std::string rdma_device;
  int rdma_port = 0;

  bool is_virtual() const { return type == LinkType::virtual_link || type == LinkType::loopback; }
  // CPUs that take this adapter's packet interrupts: the union of the effective CPUs of its data
  // queue IRQs (all IRQs when none is recognised as a data queue), in order of first appearance
  // by IRQ number. Empty for adapters without IRQs (veth, loopback).
  std::vector<int> irq_cpus() const;
};

struct PciController {
  std::string name;    // "pci0000:00", or the emulated controller's name
  int numa_node = -1;  // from its root ports or adapters; -1 when unknown
  std::vector<int> local_cpus;
  std::vector<std::string> root_ports;  // root ports that lead to adapters, ascending
  std::vector<std::string> adapters;    // adapter names, in Topology order
  bool emulated = false;
};

struct Topology {
  std::string root;                         // the directory it was read from
  std::vector<Adapter> adapters;            // ascending by ifindex
  std::vector<PciController> controllers;   // ascending by name
  int numa_nodes = 0;                       // nodes under sys/devices/system/node; 0 when unknown
  std::vector<std::vector<int>> node_cpus;  // node_cpus[n] = CPUs of node n
  std::vector<int> online_cpus;

  const Adapter* find_adapter(std::string_view name) const;
  // The adapter an RDMA port carries traffic through; nullptr when none.
  const Adapter* find_rdma_adapter(std::string_view device, int port) const;
  const PciController* find_controller(std::string_view name) const;
};

Topology read_topology(const std::string& root = "/");

// Each adapter's name and the numbers of its IRQs, where the topology under `root` knows them
// (real NICs; not veth or TUN): what interrupt rates are grouped by. Empty when the topology
// cannot be read.
std::vector<std::pair<std::string, std::vector<int>>> adapter_irqs(const std::string& root);

// Marks an adapter as emulated: on `controller`, its packet interrupts taken by `cpus` (one
// synthetic data-queue IRQ without a number). What an "mtperf-emu" ifalias says, and what a
// testbed that knows its emulated links says directly.
void mark_emulated(Adapter& a, const std::string& controller, const std::vector<int>& cpus);

nlohmann::json to_json(const Topology& topology);
// A table for people: one line per adapter, then one per controller.
std::string render_text(const Topology& topology);

// Addresses of the live interfaces of this process's network namespace (getifaddrs); they are not
// in sysfs, so they have no root directory.
struct InterfaceAddress {
  std::string interface;
  int family = 0;       // AF_INET or AF_INET6
  std::string address;  // numeric, without scope
  int prefix_length = 0;
};
std::vector<InterfaceAddress> interface_addresses();

}  // namespace mtperf
