#include "report/netdev_figures.hpp"

namespace mtperf {

namespace {

uint64_t get(const std::map<std::string, uint64_t>& m, const char* name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

std::vector<NetdevFigures> netdev_figures(const NetWitness& witness,
                                          const std::map<std::string, AppBytes>& app) {
  std::vector<NetdevFigures> out;
  for (const auto& d : witness.devices) {
    NetdevFigures f;
    f.device = d.device;
    f.stats = d.stats;
    f.tx_bytes = get(d.stats, "tx_bytes");
    f.rx_bytes = get(d.stats, "rx_bytes");
    f.tx_packets = get(d.stats, "tx_packets");
    f.rx_packets = get(d.stats, "rx_packets");
    f.errors = get(d.stats, "rx_errors") + get(d.stats, "tx_errors");
    f.drops = get(d.stats, "rx_dropped") + get(d.stats, "tx_dropped");
    for (const auto& [name, value] : d.driver)
      if (value != 0) f.driver.emplace(name, value);
    for (const auto* set : {&d.stats, &d.driver})
      for (const auto& [name, value] : *set)
        if (value != 0 && is_netdev_error_counter(name)) f.faults.emplace(name, value);
    f.both_directions = carries_both_directions(d.device);
    if (auto it = app.find(d.device); it != app.end()) {
      f.app_bytes_sent = it->second.sent;
      if (f.both_directions) f.app_bytes_received = it->second.received;
    }
    if (f.app_bytes_sent + f.app_bytes_received > 0)
      f.wire_payload_ratio = double(f.tx_bytes) / double(f.app_bytes_sent + f.app_bytes_received);
    if (f.app_bytes_sent > 0) f.carried = f.tx_bytes >= f.app_bytes_sent;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace mtperf
