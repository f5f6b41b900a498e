#include <csignal>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/commands.hpp"
#include "control/server.hpp"
#include "transports/api/registry.hpp"

namespace po = boost::program_options;

namespace mtperf::cli {
namespace {

control::Server* g_server = nullptr;

void on_signal(int) {
  if (g_server) g_server->stop();  // only stores an atomic flag
}

}  // namespace

int serve_command(const std::vector<std::string>& args) {
  po::options_description d("mtperf serve options");
  d.add_options()("help,h", "this help")("port", po::value<uint16_t>()->default_value(12865),
                                         "control port (0: any free port)")(
      "bind", po::value<std::string>()->default_value("0.0.0.0"), "address to listen on")(
      "key", po::value<std::string>(), "pre-shared key clients must prove (HMAC challenge)")(
      "max-sessions", po::value<uint32_t>()->default_value(16), "clients served at once")(
      "verbose,v", po::bool_switch(), "log each client's errors");
  po::variables_map vm;
  try {
    po::positional_options_description none;  // stray words are errors, not ignored
    po::store(po::command_line_parser(args).options(d).positional(none).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "mtperf serve: %s\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << "usage: mtperf serve [options]\n" << d;
    return 0;
  }
  control::ServerOptions o;
  o.port = vm["port"].as<uint16_t>();
  o.bind = vm["bind"].as<std::string>();
  if (vm.count("key")) o.key = vm["key"].as<std::string>();
  o.max_sessions = vm["max-sessions"].as<uint32_t>();
  o.verbose = vm["verbose"].as<bool>();
  try {
    control::Server server(o);
    g_server = &server;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::printf("mtperf serve: listening on %s port %u\n", o.bind.c_str(), server.port());
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
