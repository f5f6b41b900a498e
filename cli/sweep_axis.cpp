#include "cli/sweep_axis.hpp"

#include "cli/run_options.hpp"
#include "platform/command_line.hpp"
#include "platform/link_mtu.hpp"
#include "platform/netns.hpp"
#include "platform/number.hpp"
#include "workloads/spec.hpp"

namespace mtperf::cli {
namespace {

struct Bounds {
  int64_t lo, hi;
  const char* noun;  // "'0' is not <noun> 1..64"
  bool range;        // A..B is accepted
};

Bounds bounds_of(SweepAxis a) {
  switch (a) {
    case SweepAxis::adapters:
      return {1, kMaxTestbedAdapters, "a count of", true};
    case SweepAxis::message_size:
      return {1, kLimits.max_msg_size, "a message size of", false};
    case SweepAxis::flows:
      return {1, kLimits.max_flows, "a count of", true};
    case SweepAxis::mtu:
      return {kMinLinkMtu, kMaxLinkMtu, "an MTU of", false};
  }
  return {1, 1, "?", false};
}

int64_t parse_value(SweepAxis axis, const std::string& typed, const std::string& t) {
  const Bounds b = bounds_of(axis);
  int64_t v = -1;
  if (axis == SweepAxis::message_size) {
    try {
      v = int64_t(std::min<uint64_t>(parse_size(typed.substr(2), t), INT64_MAX));
    } catch (const UsageError&) {
      v = -1;
    }
  } else {
    std::optional<uint64_t> whole = parse_whole(t, 0, INT64_MAX);
    v = whole ? int64_t(*whole) : -1;
  }
  if (v < b.lo || v > b.hi)
    throw UsageError("option " + typed + ": '" + t + "' is not " + b.noun + " " +
                     axis_value_text(axis, b.lo) + ".." + axis_value_text(axis, b.hi));
  return v;
}

}  // namespace

const std::vector<SweepAxisOption>& sweep_axis_options() {
  static const std::vector<SweepAxisOption> all = {
      {SweepAxis::adapters, "adapters", "A..B|LIST",
       "adapter counts, 1..64: 1..4 or 1,2,4,8 (each run takes auto:N); with -P flows per "
       "adapter and the scaling efficiency"},
      {SweepAxis::message_size, "message-size", "SIZES",
       "stream send sizes (each run's -m), ascending: 8K,32K,64K; the stream rows only, with "
       "service demand in us/KB"},
      {SweepAxis::flows, "flows", "A..B|LIST",
       "parallel flows (each run's -P), 1..4096: 1..16 or 1,2,4,8; the transaction load curve "
       "of the rr rows, its peak and the first CPU-saturated column marked"},
      {SweepAxis::mtu, "mtu", "MTUS",
       "with --testbed: the links' MTU for each column, 68..65535, ascending: 1500,9000; "
       "restored after the sweep"},
  };
  return all;
}

std::vector<int64_t> parse_axis_values(SweepAxis axis, const std::string& typed,
                                       const std::string& text) {
  std::vector<int64_t> out;
  if (auto dots = text.find(".."); dots != std::string::npos) {
    if (!bounds_of(axis).range)
      throw UsageError("option " + typed + ": '" + text +
                       "': give a list of values (8K,32K,64K; 1500,9000), not a range");
    int64_t lo = parse_value(axis, typed, text.substr(0, dots));
    int64_t hi = parse_value(axis, typed, text.substr(dots + 2));
    if (lo > hi) throw UsageError("option " + typed + ": '" + text + "' runs backwards");
    if (hi - lo >= int64_t(kMaxSweepColumns))
      throw UsageError("option " + typed + ": '" + text + "' is " + std::to_string(hi - lo + 1) +
                       " columns; at most " + std::to_string(kMaxSweepColumns));
    for (int64_t n = lo; n <= hi; ++n)
      out.push_back(n);
    return out;
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    out.push_back(parse_value(axis, typed, text.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i] <= out[i - 1])
      throw UsageError("option " + typed + ": values must ascend, got '" + text + "'");
  if (out.size() > kMaxSweepColumns)
    throw UsageError("option " + typed + ": " + std::to_string(out.size()) + " columns; at most " +
                     std::to_string(kMaxSweepColumns));
  return out;
}

std::vector<std::string> axis_run_args(SweepAxis axis, int64_t value) {
  switch (axis) {
    case SweepAxis::adapters:
      return {"--adapters", "auto:" + std::to_string(value)};
    case SweepAxis::message_size:
      return {"-m", std::to_string(value)};
    case SweepAxis::flows:
      return {"-P", std::to_string(value)};
    case SweepAxis::mtu:
      return {};
  }
  return {};
}

std::string axis_run_option(SweepAxis axis) {
  switch (axis) {
    case SweepAxis::message_size:
      return "-m";
    case SweepAxis::flows:
      return "-P";
    case SweepAxis::adapters:
    case SweepAxis::mtu:
      return "";
  }
  return "";
}

}  // namespace mtperf::cli
