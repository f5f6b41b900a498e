#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

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
    "  transports  list transports: compiled in, usable here, and why not\n"
    "  topology    adapters, PCI controllers, NUMA nodes, interrupt CPUs\n"
    "  testbed     test hosts in network namespaces joined by veth pairs (root)\n"
    "  atm         emulated ATM: up, down, status (root); cells, decode\n"
    "'mtperf COMMAND --help' for a command's options; 'mtperf --version'.\n";

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
  if (cmd == "transports") return transports_command(args);
  if (cmd == "topology") return mtperf::topology_command(args, std::cout, std::cerr);
  if (cmd == "testbed") return mtperf::testbed_command(args, std::cout, std::cerr);
#ifdef MTPERF_HAVE_ATM
  if (cmd == "atm" && !args.empty() && args[0] == "cells") {
    return mtperf::cli::atm_cells_command({args.begin() + 1, args.end()}, std::cout, std::cerr);
  }
  if (cmd == "atm" && !args.empty() && args[0] == "decode") {
    return mtperf::cli::atm_decode_command({args.begin() + 1, args.end()}, std::cin, std::cout,
                                           std::cerr);
  }
  if (cmd == "atm" && !args.empty() &&
      (args[0] == "up" || args[0] == "down" || args[0] == "status")) {
    return mtperf::cli::atm_testbed_command(args[0], {args.begin() + 1, args.end()}, std::cout,
                                            std::cerr);
  }
  if (cmd == "atm") {
    std::fputs("usage: mtperf atm up|down|status|cells|decode [options]\n", stderr);
    return 2;
  }
#endif
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "-V" || cmd == "--version" || cmd == "version") {
    std::printf("mtperf %s\n", MTPERF_VERSION);
    return 0;
  }
  std::string near = closest_option(
      cmd, {"run", "serve", "suite", "sweep", "transports", "topology", "testbed", "atm"});
  std::string hint = habit_hint(args);
  if (!near.empty()) hint = "did you mean 'mtperf " + near + "'?";
  std::fprintf(stderr, "mtperf: unknown command '%s'%s%s\n%s", cmd.c_str(),
               hint.empty() ? "" : "; ", hint.c_str(), kUsage);
  return 2;
}
