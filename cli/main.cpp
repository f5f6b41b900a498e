#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/testbed_cmd.hpp"
#include "cli/topology_cmd.hpp"
#include "platform/command_hints.hpp"
#include "platform/command_line.hpp"
#include "transports/api/registry.hpp"
#include "workloads/kind.hpp"

namespace {

struct Command {
  const char* name;
  const char* summary;
  bool group = false;  // made of subcommands: `mtperf testbed up`
};

constexpr Command kCommands[] = {
    {"run", "run a test (without -H: against an in-process server on 127.0.0.1)"},
    {"serve", "serve tests to clients"},
    {"suite", "every workload on every usable transport, on loopback, side by side"},
    {"sweep", "workloads over one axis: adapters, message sizes, flows or a testbed's MTU"},
    {"compare", "configurations side by side, iterated, with a verdict per workload"},
    {"fleet", "every pair of a cluster, one process per host from srun, mpirun, k8s"},
    {"report", "JSON documents as one self-contained HTML page with charts and tables"},
    {"transports", "list transports: compiled in, usable here, and why not"},
    {"topology", "adapters, PCI controllers, NUMA nodes, interrupt CPUs"},
    {"testbed", "test hosts in network namespaces joined by veth pairs (root)", true},
};
const char* kUsageTail = "'mtperf COMMAND --help' for a command's options; 'mtperf --version'.\n";

// The commands transport families bring with their lines (`mtperf atm ...`), from the registry.
std::vector<const mtperf::LineCommands*> line_commands() {
  std::vector<const mtperf::LineCommands*> out;
  for (const mtperf::LineHook* hook : mtperf::line_hooks())
    if (const mtperf::LineCommands* c = hook->commands()) out.push_back(c);
  return out;
}

std::string usage_entry(const std::string& name, const std::string& summary) {
  std::string text = "  " + name;
  text.resize(std::max<size_t>(text.size() + 1, 14), ' ');
  return text + summary + "\n";
}

std::string usage() {
  std::string text = "usage: mtperf COMMAND [options]\n";
  for (const Command& c : kCommands)
    text += usage_entry(c.name, c.summary);
  for (const mtperf::LineCommands* c : line_commands())
    text += usage_entry(c->group, c->summary);
  return text + kUsageTail;
}

// `mtperf --help` under MTPERF_HELP_FORMAT=json (platform/command_line.hpp): the commands, and
// the names their options take (-T, -O KEY, -w), for the man pages and the bash completion.
std::string usage_json() {
  nlohmann::json j = {{"version", MTPERF_VERSION},
                      {"commands", nlohmann::json::array()},
                      {"transports", nlohmann::json::array()},
                      {"workloads", nlohmann::json::array()}};
  for (const Command& c : kCommands)
    j["commands"].push_back({{"name", c.name}, {"summary", c.summary}, {"group", c.group}});
  for (const mtperf::LineCommands* c : line_commands())
    j["commands"].push_back({{"name", c->group}, {"summary", c->summary}, {"group", true}});
  for (const mtperf::TransportEntry& e : mtperf::transports()) {
    nlohmann::json t = {{"name", std::string(e.name)},
                        {"summary", std::string(e.summary)},
                        {"default", e.is_default},
                        {"options", nlohmann::json::array()}};
    for (const auto& o : e.options())
      t["options"].push_back({{"key", o.key}, {"default", o.default_value}, {"help", o.help}});
    j["transports"].push_back(t);
  }
  for (const mtperf::WorkloadKind* k : mtperf::workload_kinds())
    j["workloads"].push_back(std::string(k->name));
  return j.dump() + "\n";
}

int line_command(const mtperf::LineCommands& c, const std::vector<std::string>& args) {
  std::vector<mtperf::cli::Subcommand> subs;
  for (const mtperf::LineCommand& sub : c.subcommands) {
    subs.push_back({sub.name, sub.summary, [run = sub.run](const std::vector<std::string>& a) {
                      return run(a, std::cin, std::cout, std::cerr);
                    }});
  }
  return mtperf::cli::run_subcommand(c.group, subs, args, std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(usage().c_str(), stderr);
    return 2;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  using namespace mtperf::cli;
  if (cmd == "run") return run_command(args);
  if (cmd == "serve") return serve_command(args);
  if (cmd == "suite") return suite_command(args);
  if (cmd == "sweep") return sweep_command(args);
  if (cmd == "compare") return compare_command(args);
  if (cmd == "fleet") return fleet_command(args);
  if (cmd == "report") return report_command(args);
  if (cmd == "transports") return transports_command(args);
  if (cmd == "topology") return mtperf::topology_command(args, std::cout, std::cerr);
  if (cmd == "testbed") return mtperf::testbed_command(args, std::cout, std::cerr);
  std::vector<std::string> commands;
  for (const Command& c : kCommands)
    commands.push_back(c.name);
  for (const mtperf::LineCommands* c : line_commands()) {
    if (cmd == c->group) return line_command(*c, args);
    commands.push_back(c->group);
  }
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs((mtperf::cli::help_as_json() ? usage_json() : usage()).c_str(), stdout);
    return 0;
  }
  if (cmd == "-V" || cmd == "--version" || cmd == "version") {
    std::printf("mtperf %s\n", MTPERF_VERSION);
    return 0;
  }
  std::string near = closest_option(cmd, commands);
  std::string hint = habit_hint(args);
  if (!near.empty()) hint = "did you mean 'mtperf " + near + "'?";
  std::fprintf(stderr, "mtperf: unknown command '%s'%s%s\n%s", cmd.c_str(),
               hint.empty() ? "" : "; ", hint.c_str(), usage().c_str());
  return 2;
}
