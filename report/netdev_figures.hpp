#pragma once
// The network devices' witness in the report: each device's counter deltas over the window
// beside the application's payload bytes this side sent over it, and the check that the device
// carried at least that much (its tx bytes count headers, acknowledgements and the control
// connection too, so the ratio is >= 1 when nothing is lost between the application and the
// device). Pure: built from a side's NetWitness and its flows.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "platform/netdev_stats.hpp"

namespace mtperf {

struct NetdevFigures {
  std::string device;
  // Deltas over the window: bytes and packets as the device counted them (headers included).
  uint64_t tx_bytes = 0, rx_bytes = 0, tx_packets = 0, rx_packets = 0;
  uint64_t errors = 0, drops = 0;          // rx_errors + tx_errors, rx_dropped + tx_dropped
  std::map<std::string, uint64_t> stats;   // every statistics counter's delta
  std::map<std::string, uint64_t> driver;  // the driver's counters that moved (not zero)
  std::map<std::string, uint64_t> faults;  // counters of faults that moved, both sets
  uint64_t app_bytes_sent = 0;  // payload this side's application sent over it in its window
  // The loopback device (carries_both_directions): its tx counts what came in to this side as
  // well, so the ratio compares tx_bytes with both, app_bytes_received being what came in to
  // this side's flows over it (0 on other devices). The carried check keeps to what was sent:
  // a byte in the kernel between the device and the socket at the window's start counts as
  // come in without having crossed the device in the window.
  uint64_t app_bytes_received = 0;
  bool both_directions = false;
  // tx_bytes / app_bytes_sent (+ app_bytes_received with both_directions); absent when 0
  std::optional<double> wire_payload_ratio;
  std::optional<bool> carried;  // tx_bytes >= app_bytes_sent; absent when 0 sent
};

// The loopback device: both ends of a flow over it are on this host, so its tx counters count
// the payload of both directions (a server's answers as well as the client's requests).
inline bool carries_both_directions(const std::string& device) {
  return device == "lo";
}

// Payload bytes of this side's flows over one device in their window.
struct AppBytes {
  uint64_t sent = 0, received = 0;
};

// `app`: what this side's flows sent and received in the window, by device name.
std::vector<NetdevFigures> netdev_figures(const NetWitness& witness,
                                          const std::map<std::string, AppBytes>& app);

}  // namespace mtperf
