#include <csignal>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/commands.hpp"
#include "control/server.hpp"
#include "platform/affinity.hpp"
#include "transports/api/registry.hpp"
#include "workloads/memory.hpp"

namespace po = boost::program_options;

namespace mtperf::cli {
namespace {

control::Server* g_server = nullptr;

void on_signal(int) {
  if (g_server) g_server->stop();  // only stores an atomic flag
}

}  // namespace

namespace {

po::options_description serve_options() {
  po::options_description d("mtperf serve options");
  d.add_options()("help,h", "this help")("port", po::value<uint16_t>()->default_value(12865),
                                         "control port (0: any free port)")(
      "bind", po::value<std::string>()->default_value("0.0.0.0"), "address to listen on")(
      "key", po::value<std::string>(), "pre-shared key clients must prove (HMAC challenge)")(
      "allow", po::value<std::vector<std::string>>()->multitoken(),
      "CIDR...: networks clients may connect from (v4 or v6; default: any); others are closed "
      "at once")("max-sessions", po::value<uint32_t>()->default_value(16), "tests running at once")(
      "max-pending", po::value<uint32_t>()->default_value(32),
      "connections still in their handshake; one more drops the oldest")(
      "handshake-timeout", po::value<double>()->default_value(10),
      "SECONDS from connecting to a test the server accepts, however the client sends")(
      "max-flows", po::value<uint32_t>()->default_value(1024),
      "data connections (and listeners) one test may open")(
      "max-threads", po::value<uint32_t>()->default_value(64), "worker threads one test may use")(
      "max-extra-threads", po::value<uint32_t>()->default_value(0),
      "transport threads beside the workers one test may start (io_uring sqpoll: one per worker, "
      "each polling a CPU)")("cpus", po::value<std::string>(),
                             "CPUs tests may pin the server's workers to (default: any online)")(
      "max-memory", po::value<std::string>(),
      "SIZE one test may take (e.g. 512M; default 1G, or a quarter of the host's memory)")(
      "max-total-memory", po::value<std::string>(),
      "SIZE all running tests may take together (default 2G, or half the host's memory)")(
      "verbose,v", po::bool_switch(), "log each client's errors");
  return d;
}

// The options as ServerOptions; throws std::invalid_argument naming the option.
control::ServerOptions server_options(const po::variables_map& vm) {
  control::ServerOptions o;
  o.port = vm["port"].as<uint16_t>();
  o.bind = vm["bind"].as<std::string>();
  if (vm.count("key")) o.key = vm["key"].as<std::string>();
  if (vm.count("allow")) {
    for (const auto& text : vm["allow"].as<std::vector<std::string>>()) {
      try {
        o.allow.push_back(control::parse_cidr(text));
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("option --allow: ") + e.what());
      }
    }
  }
  o.max_sessions = vm["max-sessions"].as<uint32_t>();
  o.max_pending = vm["max-pending"].as<uint32_t>();
  double hs = vm["handshake-timeout"].as<double>();
  if (!(hs >= 0.1 && hs <= 600))
    throw std::invalid_argument("option --handshake-timeout: between 0.1 and 600 seconds");
  o.handshake_timeout_ms = int(hs * 1000);
  o.max_flows = vm["max-flows"].as<uint32_t>();
  o.max_threads = vm["max-threads"].as<uint32_t>();
  o.max_extra_threads = vm["max-extra-threads"].as<uint32_t>();
  try {
    if (vm.count("cpus")) o.cpus = parse_cpu_list(vm["cpus"].as<std::string>());
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("option --cpus: ") + e.what());
  }
  for (const char* name : {"max-memory", "max-total-memory"}) {
    if (!vm.count(name)) continue;
    uint64_t bytes = 0;
    try {
      bytes = parse_bytes(vm[name].as<std::string>());
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("option --") + name + ": " + e.what());
    }
    if (bytes == 0) throw std::invalid_argument(std::string("option --") + name + ": must be > 0");
    (std::string(name) == "max-memory" ? o.max_memory : o.max_total_memory) = bytes;
  }
  o.verbose = vm["verbose"].as<bool>();
  return control::resolved(o);
}

}  // namespace

int serve_command(const std::vector<std::string>& args) {
  po::options_description d = serve_options();
  po::variables_map vm;
  control::ServerOptions o;
  try {
    po::positional_options_description none;  // stray words are errors, not ignored
    po::store(po::command_line_parser(args).options(d).positional(none).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "usage: mtperf serve [options]\n" << d;
      return 0;
    }
    o = server_options(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "mtperf serve: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "mtperf serve: %s\n", e.what());
    return 2;
  }
  try {
    control::Server server(o);
    g_server = &server;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::printf(
        "mtperf serve: listening on %s port %u (at most %u tests at once, %s each, %s in all)\n",
        o.bind.c_str(), server.port(), o.max_sessions, format_bytes(o.max_memory).c_str(),
        format_bytes(o.max_total_memory).c_str());
    std::fflush(stdout);
    server.run();
    g_server = nullptr;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtperf serve: %s\n", e.what());
    return 1;
  }
  return 0;
}

int transports_command(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::fprintf(stderr, "mtperf transports: takes no arguments\n");
    return 2;
  }
  std::printf("%-8s %-9s %-7s %s\n", "name", "compiled", "usable", "details");
  for (const TransportEntry& e : transports()) {
    ProbeResult p = e.probe("/");
    std::string features;
    for (auto& f : p.features)
      features += (features.empty() ? "" : ",") + f;
    std::printf("%-8s %-9s %-7s %s%s\n", std::string(e.name).c_str(), "yes",
                p.usable ? "yes" : "no", std::string(e.summary).c_str(),
                p.usable ? (" [" + features + "]").c_str() : ("; " + p.why).c_str());
    for (auto& o : e.options()) {
      std::printf("%27s -O %s=%s  %s\n", "", o.key.c_str(), o.default_value.c_str(),
                  o.help.c_str());
    }
  }
  for (auto& [name, why] : transports_not_compiled()) {
    std::printf("%-8s %-9s %-7s %s\n", name.c_str(), "no", "no", why.c_str());
  }
  return 0;
}

}  // namespace mtperf::cli
