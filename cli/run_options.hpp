#pragma once
// `mtperf run` options: parsed and checked here, before anything is set up. A bad option throws
// UsageError (platform/command_line.hpp) naming the option; run_command prints it and exits with 2.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/request.hpp"
#include "platform/command_line.hpp"

namespace mtperf::cli {

enum class Format { text, json, csv, csv_flows, junit };

// The run's request (harness/request.hpp) and what the command line does with its result.
struct RunOptions : RunRequest {
  Format format = Format::text;
  std::string output;     // -o FILE, "" = stdout
  std::string histogram;  // --histogram FILE|-: the latency buckets
  bool help = false;
};

// What parse_run_options does with an option the workload does not use (`-w stream -r 1,1`):
// `run` refuses it (bad usage); sweep and compare, whose rows or workloads differ, pass each
// option to the runs that read it.
enum class UnusedOptions { refuse, pass };
RunOptions parse_run_options(const std::vector<std::string>& args,
                             UnusedOptions unused = UnusedOptions::refuse);
// The long name of the option of `mtperf run` that sets a field of the test (workloads/spec.hpp),
// as --help lists it: "rr-size" for -r/--rr-size. Every SpecField has one.
std::string spec_field_option(SpecField f);
// The command `mtperf run`: its synopsis and options (sweep lists them as its own run options).
CommandSpec run_spec();
// Refuses a key given on the command line (`--key`), saying how to give it: argv shows in ps,
// /proc/PID/cmdline and stored job scripts. run, serve and fleet accept the option only to name it.
void refuse_key_on_command_line(const CommandLine& cl);
std::string run_usage();

// "64K" -> 65536 (K, M, G, T are powers of 1024 for sizes; platform/number.hpp)
uint64_t parse_size(const std::string& option, const std::string& text);
// "100M" -> 1e8 (k, M, G, T are powers of 1000 for rates, bits/s)
double parse_rate(const std::string& option, const std::string& text);

}  // namespace mtperf::cli
