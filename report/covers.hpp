#pragma once
// What each figure of a run's summary covers: the mean of the iterations, every iteration merged,
// the last iteration alone, or a connection's whole life. One table, read by every renderer, so
// that no report sets figures from different windows side by side without saying so
// (docs/cli.md, "What a figure covers").
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mtperf {

struct Report;

enum class Cover {
  mean_of_iterations,  // each iteration's measured window, then their mean
  all_iterations,      // every iteration's measured window, merged (latency, errors)
  last_iteration,      // the last iteration's measured window alone
  whole_connection,    // the connection's whole life, warm-up included (TCP_INFO, end counts)
};

std::string_view to_string(Cover c);

struct FigureCover {
  std::string_view figure;  // the summary's JSON key; "flows[].x" for a per-flow figure
  Cover cover;
};

// Every figure of the summary whose cover is not plain: the table behind the labels.
std::span<const FigureCover> summary_covers();

// The "covers" object of the run document: the iterations, the warm-up left out, and each
// figure's cover.
nlohmann::json covers_json(const Report& r);

// One CSV field: what the row's figures cover, e.g. "mean of 3 iterations; latency: all 3;
// CPU, service demand, UDP loss: the last".
std::string covers_csv_row(const Report& r);
// The same for the per-flow rows: "the last iteration (3 of 3); RETRANSMITS, CLIENT_* and
// SERVER_*: the connection's whole life".
std::string covers_csv_flows(const Report& r);

}  // namespace mtperf
