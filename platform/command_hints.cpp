#include "platform/command_hints.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "platform/words.hpp"

namespace mtperf::cli {
namespace {

// netperf's test names (-t) as mtperf options.
const std::map<std::string, std::string>& netperf_tests() {
  static const std::map<std::string, std::string> m = {
      {"TCP_STREAM", "-w stream"},
      {"TCP_MAERTS", "-w maerts"},
      {"TCP_RR", "-w rr"},
      {"TCP_CRR", "-w crr"},
      {"UDP_STREAM", "-w stream -p udp"},
      {"UDP_RR", "-w rr -p udp"},
      {"TCP_SENDFILE", "-w stream"},
      {"OMNI", "-w stream"},
  };
  return m;
}

std::string upper(std::string s) {
  for (char& c : s)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool is_number(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789.") == std::string::npos;
}

}  // namespace

std::string habit_hint(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string next = i + 1 < args.size() ? args[i + 1] : "";
    if (a == "-t" && !next.empty()) {
      auto it = netperf_tests().find(upper(next));
      if (it != netperf_tests().end())
        return "netperf's -t " + next + " is " + it->second + " here";
      if (is_number(next)) return "iperf3's -t " + next + " (seconds) is -l " + next + " here";
    }
    if (a == "-c" && !next.empty()) return "iperf3's -c " + next + " is -H " + next + " here";
    if (a == "-R" || a == "--reverse") return "iperf3's -R is -w maerts here";
    if (a == "--bidir") return "iperf3's --bidir is -w bidir here";
    if (a == "-u" || a == "--udp") return "iperf3's -u is -p udp here";
    if ((a == "-b" || a == "--bitrate") && !next.empty())
      return "iperf3's -b " + next + " is --rate " + next + " here";
    if (a == "-D" && !next.empty()) return "netperf's -D " + next + " is --interval " + next;
    if (a == "--") {
      std::string rest;
      for (size_t j = i + 1; j < args.size(); ++j)
        rest += (rest.empty() ? "" : " ") + args[j];
      return "mtperf takes netperf's test-specific options (after --) directly" +
             (rest.empty() ? std::string() : ": " + rest);
    }
  }
  return "";
}

std::string closest_option(const std::string& typed, const std::vector<std::string>& known) {
  std::string name = typed;
  name.erase(0, name.find_first_not_of('-'));
  name = name.substr(0, name.find('='));
  return nearest_word(name, known);
}

std::string usage_hint(const std::vector<std::string>& args, const std::string& unknown_option,
                       const std::vector<std::string>& known) {
  std::string habit = habit_hint(args);
  if (!habit.empty()) return "; " + habit;
  std::string near = unknown_option.empty() ? "" : closest_option(unknown_option, known);
  if (!near.empty()) return "; did you mean --" + near + "?";
  return "";
}

}  // namespace mtperf::cli
