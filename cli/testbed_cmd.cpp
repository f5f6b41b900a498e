#include "cli/testbed_cmd.hpp"

#include <charconv>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "platform/netns.hpp"

namespace mtperf {

namespace {

constexpr const char* kUsage =
    "usage: mtperf testbed up --adapters N [--mtu M] [--rate R] [--name NAME]\n"
    "       mtperf testbed down [--name NAME]\n"
    "       mtperf testbed status\n"
    "  --adapters N  veth pairs between the two namespaces, 1..64, one /24 each (10.231.<i>.0)\n"
    "  --mtu M       MTU of every veth, 68..65535 (default 1500)\n"
    "  --rate R      shape each direction with tbf, bits/s: 155.52mbit, 1g, 622080000\n"
    "  --name NAME   the testbed's name, [a-z0-9_-]{1,32} (default: default)\n";

struct Parsed {
  std::string sub;
  std::map<std::string, std::string> options;
};

// Returns 0 when parsed; otherwise the exit code after printing the problem.
int parse(const std::vector<std::string>& args, Parsed& parsed, std::ostream& out,
          std::ostream& err) {
  if (args.empty()) {
    err << "mtperf testbed: missing subcommand (up, down or status)\n" << kUsage;
    return 2;
  }
  parsed.sub = args[0];
  if (parsed.sub == "-h" || parsed.sub == "--help") {
    out << kUsage;
    return -1;
  }
  static const std::map<std::string, std::set<std::string>> kAllowed = {
      {"up", {"--adapters", "--mtu", "--rate", "--name", "--state-dir"}},
      {"down", {"--name", "--state-dir"}},
      {"status", {"--state-dir"}}};
  auto allowed = kAllowed.find(parsed.sub);
  if (allowed == kAllowed.end()) {
    err << "mtperf testbed: unknown subcommand '" << parsed.sub << "'\n" << kUsage;
    return 2;
  }
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      out << kUsage;
      return -1;
    }
    if (!allowed->second.contains(args[i])) {
      err << "mtperf testbed " << parsed.sub << ": unknown option '" << args[i] << "'\n" << kUsage;
      return 2;
    }
    if (i + 1 >= args.size() || args[i + 1].empty()) {
      err << "mtperf testbed " << parsed.sub << ": " << args[i] << " needs a value\n";
      return 2;
    }
    parsed.options[args[i]] = args[i + 1];
    ++i;
  }
  return 0;
}

bool parse_int(const std::string& text, int low, int high, int& value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size() && value >= low && value <= high;
}

// Options of `up` into TestbedOptions; returns false after naming the bad option.
bool up_options(const Parsed& p, TestbedOptions& options, std::ostream& err) {
  auto get = [&](const char* name) {
    auto it = p.options.find(name);
    return it == p.options.end() ? std::string() : it->second;
  };
  if (get("--adapters").empty()) {
    err << "mtperf testbed up: --adapters N is required\n";
    return false;
  }
  if (!parse_int(get("--adapters"), 1, kMaxTestbedAdapters, options.adapters)) {
    err << "mtperf testbed up: --adapters '" << get("--adapters") << "': expected 1.."
        << kMaxTestbedAdapters << "\n";
    return false;
  }
  if (!get("--mtu").empty() && !parse_int(get("--mtu"), 68, 65535, options.mtu)) {
    err << "mtperf testbed up: --mtu '" << get("--mtu") << "': expected 68..65535\n";
    return false;
  }
  try {
    if (!get("--rate").empty()) options.rate_bps = parse_rate(get("--rate"));
  } catch (const std::invalid_argument& e) {
    err << "mtperf testbed up: --rate: " << e.what() << "\n";
    return false;
  }
  return true;
}

