#pragma once
// A side's figures as JSON: the server sends its SideResult to the client in the RESULT frame.
// Latency histograms stay with the side that measured them (the client); everything else
// travels. Parsing is strict about types and bounded by the frame size.
#include <nlohmann/json.hpp>

#include "workloads/runner.hpp"

namespace mtperf {

nlohmann::json side_to_json(const SideResult& r);
// Throws std::invalid_argument naming the field that is missing or mistyped.
SideResult side_from_json(const nlohmann::json& j);

// A CPU's time shares are 0..kMaxCpuSharePercent (100 %, and what a round trip through decimal
// may add), CPU ids and counts 0..kMaxCpuId; cpu_from_json refuses anything else, naming the field.
inline constexpr double kMaxCpuSharePercent = 100.0 + 1e-6;
inline constexpr int kMaxCpuId = 65536;
nlohmann::json cpu_to_json(const CpuUtilization& c);
CpuUtilization cpu_from_json(const nlohmann::json& j);

// Interrupt rates, per CPU: device IRQs, every per-CPU row, NET_RX and NET_TX softirqs (per s).
nlohmann::json interrupts_to_json(const InterruptRates& r);
InterruptRates interrupts_from_json(const nlohmann::json& j);

// RDMA port counter deltas: [{"device": "mlx5_0", "port": 1, "counters": {name: count}}].
// Parsing is bounded as the reader is (platform/rdma_devices.hpp): at most kMaxRdmaPorts ports of
// kMaxRdmaCounters counters, names of at most kMaxRdmaCounterName characters, counts unsigned.
nlohmann::json rdma_ports_to_json(const std::vector<RdmaPortCounters>& ports);
// Throws std::invalid_argument naming the entry and the field.
std::vector<RdmaPortCounters> rdma_ports_from_json(const nlohmann::json& j);

// Network device counter deltas and the host's TCP counter deltas:
// {"devices": [{"device": "eth0", "stats": {name: count}, "driver": {name: count}}],
//  "tcp": {name: count}}. Parsing is bounded as the reader is (platform/netdev_stats.hpp).
nlohmann::json netdev_to_json(const NetWitness& w);
// Throws std::invalid_argument naming the entry and the field.
NetWitness netdev_from_json(const nlohmann::json& j);

}  // namespace mtperf
