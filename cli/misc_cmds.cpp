#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "control/listen.hpp"
#include "control/server.hpp"
#include "peers/iperf3/server.hpp"
#include "peers/sockperf/server.hpp"
#include "platform/affinity.hpp"
#include "platform/command_line.hpp"
#include "transports/api/registry.hpp"
#include "workloads/memory.hpp"

namespace po = boost::program_options;

namespace mtperf::cli {
namespace {

control::Server* g_server = nullptr;

void on_signal(int) {
  if (g_server) g_server->stop();  // only stores an atomic flag
}

void on_hangup(int) {
  if (g_server) g_server->request_reload();  // only stores an atomic flag
}

}  // namespace

namespace {

CommandSpec serve_spec() {
  CommandSpec spec(
      "serve", "[options]",
      "Serves tests to mtperf clients until SIGINT or SIGTERM; SIGHUP reads --key-file "
      "again. Logs a line per test on stderr.");
  auto add = spec.options.add_options();
  auto count = [](uint32_t v, const char* text) {
    return po::value<uint32_t>()->default_value(v, text)->value_name("N");
  };
  add("port", po::value<uint16_t>()->default_value(12865, "12865")->value_name("PORT"),
      "control port (0: any free port)");
  add("bind", po::value<std::string>()->default_value("0.0.0.0", "0.0.0.0")->value_name("ADDRESS"),
      "address to listen on");
  add("key-file", po::value<std::string>()->value_name("FILE"),
      "pre-shared key clients must prove, every control frame sealed with it, from a file "
      "(whitespace trimmed; mode 600 or stricter; default: the environment's MTPERF_KEY), read "
      "again on SIGHUP: new clients need the new key, running tests go on");
  add("allow", po::value<std::vector<std::string>>()->multitoken()->value_name("CIDR"),
      "networks clients may connect from, v4 or v6 (default: any); others are closed at once");
  add("max-sessions", count(16, "16"), "tests running at once");
  add("max-pending", count(32, "32"),
      "connections still in their handshake; one more drops the oldest");
  add("handshake-timeout", po::value<double>()->default_value(10, "10")->value_name("SECONDS"),
      "from connecting to a test the server accepts, however the client sends, 0.1..600");
  add("max-flows", count(0, "0"),
      "data connections (and listeners) one test may open; 0: what the open-file limit allows "
      "(--max-memory bounds a test apart)");
  add("max-threads", count(64, "64"), "worker threads one test may use");
  add("max-extra-threads", count(0, "0"),
      "transport threads beside the workers one test may start (io_uring sqpoll: one per worker, "
      "each polling a CPU)");
  add("cpus", po::value<std::string>()->value_name("CPU-LIST"),
      "CPUs tests may pin the server's workers to (default: any online)");
  add("max-memory", po::value<std::string>()->value_name("SIZE"),
      "memory one test may take, K/M/G = 1024-based (default 1G, or a quarter of the host's "
      "memory)");
  add("max-total-memory", po::value<std::string>()->value_name("SIZE"),
      "memory all running tests may take together (default 2G, or half the host's memory)");
  add("metrics", po::value<std::string>()->value_name("ADDRESS:PORT"),
      "serve the server's counters in the Prometheus text format on http://ADDRESS:PORT/metrics");
  add("iperf3", po::value<std::string>()->value_name("[ADDRESS:]PORT"),
      "also answer iperf3 3.x clients on this port (TCP and UDP tests, many at once, under "
      "the limits above; ADDRESS defaults to --bind; iperf3's own port is 5201)");
  add("verbose,v", po::bool_switch(), "log each client's errors");
  add("sockperf", po::value<std::string>()->value_name("[ADDRESS:]PORT"),
      "also answer sockperf clients (pp, ul, tp; TCP and UDP) on this port, as `sockperf sr` "
      "does; ADDRESS defaults to --bind; sockperf's own port is 11111");
  spec.hidden.add_options()("key", po::value<std::string>(), "");  // refused, named
  return spec;
}

// The options as ServerOptions; throws std::invalid_argument naming the option.
control::ServerOptions server_options(const po::variables_map& vm) {
  control::ServerOptions o;
  o.port = vm["port"].as<uint16_t>();
  o.bind = vm["bind"].as<std::string>();
  if (vm.count("key-file")) o.key_file = vm["key-file"].as<std::string>();
  if (o.key_file.empty()) o.key = control::load_key("");  // MTPERF_KEY
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
  if (vm.count("metrics")) o.metrics = vm["metrics"].as<std::string>();
  o.verbose = vm["verbose"].as<bool>();
  return control::resolved(o);
}

// --iperf3 and --sockperf: [ADDRESS:]PORT, ADDRESS defaulting to --bind.
void listen_option(const po::variables_map& vm, const char* name, const std::string& bind,
                   std::string& address, uint16_t& port) {
  if (!vm.count(name)) return;
  try {
    control::parse_listen(vm[name].as<std::string>(), bind, address, port);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("option --") + name + ": " + e.what());
  }
}

// The iperf3 server beside mtperf's, under its limits, its tests counted with mtperf's.
std::unique_ptr<iperf3::Server> serve_iperf3(control::Server& server,
                                             const control::ServerOptions& o,
                                             const std::string& bind, uint16_t port) {
  iperf3::ServeOptions io;
  io.bind = bind;
  io.port = port;
  io.allow = o.allow;
  io.max_pending = o.max_pending;
  io.handshake_timeout_ms = o.handshake_timeout_ms;
  io.max_memory = o.max_memory;
  io.done = [&server](const control::TestLog& log) { server.record_peer_test(log); };
  auto iperf3_server = std::make_unique<iperf3::Server>(io, server.admission());
  std::printf("mtperf serve: iperf3 clients on %s port %u\n", bind.c_str(), iperf3_server->port());
  return iperf3_server;
}

// The sockperf server beside mtperf's, as serve_iperf3.
std::unique_ptr<sockperf::Server> serve_sockperf(control::Server& server,
                                                 const control::ServerOptions& o,
                                                 sockperf::ServeOptions& so) {
  so.log = [](const std::string& line) { std::printf("mtperf serve: %s\n", line.c_str()); };
  so.allow = o.allow;
  so.admission = &server.admission();
  so.done = [&server](const control::TestLog& log) { server.record_peer_test(log); };
  auto sockperf_server = std::make_unique<sockperf::Server>(so);
  std::printf("mtperf serve: sockperf clients on %s port %u (TCP and UDP)\n", so.bind.c_str(),
              sockperf_server->port());
  return sockperf_server;
}

}  // namespace