void print_state(const std::string& name, const nlohmann::json& state, std::ostream& out) {
  std::set<std::string> present;
  for (const auto& ns : list_namespaces())
    present.insert(ns);
  out << "testbed " << name << ":";
  for (const auto& ns : state.value("namespaces", nlohmann::json::array()))
    if (ns.is_string())
      out << " " << ns.get<std::string>()
          << (present.contains(ns.get<std::string>()) ? "" : " (missing)");
  out << "\n";
  for (const auto& l : state.value("links", nlohmann::json::array()))
    out << "  " << l.value("near_if", "?") << " " << l.value("near_addr", "?") << "/"
        << l.value("prefix_length", 24) << "  <->  " << l.value("far_if", "?") << " "
        << l.value("far_addr", "?") << "/" << l.value("prefix_length", 24) << "\n";
}

int up(const Parsed& p, const std::string& name, const std::string& dir, std::ostream& out,
       std::ostream& err) {
  TestbedOptions options;
  if (!up_options(p, options, err)) return 2;
  if (std::filesystem::exists(testbed_state_path(name, dir))) {
    err << "mtperf testbed up: testbed '" << name << "' is already up; run `mtperf testbed down"
        << " --name " << name << "` first or choose another --name\n";
    return 1;
  }
  options.tag = name;
  Testbed bed(options);
  nlohmann::json state = bed.state();
  state["name"] = name;
  write_testbed_state(name, state, dir);  // throws: the Testbed then removes what it made
  bed.release();
  print_state(name, state, out);
  out << "enter with: ip netns exec " << bed.near_ns() << " ... (client), "
      << "ip netns exec " << bed.far_ns() << " ... (server)\n";
  return 0;
}

int down(const std::string& name, const std::string& dir, std::ostream& out) {
  nlohmann::json state = read_testbed_state(name, dir);
  for (const auto& ns : remove_testbed(state))
    out << "removed " << ns << "\n";
  std::filesystem::remove(testbed_state_path(name, dir));
  out << "testbed " << name << " is down\n";
  return 0;
}

int status(const std::string& dir, std::ostream& out) {
  std::set<std::string> recorded;
  auto names = list_testbed_states(dir);
  for (const auto& name : names) {
    nlohmann::json state = read_testbed_state(name, dir);
    for (const auto& ns : state.value("namespaces", nlohmann::json::array()))
      if (ns.is_string()) recorded.insert(ns.get<std::string>());
    print_state(name, state, out);
  }
  if (names.empty()) out << "no veth testbed is up\n";
  // Emulated-ATM testbeds (`mtperf atm up`) keep their own state files beside ours.
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string file = e.path().filename().string();
    if (!file.starts_with("atm-") || !file.ends_with(".json") || file.ends_with(".stats.json"))
      continue;
    try {
      std::ifstream in(e.path());
      nlohmann::json state = nlohmann::json::parse(in);
      for (const auto& ns : state.value("namespaces", nlohmann::json::array()))
        if (ns.is_string()) recorded.insert(ns.get<std::string>());
      out << "emulated ATM testbed " << file.substr(4, file.size() - 9)
          << " (see mtperf atm status)\n";
    } catch (const std::exception&) {
      out << "unreadable state file " << e.path().string() << "\n";
    }
  }
  for (const auto& ns : list_namespaces())
    if (!recorded.contains(ns))
      out << "namespace " << ns << " is in no state file (a test still running, or one that "
          << "died: remove it with `ip netns del " << ns << "`)\n";
  return 0;
}

}  // namespace

int testbed_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Parsed p;
  if (int rc = parse(args, p, out, err); rc != 0) return rc < 0 ? 0 : rc;
  std::string name = p.options.contains("--name") ? p.options["--name"] : "default";
  std::string dir = p.options.contains("--state-dir") ? p.options["--state-dir"] : kTestbedStateDir;
  try {
    check_testbed_name(name);
  } catch (const std::invalid_argument& e) {
    err << "mtperf testbed " << p.sub << ": --name: " << e.what() << "\n";
    return 2;
  }
  try {
    if (p.sub == "up") return up(p, name, dir, out, err);
    if (p.sub == "down") return down(name, dir, out);
    return status(dir, out);
  } catch (const std::exception& e) {
    err << "mtperf testbed " << p.sub << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace mtperf
