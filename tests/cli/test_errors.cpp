// Every error names something that exists: each message the run options and the test's own
// checks (workloads/spec.cpp validate()) can give names options `mtperf run --help` lists, never
// an internal name (`--test`, a struct field).
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <catch2/catch.hpp>

#include "cli/run_options.hpp"
#include "workloads/spec.hpp"

using namespace mtperf;
using namespace mtperf::cli;

namespace {

// What --help lists: "-r", "--rr-size", and the old spellings it names.
bool listed(const CommandSpec& spec, const std::string& option) {
  if (option.rfind("--", 0) == 0) {
    const std::string name = option.substr(2);
    for (const auto& [old, now] : spec.aliases)
      if (old == name) return true;
    return spec.options.find_nothrow(name, false) != nullptr;
  }
  for (const auto& o : spec.options.options())
    if (o->canonical_display_name(
            boost::program_options::command_line_style::allow_dash_for_short) == option)
      return true;
  return false;
}

// The options a message names: "-r", "--rr-size" where they stand as words.
std::vector<std::string> options_named(const std::string& message) {
  static const std::regex option(R"((?:^|[\s('`/])(--?[A-Za-z][A-Za-z0-9-]*))");
  std::vector<std::string> out;
  for (std::sregex_iterator it(message.begin(), message.end(), option), end; it != end; ++it)
    out.push_back((*it)[1]);
  return out;
}

std::string error_of(const std::string& args) {
  std::vector<std::string> words;
  std::istringstream in(args);
  for (std::string w; in >> w;)
    words.push_back(w);
  try {
    (void)parse_run_options(words);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every field the test's checks can name is set by an option --help lists") {
  const CommandSpec spec = run_spec();
  for (int i = 0; i <= int(kLastSpecField); ++i) {
    const auto f = SpecField(i);
    const std::string option = spec_field_option(f);
    INFO(to_string(f) << " -> " << option);
    CHECK(listed(spec, "--" + option));
  }
}

TEST_CASE("every check of a run's options and test names an option --help lists") {
  const CommandSpec spec = run_spec();
  // One command line for each check of the test's fields (validate()) and each workload-option
  // rule, and the option each must name as typed.
  struct Case {
    std::string args, option;
  };
  const std::vector<Case> cases = {
      {"-P 0", "-P"},
      {"--flows 200000", "-P"},  // "-P/--flows": both names
      {"--threads 999", "--threads"},
      {"-l 0.01", "-l"},
      {"--warmup 9999", "--warmup"},
      {"-m 0", "-m"},
      {"-m 2G", "-m"},
      {"-w rr -r 0", "-r"},
      {"-w rr -r 1,3G", "-r"},
      {"-w rr -p udp -r 8", "-r"},
      {"-w rr -p udp -r 70000", "-r"},
      {"-p udp -m 8", "-m"},
      {"-p udp -m 65508", "-m"},
      {"-w rr --burst 0", "--burst"},
      {"-w rr --burst 5000", "--burst"},
      {"-w crr --rate 1e12", "--rate"},
      {"-w crr -P 1000 --rate 1", "--rate"},
      {"--rate 1e15", "--rate"},
      {"-P 4 --rate 1000", "--rate"},
      {"-l 100 --interval 0.001", "--interval"},
      {"-l 3600 --interval 0.05", "--interval"},
      {"-w rr -p udp --udp-timeout 100", "--udp-timeout"},
      {"--sndbuf 4G", "--sndbuf"},
      {"--rcvbuf 4G", "--rcvbuf"},
      {"--busy-poll 2000000", "--busy-poll"},
      {"--cc a_very_long_congestion_name", "--cc"},
      {"--cc bad!", "--cc"},
      {"--mss 40", "--mss"},
      {"--mss 9217", "--mss"},
      {"--mss 1000 -p udp", "--mss"},
      {"--bind-device abcdefghijklmnopq", "--bind-device"},
      {"--source " + std::string(300, 'a'), "--source"},
      {"-T nosuch", "-T"},
      {"-O novalue", "-O"},
      {"--wait never", "--wait"},
      {"-w crr -p udp", "-w"},
      {"-p udp --mptcp", "--mptcp"},
      {"-w sideways", "-w"},
      {"-p sctp", "-p"},
      {"-w stream -r 1,1", "-r"},
      {"-w stream --rr-size 64", "--rr-size"},
      {"-w bidir --burst 2", "--burst"},
      {"-w crr --burst 2", "--burst"},
      {"-w rr -m 1K", "-m"},
      {"-w crr --message-size 1K", "--message-size"},
      {"-w rr --rate 1G", "--rate"},
      {"-w stream --udp-timeout 0.5", "--udp-timeout"},
      {"-w rr --udp-timeout 0.5", "--udp-timeout"},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(c.args);
    INFO("mtperf run " << c.args << "\n  " << message);
    REQUIRE(!message.empty());
    CHECK(message.rfind("option " + c.option, 0) == 0);
    CHECK((message[7 + c.option.size()] == ':' || message[7 + c.option.size()] == '/'));
    CHECK(message.find("--test") == std::string::npos);
    for (const std::string& named : options_named(message)) {
      INFO("names " << named);
      CHECK(listed(spec, named));
    }
  }
}

TEST_CASE("an option the workload reads is taken, and sweep's and compare's rows may pass one") {
  CHECK(error_of("-w rr -r 64,128 --burst 4 -l 0.1") == "");
  CHECK(error_of("-w crr -r 64 --rate 100 -l 0.1") == "");
  CHECK(error_of("-w stream -m 8K --rate 1G -l 0.1") == "");
  CHECK(error_of("-w rr -p udp -r 64 --udp-timeout 0.5 -l 0.1") == "");
  // The rows of a sweep set their own workload; an option for some of them goes to those.
  const RunOptions o = parse_run_options({"-w", "stream", "-r", "64"}, UnusedOptions::pass);
  CHECK(o.spec.req_size == 64);
}
