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
  std::optional<double> wire_payload_ratio;  // tx_bytes / app_bytes_sent; absent when 0 sent
  std::optional<bool> carried;               // tx_bytes >= app_bytes_sent; absent when 0 sent
};

// `app_sent`: payload bytes sent in the window by device name.
std::vector<NetdevFigures> netdev_figures(const NetWitness& witness,
                                          const std::map<std::string, uint64_t>& app_sent);

}  // namespace mtperf
