#include "cli/testbed_cmd.hpp"

#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "platform/command_line.hpp"
#include "platform/netns.hpp"
#include "platform/number.hpp"
#include "transports/api/registry.hpp"

namespace mtperf {

namespace {

namespace po = boost::program_options;

// --name NAME, and the hidden --state-dir DIR (tests) of every subcommand.
cli::CommandSpec spec_with_name(const std::string& sub, const std::string& synopsis,
                                const std::string& summary, bool name) {
  cli::CommandSpec spec("testbed " + sub, synopsis, summary);
  if (name) cli::add_testbed_name(spec);
  cli::add_testbed_state_dir(spec);
  return spec;
}

cli::CommandSpec up_spec() {
  cli::CommandSpec spec = spec_with_name(
      "up", "--adapters N [--mtu M] [--rate R] [--name NAME]",
      "Builds two network namespaces joined by N veth pairs and leaves them up (root).", true);
  auto add = spec.options.add_options();
  add("adapters", po::value<std::string>()->value_name("N"),
      "veth pairs between the two namespaces, 1..64, one /24 each (10.231.<i>.0); required");
  add("mtu", po::value<std::string>()->value_name("BYTES"),
      "MTU of every veth, 68..65535 (default 1500)");
  add("rate", po::value<std::string>()->value_name("RATE"),
      "shape each direction with tbf, bits/s, k/m/g/t = 1000-based, an optional 'bit' after: "
      "155.52mbit, 1g, 622080000 (default: unshaped)");
  return spec;
}

bool parse_int(const std::string& text, int low, int high, int& value) {
  std::optional<uint64_t> v = parse_whole(text, uint64_t(low), uint64_t(high));
  if (v) value = int(*v);
  return v.has_value();
}

// Options of `up` into TestbedOptions; throws cli::UsageError naming the option as typed.
TestbedOptions up_options(const cli::CommandLine& cl) {
  TestbedOptions options;
  if (!cl.has("adapters")) throw cli::UsageError("option --adapters N is required");
  const std::string adapters = cl.get<std::string>("adapters");
  if (!parse_int(adapters, 1, kMaxTestbedAdapters, options.adapters)) {
    throw cli::UsageError("option " + cl.typed("adapters") + ": '" + adapters + "' is not 1.." +
                          std::to_string(kMaxTestbedAdapters));
  }
  if (cl.has("mtu") && !parse_int(cl.get<std::string>("mtu"), 68, 65535, options.mtu)) {
    throw cli::UsageError("option " + cl.typed("mtu") + ": '" + cl.get<std::string>("mtu") +
                          "' is not 68..65535");
  }
  try {
    if (cl.has("rate")) options.rate_bps = parse_rate(cl.get<std::string>("rate"));
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError("option " + cl.typed("rate") + ": " + e.what());
  }
  return options;
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

int up(TestbedOptions options, const std::string& name, const std::string& dir, std::ostream& out,
       std::ostream& err) {
  if (std::filesystem::exists(testbed_state_path(name, dir))) {
    err << "mtperf testbed up: testbed '" << name << "' is already up; run `mtperf testbed down"
        << " --name " << name << "` first or choose another --name\n";
    return 1;
  }
  options.tag = name;
  options.lasting = true;
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
  // The lines transports bring (`mtperf atm up`) keep their own state files beside ours.
  for (const LineHook* hook : line_hooks()) {
    for (const LineUp& line : hook->lines_up(dir)) {
      recorded.insert(line.namespaces.begin(), line.namespaces.end());
      out << line.text << "\n";
    }
  }
  for (const auto& ns : list_namespaces())
    if (!recorded.contains(ns))
      out << "namespace " << ns << " is in no state file (a test still running, or one that "
          << "died: remove it with `ip netns del " << ns << "`)\n";
  return 0;
}

// Parses a subcommand's options, then runs `body(command line, name, state dir)`: 2 on bad usage,
// 1 when the body throws.
int subcommand(const cli::CommandSpec& spec, const std::vector<std::string>& args,
               std::ostream& out, std::ostream& err,
               const std::function<int(const cli::CommandLine&, const std::string&,
                                       const std::string&)>& body) {
  int rc = 0;
  const auto cl = cli::read_command_line(spec, args, out, err, rc);
  if (!cl) return rc;
  const std::string name = cl->vm.count("name") ? cl->get<std::string>("name") : "default";
  try {
    check_testbed_name(name);
  } catch (const std::invalid_argument& e) {
    return cli::usage_error(spec, err, "option " + cl->typed("name") + ": " + e.what());
  }
  try {
    return body(*cl, name, cl->get<std::string>("state-dir"));
  } catch (const cli::UsageError& e) {
    return cli::usage_error(spec, err, e.what());
  } catch (const std::exception& e) {
    err << "mtperf " << spec.name << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int testbed_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  using Line = cli::CommandLine;
  const std::vector<cli::Subcommand> subs = {
      {"up", "build the namespaces and their veth pairs (root)",
       [&](const std::vector<std::string>& a) {
         return subcommand(up_spec(), a, out, err,
                           [&](const Line& cl, const std::string& name, const std::string& dir) {
                             return up(up_options(cl), name, dir, out, err);
                           });
       }},
      {"down", "remove what `up` built",
       [&](const std::vector<std::string>& a) {
         const auto spec = spec_with_name("down", "[--name NAME]",
                                          "Removes the namespaces of testbed NAME (root).", true);
         return subcommand(spec, a, out, err,
                           [&](const Line&, const std::string& name, const std::string& dir) {
                             return down(name, dir, out);
                           });
       }},
      {"status", "the testbeds that are up, and namespaces no state file lists",
       [&](const std::vector<std::string>& a) {
         const auto spec =
             spec_with_name("status", "", "Lists the testbeds that are up and their links.", false);
         return subcommand(spec, a, out, err,
                           [&](const Line&, const std::string&, const std::string& dir) {
                             return status(dir, out);
                           });
       }},
  };
  return cli::run_subcommand("testbed", subs, args, out, err);
}

}  // namespace mtperf