int serve_command(const std::vector<std::string>& args) {
  const CommandSpec spec = serve_spec();
  int rc = 0;
  const auto cl = read_command_line(spec, args, std::cout, std::cerr, rc);
  if (!cl) return rc;
  control::ServerOptions o;
  std::string iperf3_bind;
  uint16_t iperf3_port = 0;
  sockperf::ServeOptions so;
  try {
    refuse_key_on_command_line(*cl);
    o = server_options(cl->vm);
    listen_option(cl->vm, "iperf3", o.bind, iperf3_bind, iperf3_port);
    listen_option(cl->vm, "sockperf", o.bind, so.bind, so.port);
  } catch (const std::invalid_argument& e) {
    return usage_error(spec, std::cerr, e.what());
  } catch (const UsageError& e) {
    return usage_error(spec, std::cerr, e.what());
  }
  try {
    control::Server server(o);
    g_server = &server;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::signal(SIGHUP, on_hangup);
    std::printf(
        "mtperf serve: listening on %s port %u (at most %u tests at once, %s each, %s in all)\n",
        o.bind.c_str(), server.port(), o.max_sessions, format_bytes(o.max_memory).c_str(),
        format_bytes(o.max_total_memory).c_str());
    if (server.metrics_port() != 0)
      std::printf("mtperf serve: metrics on %s (port %u) at /metrics\n", o.metrics.c_str(),
                  server.metrics_port());
    std::unique_ptr<iperf3::Server> iperf3_server;
    if (!iperf3_bind.empty()) iperf3_server = serve_iperf3(server, o, iperf3_bind, iperf3_port);
    std::unique_ptr<sockperf::Server> sockperf_server;
    if (cl->vm.count("sockperf")) sockperf_server = serve_sockperf(server, o, so);
    std::fflush(stdout);
    server.run();
    sockperf_server.reset();
    iperf3_server.reset();  // its tests end before the server whose counters they feed
    std::signal(SIGHUP, SIG_IGN);
    g_server = nullptr;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtperf serve: %s\n", e.what());
    return 1;
  }
  return 0;
}

int transports_command(const std::vector<std::string>& args) {
  const CommandSpec spec("transports", "",
                         "Lists the transports: compiled in, usable here (and why not), their "
                         "features and -O options.");
  int rc = 0;
  if (!read_command_line(spec, args, std::cout, std::cerr, rc)) return rc;
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
    // The flags of the line it brings, from the same kind of table.
    if (e.line) {
      for (const LineOption& l : e.line->run_options())
        std::printf("%27s --%s %s%s  %s\n", "", l.flag.c_str(), l.value_name.c_str(),
                    l.info.default_value.empty() ? "" : (" (" + l.info.default_value + ")").c_str(),
                    flag_help(l).c_str());
    }
  }
  for (auto& [name, why] : transports_not_compiled()) {
    std::printf("%-8s %-9s %-7s %s\n", name.c_str(), "no", "no", why.c_str());
  }
  return 0;
}

}  // namespace mtperf::cli
