#pragma once
// A sweep: the same workloads over the values of one axis, laid out as the reports of the seeds
// do — one row per workload, one column per value, CPU utilization under every figure.
//
//   adapters      1, 2, ... N adapters (run --adapters auto:N); the scaling efficiency (the
//                 figure at N adapters over N times the figure at one) is shown under the table
//   message_size  the stream send size (run -m), bytes; service demand in us per KB under each
//   flows         parallel flows (run -P): for rr rows the transaction load curve, with mean and
//                 p99 response time, and the peak and the first CPU-saturated column marked
//   mtu           the testbed links' MTU, bytes, set for each column and restored after
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mtperf {

// The sweep's JSON document (docs/json-schema.md) has its own version: 3 since the columns are
// any axis (`axis` replaced `adapters`; cells carry `at`); 2 had bit/s; 1 had Mbit/s in `value`.
inline constexpr int kSweepJsonSchema = 3;

// A host whose CPU utilization (all its CPUs together) reaches this is saturated.
inline constexpr double kSaturatedCpuPercent = 99.0;

// What a row measures: throughput (bit/s) or transaction rate (transactions/s).
enum class SweepFigure { throughput, transaction_rate };

// The JSON field that carries the figure: "throughput_bps" or "transaction_rate".
std::string_view to_string(SweepFigure f);
// The service demand's unit for a row of that figure: "us/KB" or "us/transaction".
std::string_view service_demand_unit(SweepFigure f);

// What the columns vary.
enum class SweepAxis { adapters, message_size, flows, mtu };

// "adapters", "message_size", "flows", "mtu" (the JSON axis name).
std::string_view to_string(SweepAxis a);
// A column's value as the text table heads it: "8K" for 8192 message bytes, "4" flows.
std::string axis_value_text(SweepAxis a, int64_t value);
// Where a cell is, after its row's label: "with 2 adapter(s)", "at -m 8K", "with 4 flow(s)",
// "at MTU 9000".
std::string axis_cell_phrase(SweepAxis a, int64_t value);

struct SweepCell {
  int64_t at = 0;  // the axis value: adapters, bytes, flows or MTU bytes
  // The row's figure, bit/s or transactions/s; absent when the test failed before measuring.
  std::optional<double> value;
  std::optional<double> local_cpu, remote_cpu;  // host utilization, percent
  std::optional<double> jain_fairness;          // over the adapters' totals
  // CPU per unit of work, us per KB (1024 bytes) or per transaction (service_demand_unit).
  std::optional<double> local_sd, remote_sd;
  std::optional<double> latency_mean_us, latency_p99_us;  // rr rows: response time
  std::vector<std::string> errors;
};

struct SweepRow {
  std::string name;   // "outbound", "inbound", "bidirectional", "tcp-rr", ...
  std::string label;  // as printed: "TCP outbound"
  SweepFigure figure = SweepFigure::throughput;
  std::vector<SweepCell> cells;  // one per axis value, in order
};

struct Sweep {
  std::string transport;
  std::string hosts;  // "testbed mtperf-...-near -> ...-far (veth)", "this host -> 10.0.0.2"
  double length_s = 0;
  SweepAxis axis = SweepAxis::adapters;
  std::vector<int64_t> axis_values;  // ascending
  std::vector<SweepRow> rows;
};

// Adapters axis: value(i) / (at(i) / at(0) * value(0)); empty when cell 0 is missing or zero, or
// either cell failed.
std::optional<double> scaling_efficiency(const SweepRow& row, size_t i);

// The column of the row's highest figure among cells without errors; empty when none measured.
std::optional<size_t> peak_column(const SweepRow& row);
// The first column where either host's CPU reached kSaturatedCpuPercent; empty when none did.
std::optional<size_t> cpu_saturated_column(const SweepRow& row);

// Text and CSV give throughput in Mbit/s (10^6 bits/s); JSON in bit/s.
std::string sweep_text(const Sweep& s);
nlohmann::json sweep_json(const Sweep& s);
std::string sweep_csv(const Sweep& s);

}  // namespace mtperf
