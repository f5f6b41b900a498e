#pragma once
// Help for a command line that did not parse: what a netperf or iperf3 habit is called here,
// or which option name was probably meant. Pure functions over the arguments as typed.
#include <string>
#include <vector>

namespace mtperf::cli {

// A translation of the netperf/iperf3 spellings in `args` ("-t TCP_RR" -> "-w rr", "-c HOST" ->
// "-H HOST", "-R" -> "-w maerts", "-- -r 1,1" -> "-r 1,1", ...), or "" when there is none.
std::string habit_hint(const std::vector<std::string>& args);

// The option of `known` (long names, without dashes) closest to `typed` ("--lenght"), within a
// small edit distance; "" when none is close.
std::string closest_option(const std::string& typed, const std::vector<std::string>& known);

// Both, as a suffix for an error message: "; did you mean --length?" / "; netperf's -t TCP_RR
// is -w rr here". "" when there is nothing to say.
std::string usage_hint(const std::vector<std::string>& args, const std::string& unknown_option,
                       const std::vector<std::string>& known);

}  // namespace mtperf::cli
