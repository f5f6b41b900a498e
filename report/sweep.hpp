#pragma once
// A scalability sweep: the same workloads over 1, 2, ... N adapters, laid out as the
// multi-adapter reports do — one row per workload, one column per adapter count, CPU
// utilization under every figure, and the scaling efficiency (the figure at N adapters over N
// times the figure at one).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mtperf {

// The sweep's JSON document (docs/json-schema.md) has its own version: 2 since its figures are
// bit/s (schema 1 had Mbit/s in `value`).
inline constexpr int kSweepJsonSchema = 2;

// What a row measures: throughput (bit/s) or transaction rate (transactions/s).
enum class SweepFigure { throughput, transaction_rate };

// The JSON field that carries the figure: "throughput_bps" or "transaction_rate".
std::string_view to_string(SweepFigure f);

struct SweepCell {
  int adapters = 0;
  // The row's figure, bit/s or transactions/s; absent when the test failed before measuring.
  std::optional<double> value;
  std::optional<double> local_cpu, remote_cpu;  // host utilization, percent
  std::optional<double> jain_fairness;          // over the adapters' totals
  std::vector<std::string> errors;
};

struct SweepRow {
  std::string name;   // "outbound", "inbound", "bidirectional", "tcp-rr", ...
  std::string label;  // as printed: "TCP outbound"
  SweepFigure figure = SweepFigure::throughput;
  std::vector<SweepCell> cells;
};

struct Sweep {
  std::string transport;
  std::string hosts;  // "testbed mtperf-...-near -> ...-far (veth)", "this host -> 10.0.0.2"
  double length_s = 0;
  std::vector<int> adapter_counts;
  std::vector<SweepRow> rows;
};

// value(i) / (adapters(i) / adapters(0) * value(0)); empty when cell 0 is missing or zero, or
// either cell failed.
std::optional<double> scaling_efficiency(const SweepRow& row, size_t i);

// Text and CSV give throughput in Mbit/s (10^6 bits/s); JSON in bit/s.
std::string sweep_text(const Sweep& s);
nlohmann::json sweep_json(const Sweep& s);
std::string sweep_csv(const Sweep& s);

}  // namespace mtperf
