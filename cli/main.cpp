#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/hints.hpp"
#include "cli/testbed_cmd.hpp"
#include "cli/topology_cmd.hpp"
#ifdef MTPERF_HAVE_ATM
#include "cli/atm_cmd.hpp"
#include "cli/atm_testbed_cmd.hpp"
#endif

namespace {

const char* kUsage =
    "usage: mtperf COMMAND [options]\n"
    "  run         run a test (without -H: against an in-process server on 127.0.0.1)\n"
    "  serve       serve tests to clients\n"
    "  suite       every workload on every usable transport, on loopback, side by side\n"
    "  sweep       the multi-adapter scalability table: workloads over 1..N adapters\n"
    "  compare     configurations side by side, iterated, with a verdict per workload\n"
    "  fleet       every pair of a cluster, one process per host from srun, mpirun, k8s\n"
    "  report      JSON documents as one self-contained HTML page with charts and tables\n"
    "  transports  list transports: compiled in, usable here, and why not\n"
    "  topology    adapters, PCI controllers, NUMA nodes, interrupt CPUs\n"
    "  testbed     test hosts in network namespaces joined by veth pairs (root)\n"
    "  atm         emulated ATM: up, down, status (root); cells, decode\n"
    "'mtperf COMMAND --help' for a command's options; 'mtperf --version'.\n";

#ifdef MTPERF_HAVE_ATM
int atm_command(const std::vector<std::string>& args) {
  using namespace mtperf::cli;
  auto testbed = [](const char* sub) {
    return [sub](const std::vector<std::string>& a) {
      return atm_testbed_command(sub, a, std::cout, std::cerr);
    };
  };
  const std::vector<Subcommand> subs = {
      {"up", "build an emulated ATM testbed, kept by a daemon until `down` (root)", testbed("up")},
      {"down", "stop the daemon and remove what it made", testbed("down")},
      {"status", "per-adapter line, host and VC counters of the testbeds that are up",
       testbed("status")},
      {"cells", "the cells of one AAL5 PDU, in hex",
       [](const std::vector<std::string>& a) {
         return atm_cells_command(a, std::cout, std::cerr);
       }},
      {"decode", "the PDUs of cells read in hex from stdin",
       [](const std::vector<std::string>& a) {
         return atm_decode_command(a, std::cin, std::cout, std::cerr);
       }},
  };
  return run_subcommand("atm", subs, args, std::cout, std::cerr);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
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
#ifdef MTPERF_HAVE_ATM
  if (cmd == "atm") return atm_command(args);
#endif
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "-V" || cmd == "--version" || cmd == "version") {
    std::printf("mtperf %s\n", MTPERF_VERSION);
    return 0;
  }
  std::string near = closest_option(cmd, {"run", "serve", "suite", "sweep", "compare", "fleet",
                                          "report", "transports", "topology", "testbed", "atm"});
  std::string hint = habit_hint(args);
  if (!near.empty()) hint = "did you mean 'mtperf " + near + "'?";
  std::fprintf(stderr, "mtperf: unknown command '%s'%s%s\n%s", cmd.c_str(),
               hint.empty() ? "" : "; ", hint.c_str(), kUsage);
  return 2;
}
