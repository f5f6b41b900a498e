#pragma once
// Whether the rdma transport can run on this host now, from sysfs alone (no verbs call, so it
// answers the same on a host without rdma-core's providers): usable when some RDMA device has an
// ACTIVE port. When not, `why` says which of these it is and what to do:
//   - the kernel has no RDMA support (no /sys/class/infiniband);
//   - no RDMA device (with the soft-RoCE command `rdma link add rxe0 type rxe netdev IF`, naming an
//     Ethernet interface of this host when there is one);
//   - no ACTIVE port (naming every device's ports and their states);
//   - only devices it cannot use have one: iWARP (node type RNIC: no immediate data) and those
//     without RC queue pairs or rdma_cm (EFA, usNIC), each named with its reason.
// features: the usable devices with an ACTIVE port, their link layers ("ethernet", "infiniband")
// and "rocev2" when an ACTIVE port has a RoCE v2 GID.
#include <string>
#include <vector>

namespace mtperf {

// The registry's ProbeResult (transports/api/registry.hpp) in its own fields: the rdma
// transport's entry hands them on.
struct RdmaProbe {
  bool usable = false;
  std::string why;                    // when not usable: what is missing and how to get it
  std::vector<std::string> features;  // detected optional features, by name
};

// root: "/" or a fixture tree. Never throws.
RdmaProbe rdma_probe(const std::string& root);

}  // namespace mtperf
