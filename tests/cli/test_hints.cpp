// Help for command lines that did not parse: netperf/iperf3 habits and near misses.
#include <catch2/catch.hpp>

#include "cli/run_options.hpp"
#include "platform/command_hints.hpp"

using namespace mtperf::cli;

namespace {

std::string error_of(const std::vector<std::string>& args) {
  try {
    parse_run_options(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("netperf and iperf3 habits are translated") {
  CHECK(habit_hint({"-t", "TCP_RR"}) == "netperf's -t TCP_RR is -w rr here");
  CHECK(habit_hint({"-t", "udp_stream"}) == "netperf's -t udp_stream is -w stream -p udp here");
  CHECK(habit_hint({"-t", "30"}) == "iperf3's -t 30 (seconds) is -l 30 here");
  CHECK(habit_hint({"-c", "far"}) == "iperf3's -c far is -H far here");
  CHECK(habit_hint({"-w", "rr", "-R"}) == "iperf3's -R is -w maerts here");
  CHECK(habit_hint({"-u", "-b", "10M"}) == "iperf3's -u is -p udp here");
  CHECK(habit_hint({"-H", "far", "--", "-r", "1,1"}) ==
        "mtperf takes netperf's test-specific options (after --) directly: -r 1,1");
  CHECK(habit_hint({"-w", "rr", "-l", "5"}).empty());
}

TEST_CASE("a near miss names the option that was probably meant") {
  std::vector<std::string> known = {"length", "flows", "workload", "message-size", "threads"};
  CHECK(closest_option("--lenght", known) == "length");
  CHECK(closest_option("--flow", known) == "flows");
  CHECK(closest_option("--message_size", known) == "message-size");
  CHECK(closest_option("--workload=rr", known) == "workload");
  CHECK(closest_option("--bogus", known).empty());
  CHECK(closest_option("-x", known).empty());
}

TEST_CASE("mtperf run's errors carry the hint, and stay usage errors") {
  CHECK(error_of({"-t", "TCP_RR"}) ==
        "unrecognised option '-t'; netperf's -t TCP_RR is -w rr here");
  CHECK(error_of({"--lenght", "3"}) == "unrecognised option '--lenght'; did you mean --length?");
  CHECK(error_of({"-R"}) == "unrecognised option '-R'; iperf3's -R is -w maerts here");
  CHECK(error_of({"--bogus"}) == "unrecognised option '--bogus'");
}
