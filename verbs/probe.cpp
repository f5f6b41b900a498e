#include "verbs/probe.hpp"

#include <algorithm>
#include <cctype>
#include <exception>

#include "platform/rdma_devices.hpp"
#include "platform/topology.hpp"

namespace mtperf {
namespace {

constexpr int kArphrdEther = 1;

// The interface to name in the soft-RoCE hint: an Ethernet interface, preferring one that is up
// and on a bus over a virtual one; "" when the host has none (or no readable sys/class/net).
std::string ethernet_netdev(const std::string& root) {
  try {
    Topology t = read_topology(root);
    const Adapter* best = nullptr;
    int best_rank = -1;
    for (const Adapter& a : t.adapters) {
      if (a.arp_type != kArphrdEther || a.type == LinkType::loopback || a.emulated) continue;
      int rank = (a.up ? 2 : 0) + (a.type == LinkType::ethernet ? 1 : 0);
      if (rank <= best_rank) continue;
      best = &a;
      best_rank = rank;
    }
    return best ? best->name : "";
  } catch (const std::exception&) {
    return "";
  }
}

std::string no_device_reason(const std::string& root) {
  std::string netdev = ethernet_netdev(root);
  return "no RDMA device (/sys/class/infiniband is empty); on a host without RDMA hardware, "
         "create a soft-RoCE device: `modprobe rdma_rxe; rdma link add rxe0 type rxe netdev " +
         (netdev.empty() ? "IF` with IF an Ethernet interface of this host"
                         : netdev + "` (" + netdev + " is an Ethernet interface of this host)");
}

// "rxe0 port 1 DOWN (Disabled, over eth0); mlx5_0 port 1 INIT (LinkUp), port 2 DOWN (Polling)"
std::string port_states(const RdmaDevices& rd) {
  std::string out;
  for (const RdmaDevice& d : rd.devices) {
    out += (out.empty() ? "" : "; ") + d.name;
    if (d.ports.empty()) out += " has no ports";
    for (size_t i = 0; i < d.ports.size(); ++i) {
      const RdmaPort& p = d.ports[i];
      std::string detail = p.phys_state;
      std::string netdevs;
      for (const auto& n : p.netdevs)
        netdevs += (netdevs.empty() ? "" : ",") + n;
      if (!netdevs.empty()) detail += (detail.empty() ? "over " : ", over ") + netdevs;
      out += (i == 0 ? " port " : ", port ") + std::to_string(p.number) + " " +
             (p.state_text.empty() ? "unknown" : p.state_text) +
             (detail.empty() ? "" : " (" + detail + ")");
    }
  }
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

void add_feature(RdmaProbe& r, const std::string& f) {
  if (!f.empty() && std::find(r.features.begin(), r.features.end(), f) == r.features.end())
    r.features.push_back(f);
}

// Why a device of this node type (sysfs node_type: "CA", "RNIC", "usNIC", "unspecified", ...)
// cannot carry the transport, or "" when it can (or when the kernel did not say).
std::string node_refusal(const RdmaDevice& d) {
  const std::string& t = d.node_type;
  if (t.empty() || t == "CA") return "";
  if (t == "RNIC") {
    return d.name +
           " is iWARP (node type RNIC): it has no immediate data, which this transport's "
           "credits and end of stream ride on";
  }
  return d.name + " (node type " + t +
         ") has no reliable-connected queue pairs connected by rdma_cm (EFA, usNIC)";
}

}  // namespace

RdmaProbe rdma_probe(const std::string& root) {
  RdmaProbe r;
  RdmaDevices rd = read_rdma_devices(root);
  if (!rd.kernel_support) {
    r.why =
        "this kernel has no RDMA support (no /sys/class/infiniband); it needs the InfiniBand core "
        "(CONFIG_INFINIBAND) and a driver: the RoCE or InfiniBand adapter's, or rdma_rxe for "
        "soft-RoCE over an Ethernet interface";
    return r;
  }
  if (rd.devices.empty()) {
    r.why = no_device_reason(root);
    return r;
  }
  bool rocev2 = false;
  bool any_active = false;
  std::string refused;
  std::vector<std::string> layers;
  for (const RdmaDevice& d : rd.devices) {
    std::string no = node_refusal(d);
    for (const RdmaPort& p : d.ports) {
      if (!p.active()) continue;
      any_active = true;
      if (!no.empty()) {
        refused += (refused.empty() ? "" : "; ") + no;
        break;
      }
      add_feature(r, d.name);
      if (!p.link_layer.empty()) layers.push_back(lower(p.link_layer));
      rocev2 |= p.rocev2();
    }
  }
  if (r.features.empty() && any_active) {
    r.why = "no RDMA device this transport can use: " + refused +
            "; it needs an InfiniBand or RoCE device (node type CA)";
    return r;
  }
  if (r.features.empty()) {
    r.why = "no ACTIVE RDMA port: " + port_states(rd) +
            "; bring a port's link up (soft-RoCE: `ip link set IF up` on its interface; "
            "InfiniBand: a subnet manager must run on the fabric)";
    return r;
  }
  for (const auto& l : layers)
    add_feature(r, l);
  if (rocev2) add_feature(r, "rocev2");
  r.usable = true;
  return r;
}

}  // namespace mtperf
