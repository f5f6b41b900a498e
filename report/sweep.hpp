#pragma once
// A scalability sweep: the same workloads over 1, 2, ... N adapters, laid out as the
// multi-adapter reports do — one row per workload, one column per adapter count, CPU
// utilization under every figure, and the scaling efficiency (the figure at N adapters over N
// times the figure at one).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mtperf {

struct SweepCell {
  int adapters = 0;
  double value = 0;  // Mbit/s for throughput rows, transactions/s for rr rows
  std::optional<double> local_cpu, remote_cpu;  // host utilization, percent
  std::optional<double> jain_fairness;          // over the adapters' totals
  std::vector<std::string> errors;
};

struct SweepRow {
  std::string name;   // "outbound", "inbound", "bidirectional", "tcp rr 1", ...
  std::string label;  // as printed: "TCP outbound"
  std::string unit;   // "Mbit/s" or "trans/s"
  std::vector<SweepCell> cells;
};

struct Sweep {
  std::string transport;
  std::string hosts;  // "testbed mtperf-...-near -> ...-far (veth)", "this host -> 10.0.0.2"
  double length_s = 0;
  std::vector<int> adapter_counts;
  std::vector<SweepRow> rows;
};

// value(i) / (adapters(i) / adapters(0) * value(0)); empty when cell 0 is missing or zero.
std::optional<double> scaling_efficiency(const SweepRow& row, size_t i);

std::string sweep_text(const Sweep& s);
nlohmann::json sweep_json(const Sweep& s);
std::string sweep_csv(const Sweep& s);

}  // namespace mtperf
