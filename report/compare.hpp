#pragma once
// `mtperf compare`: configurations (transports, or one transport with different options) side
// by side over the same workloads, iterated and interleaved, with a verdict per cell. The model
// of its result, the statistics drawn from it, and its text, CSV and JSON renderers
// (docs/json-schema.md).
//
// Each cell holds one sample per iteration: the workload's headline figure (throughput, bit/s,
// for streams; transactions/s for rr and crr) and the CPU it cost (service demand, µs per KB or
// per transaction, on each host). Against the baseline configuration each cell gets the ratio of
// medians and Welch's t-test on the samples: "faster" or "slower" when p < 1 - level, else "no
// difference". The iterations run interleaved (A B, B A, A B, ...) so that a slow drift of the
// host loads every configuration alike.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats/confidence.hpp"
#include "stats/welch.hpp"

namespace mtperf {

inline constexpr int kCompareJsonSchema = 1;

// One configuration: a column of the comparison.
struct CompareConfig {
  std::string name;               // "socket", "uring", "cc=bbr", "socket#2"
  std::vector<std::string> args;  // the `mtperf run` options it adds
};

// One iteration of one configuration on one workload.
struct CompareSample {
  std::optional<double> value;  // the headline figure; absent when the run failed
  std::optional<double> local_demand, remote_demand;  // service demand, µs per unit
  std::vector<std::string> errors;
};

struct CompareCell {
  std::vector<CompareSample> samples;  // in iteration order
};

// What a row's figure is.
enum class CompareFigure { throughput, transaction_rate };
std::string_view to_string(CompareFigure f);  // "throughput_bps" | "transaction_rate"

struct CompareRow {
  std::string workload;  // run's name: stream, maerts, bidir, rr, crr
  CompareFigure figure = CompareFigure::throughput;
  std::string demand_unit;         // "us/KB" or "us/transaction"
  std::vector<CompareCell> cells;  // one per configuration, in Compare::configs' order
};

struct Compare {
  std::vector<CompareConfig> configs;
  size_t baseline = 0;  // index into configs
  int iterations = 0;   // asked for; a cell holds fewer when interrupted
  double level = 0.95;  // confidence level of the intervals; verdicts at p < 1 - level
  double length_s = 0;
  std::vector<std::string> common_args;  // options every run got
  std::string hosts;                     // where it ran
  std::vector<CompareRow> rows;
};

// The order the runs go in: iteration i runs every workload, each over every configuration,
// in configuration order on even iterations and reversed on odd ones.
struct CompareStep {
  int iteration = 0;
  size_t row = 0, config = 0;
};
std::vector<CompareStep> compare_plan(int iterations, size_t rows, size_t configs);

enum class Verdict {
  baseline,       // the column everything is compared with
  faster,         // higher figure, p < 1 - level
  slower,         // lower figure, p < 1 - level
  no_difference,  // p >= 1 - level
  too_few,        // fewer than 2 measured iterations on either side: no test
};
std::string_view to_string(Verdict v);

// What the renderers print for one cell.
struct CellStats {
  int measured = 0, failed = 0;  // iterations with and without a figure
  std::optional<double> median;
  ConfidenceInterval interval;  // of the mean, at Compare::level (valid from 2 samples)
  std::optional<double> ratio;  // median / the baseline's median
  WelchTest test;               // against the baseline (baseline - this order: t > 0 = faster)
  Verdict verdict = Verdict::too_few;
  std::optional<double> local_demand, remote_demand;  // medians
};
CellStats cell_stats(const Compare& c, const CompareRow& row, size_t config);

// "faster 1.12x (p=0.003)", "no difference (p=0.41)", "baseline", "too few runs".
std::string verdict_text(const CellStats& s);

// Text table: per workload, one line per configuration. Throughput in Mbit/s.
std::string compare_text(const Compare& c);
// One line per cell, with a header line; throughput in bit/s.
std::string compare_csv(const Compare& c);
// {"schema": 1, "compare": {...}}; figures in bit/s and transactions/s, every sample included.
nlohmann::json compare_json(const Compare& c);

}  // namespace mtperf
