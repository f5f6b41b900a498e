#pragma once
// The axis `mtperf sweep` varies along its columns: the option that names it, the bounds of its
// values, and what each column adds to its runs' options.
#include <cstdint>
#include <string>
#include <vector>

#include "report/sweep.hpp"

namespace mtperf::cli {

// A sweep has at most this many columns (`--flows 1..4096` is refused).
inline constexpr size_t kMaxSweepColumns = 64;

struct SweepAxisOption {
  SweepAxis axis;
  const char* option;      // the sweep's long option: "adapters", "message-size", "flows", "mtu"
  const char* value_name;  // "A..B|LIST", "SIZES"
  const char* help;        // for --help
};

// The four axes, in the order usage texts name them.
const std::vector<SweepAxisOption>& sweep_axis_options();

// The values of `text` for the axis: `A..B` (adapters, flows) or an ascending list `a,b,c` of
// numbers (message sizes with K/M/G = 1024-based); at most kMaxSweepColumns. Throws UsageError
// naming the option as `typed` ("--flows") and the value as typed.
std::vector<int64_t> parse_axis_values(SweepAxis axis, const std::string& typed,
                                       const std::string& text);

// What a column at `value` adds to each run's options: {"--adapters", "auto:4"}, {"-m", "8192"},
// {"-P", "4"}; nothing for mtu (the links are set instead).
std::vector<std::string> axis_run_args(SweepAxis axis, int64_t value);

// The run option the axis sets per column, spelled short ("-m", "-P"); "" when it sets none a
// user could also give (adapters is the sweep's own option; mtu sets no run option).
std::string axis_run_option(SweepAxis axis);

}  // namespace mtperf::cli
