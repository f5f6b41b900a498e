#include "cli/run_options.hpp"

#include <boost/program_options.hpp>

#include "control/server.hpp"
#include "harness/peer_run.hpp"
#include "platform/affinity.hpp"
#include "platform/number.hpp"
#include "transports/api/registry.hpp"
#include "transports/api/transport_list.hpp"
#include "workloads/kind.hpp"
#include "workloads/memory.hpp"

#include <cmath>
#include <random>
#include <sstream>

namespace po = boost::program_options;

namespace mtperf::cli {
namespace {

// Declared with argument names and the defaults' text, so that --help prints them as a person
// writes them (platform/command_line.hpp). One add() per option, in the order --help lists them,
// in groups a reader of --help would make.
po::typed_value<std::string>* text() {
  return po::value<std::string>();
}

// What runs: the server, the workload, its transport, sizes and pacing.
void add_test_options(po::options_description_easy_init& add) {
  add("host,H", text()->value_name("HOST[:PORT]"),
      "server to test against, control port 12865 by default (default: an in-process server on "
      "127.0.0.1)");
  add("workload,w", text()->default_value("stream", "stream")->value_name("NAME"),
      workload_names(" | ").c_str());
  add("transport,T",
      text()
          ->default_value(std::string(kDefaultTransport), std::string(kDefaultTransport))
          ->value_name("NAME"),
      "transport (mtperf transports lists them)");
  add("topt,O", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
      "transport option (repeatable; mtperf transports lists each transport's)");
  add("protocol,p", text()->default_value("tcp", "tcp")->value_name("PROTO"), "tcp | udp");
  add("length,l", po::value<double>()->default_value(10, "10")->value_name("SECONDS"),
      "measured window");
  add("warmup", po::value<double>()->default_value(0.5, "0.5")->value_name("SECONDS"),
      "warm-up before the window");
  add("flows,P", po::value<int64_t>()->default_value(1, "1")->value_name("N"),
      "parallel flows (per direction for bidir; per adapter with --adapters)");
  add("threads", po::value<int64_t>()->default_value(0, "0")->value_name("N"),
      "worker threads per side (0: one per flow, up to 64)");
  add("message-size,m", text()->value_name("BYTES"),
      "stream send size, K/M/G = 1024-based (default 64K TCP, 1472 UDP)");
  add("rr-size,r", text()->default_value("1,1", "1,1")->value_name("REQ[,RESP]"),
      "request and response sizes, bytes, K/M/G = 1024-based (RESP defaults to REQ)");
  add("burst", po::value<int64_t>()->default_value(1, "1")->value_name("N"),
      "rr transactions in flight per flow");
  add("rate", text()->value_name("RATE"),
      "pacing over all flows, k/M/G = 1000-based: streams in bits/s (default: unpaced; UDP 1G), "
      "crr in new connections/s (default: as fast as they go)");
  add("wait", text()->default_value("block", "block")->value_name("HOW"), "block | spin");
}

// The client's data sockets.
void add_socket_options(po::options_description_easy_init& add) {
  add("sndbuf", text()->value_name("BYTES"), "socket send buffer (K/M/G; default: the kernel's)");
  add("rcvbuf", text()->value_name("BYTES"),
      "socket receive buffer (K/M/G; default: the kernel's)");
  add("no-delay", po::value<bool>()->value_name("BOOL"),
      "TCP_NODELAY, true | false (default true, false for streams of sends under 16K)");
  add("cc", text()->value_name("NAME"),
      "TCP congestion control, e.g. cubic, bbr (default: the host's)");
  add("mss", po::value<int>()->value_name("BYTES"),
      "TCP maximum segment size, 88..9216 (TCP_MAXSEG, on both ends' data sockets; default: the "
      "path's)");
  add("mptcp", po::bool_switch(), "MPTCP instead of TCP");
  add("busy-poll", po::value<int>()->default_value(0, "0")->value_name("MICROSECONDS"),
      "SO_BUSY_POLL (0: off)");
  add("bind-device", text()->value_name("IFNAME"), "SO_BINDTODEVICE for the client's data sockets");
  add("source", text()->value_name("ADDRESS"), "local address for the client's data sockets");
}

// Where the workers run and the flows go.
void add_placement_options(po::options_description_easy_init& add) {
  add("cpus", text()->value_name("CPU-LIST"),
      "pin the client's workers to these CPUs, worker i to the i-th (e.g. 0-3,8)");
  add("server-cpus", text()->value_name("CPU-LIST"),
      "pin the server's workers to these CPUs (worker i to the i-th, cycling)");
  add("adapters", text()->value_name("auto:N|LIST"),
      "carry the flows over these adapters (auto:N picks N); -P then counts flows per adapter");
  add("per-controller", po::value<int>()->default_value(0, "0")->value_name("K"),
      "auto:N takes at most K adapters per PCI controller (0: no limit)");
  add("pin", text()->default_value("irq", "irq")->value_name("POLICY"),
      "with --adapters, pin each flow's worker: irq | numa | none | CPU-LIST (irq falls back to "
      "--cpus for adapters without interrupts)");
  add("testbed", text()->implicit_value("default", "default")->value_name("NAME"),
      "run between the namespaces of testbed NAME (built for the run when not up)");
}

// How the run is repeated, reported and judged.
void add_report_options(po::options_description_easy_init& add) {
  add("interval", po::value<double>()->default_value(0, "0")->value_name("SECONDS"),
      "interim report every SECONDS (0: none)");
  add("udp-timeout", po::value<double>()->default_value(0.1, "0.1")->value_name("SECONDS"),
      "UDP rr: time before a request counts as lost");
  add("iterations,i", text()->default_value("1", "1")->value_name("MAX[,MIN]"),
      "iterations (MIN defaults to MAX)");
  add("confidence,I", text()->default_value("95,5", "95,5")->value_name("LEVEL,WIDTH"),
      "with -i: stop when the LEVEL% interval is within +/-WIDTH/2 % of the mean");
  add("format", text()->default_value("text", "text")->value_name("FORMAT"),
      "text | json | csv | csv-flows | junit (csv-flows: a line per flow; junit: JUnit XML of "
      "the --check verdicts)");
  add("check", text()->value_name("CHECKS"),
      "pass/fail thresholds, e.g. 'throughput>=9G,loss<=0,errors==0,verify==0': exit 3 when one "
      "fails (docs/validation.md)");
  add("stop-on-error", po::bool_switch(),
      "end the run at the first error a flow counts, the first --verify mismatch, or (with "
      "--interval and --check) the first interval that fails a check; the report says why");
  add("need-all", po::bool_switch(),
      "fail the test before any traffic when a flow cannot connect (default: run with the flows "
      "that connected; the report names the others)");
  add("per-flow-latency", po::bool_switch(),
      "keep a latency histogram per flow (58 KiB each) for every flow's own percentiles; "
      "without it the histograms are per worker, with the same summary percentiles");
  add("output,o", text()->value_name("FILE"), "write the report to FILE (default: stdout)");
  add("histogram", text()->value_name("FILE"),
      "write the latency histogram's buckets to FILE (- for stdout)");
}

// The server's key and kind, this side's memory, and what is checked and measured.
void add_peer_options(po::options_description_easy_init& add) {
  add("key-file", text()->value_name("FILE"),
      "the pre-shared key of an authenticating server, from a file (mode 600; default: the "
      "environment's MTPERF_KEY)");
  add("peer", text()->value_name("NAME"),
      "-H runs another tool's server: iperf3 (port 5201 by default), sockperf (11111) or, with "
      "-T rdma, perftest (18515; docs/interop.md)");
  add("get-server-output", po::bool_switch(),
      "with --peer iperf3: the server's own report of the test, shown after this side's "
      "(iperf3's --get-server-output)");
  add("count", po::value<uint64_t>()->value_name("N"),
      "with --peer perftest: messages (stream, maerts) or round trips (rr) to run, as its "
      "server's -n (default 1000)");
  add("max-memory", text()->value_name("SIZE"),
      "memory this side of a test may take, K/M/G = 1024-based (default 1G, or a quarter of this "
      "host's memory)");
  add("verify", po::bool_switch(),
      "fill every payload with a pattern of the test's seed, flow and byte position, and check "
      "every byte received on both ends (corrupted, lost, duplicated or misplaced data)");
  add("no-measure", po::bool_switch(),
      "counters only: no latency samples, CPU, interrupt or TCP_INFO readings (what measuring "
      "costs)");
}

// The options of the lines transports bring, as each line's hook declares them; each help starts
// with the transports that bring it ("-T clip|lane: ").
void add_line_options(po::options_description_easy_init& add) {
  for (const LineHook* hook : line_hooks()) {
    std::string with;
    for (const TransportEntry& e : transports())
      if (e.line == hook) with += (with.empty() ? "-T " : "|") + std::string(e.name);
    add_flag_options(add, hook->run_options(), with + ": ");
  }
}

po::options_description run_description() {
  po::options_description d;
  auto add = d.add_options();
  add_test_options(add);
  add_socket_options(add);
  add_placement_options(add);
  add_report_options(add);
  add_peer_options(add);
  add_line_options(add);
  add("quiet,q", po::bool_switch(), "no progress or interim lines");
  return d;
}

// A whole number option, checked against its bounds with the name the user typed.
uint32_t count_option(const po::variables_map& vm, const char* name, const char* typed, int64_t lo,
                      int64_t hi) {
  int64_t v = vm[name].as<int64_t>();
  if (v < lo || v > hi) {
    throw UsageError("option " + std::string(typed) + ": " + std::to_string(v) + " is outside " +
                     std::to_string(lo) + ".." + std::to_string(hi));
  }
  return uint32_t(v);
}

// Seconds, checked against their bounds with the name the user typed.
double seconds_option(const po::variables_map& vm, const char* name, const char* typed, double lo,
                      double hi) {
  double v = vm[name].as<double>();
  if (!(v >= lo && v <= hi)) {
    std::ostringstream m;
    m << "option " << typed << ": " << v << " s is outside " << lo << ".." << hi << " s";
    throw UsageError(m.str());
  }
  return v;
}

std::pair<std::string, std::string> split2(const std::string& option, const std::string& text) {
  auto comma = text.find(',');
  if (comma == std::string::npos) return {text, ""};
  if (text.find(',', comma + 1) != std::string::npos) {
    throw UsageError("option --" + option + ": expected A,B, got '" + text + "'");
  }
  return {text.substr(0, comma), text.substr(comma + 1)};
}

double parse_number(const std::string& option, const std::string& text) {
  std::optional<double> v = parse_scaled(text, {});
  if (!v) throw UsageError("option --" + option + ": '" + text + "' is not a non-negative number");
  return *v;
}

void set_iterations(RunOptions& o, const std::string& it, const std::string& conf) {
  auto [mx, mn] = split2("iterations", it);
  double max_i = parse_number("iterations", mx);
  double min_i = mn.empty() ? max_i : parse_number("iterations", mn);
  if (max_i < 1 || max_i > kLimits.max_iterations || min_i < 1 || min_i > max_i ||
      max_i != std::floor(max_i) || min_i != std::floor(min_i)) {
    throw UsageError("option -i: MAX[,MIN] with 1 <= MIN <= MAX <= " +
                     std::to_string(kLimits.max_iterations) + ", got '" + it + "'");
  }
  // netperf counts MIN as at least 3 when only MAX is given; here MIN defaults to MAX.
  o.rule.max_iterations = int(max_i);
  o.rule.min_iterations = mn.empty() ? int(max_i) : int(min_i);
  auto [level, width] = split2("confidence", conf);
  double l = parse_number("confidence", level);
  double w = width.empty() ? 5 : parse_number("confidence", width);
  if (l != 95 && l != 99 && !(l > 50 && l < 100)) {
    throw UsageError("option -I: LEVEL must be a percentage in (50, 100), got '" + level + "'");
  }
  if (w <= 0 || w > 100)
    throw UsageError("option -I: WIDTH must be in (0, 100], got '" + width + "'");
  o.rule.level = l / 100;
  o.rule.width_percent = w;
}

template <class T>
T get(const po::variables_map& vm, const char* name) {
  return vm[name].as<T>();
}

void set_placement(RunOptions& o, const CommandLine& cl) {
  const po::variables_map& vm = cl.vm;
  if (vm.count("testbed")) {
    o.testbed = get<std::string>(vm, "testbed");
    if (vm.count("host"))
      throw UsageError("option --testbed: the testbed's far host is the server; drop -H");
  }
  if (!vm.count("adapters")) {
    if (cl.has("per-controller") || cl.has("pin"))
      throw UsageError("option " + cl.typed(cl.has("pin") ? "pin" : "per-controller") +
                       " needs --adapters");
    return;
  }
  PlacementRequest r;
  auto wrap = [&](const char* option, auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      throw UsageError("option " + cl.typed(option) + ": " + e.what());
    }
  };
  wrap("adapters", [&] { parse_adapter_selection(get<std::string>(vm, "adapters"), r); });
  wrap("pin", [&] { parse_bind(get<std::string>(vm, "pin"), r); });
  r.per_controller = get<int>(vm, "per-controller");
  if (r.per_controller < 0 || r.per_controller > kMaxAdapters)
    throw UsageError("option --per-controller: expected 0.." + std::to_string(kMaxAdapters));
  o.placement = r;
}

}  // namespace

std::string spec_field_option(SpecField f) {
  switch (f) {
    case SpecField::flows:
      return "flows";
    case SpecField::threads:
      return "threads";
    case SpecField::duration:
      return "length";
    case SpecField::warmup:
      return "warmup";
    case SpecField::message_size:
      return "message-size";
    case SpecField::request_size:
    case SpecField::response_size:
    case SpecField::rr_size:
      return "rr-size";
    case SpecField::burst:
      return "burst";
    case SpecField::conn_rate:
    case SpecField::rate:
      return "rate";
    case SpecField::interval:
      return "interval";
    case SpecField::udp_timeout:
      return "udp-timeout";
    case SpecField::sndbuf:
      return "sndbuf";
    case SpecField::rcvbuf:
      return "rcvbuf";
    case SpecField::busy_poll:
      return "busy-poll";
    case SpecField::congestion:
      return "cc";
    case SpecField::bind_device:
      return "bind-device";
    case SpecField::source:
      return "source";
    case SpecField::transport:
      return "transport";
    case SpecField::transport_options:
      return "topt";
    case SpecField::wait:
      return "wait";
    case SpecField::workload:
      return "workload";
    case SpecField::mptcp:
      return "mptcp";
    case SpecField::server_cpus:
      return "server-cpus";
    case SpecField::flow_servers:
      return "adapters";  // the addresses the placement picked
    case SpecField::mss:
      return "mss";
  }
  return "?";
}

namespace {

// -T and -O.
void set_transport(TestSpec& s, const po::variables_map& vm) {
  s.transport = get<std::string>(vm, "transport");
  if (vm.count("topt")) {
    for (auto& kv : vm["topt"].as<std::vector<std::string>>()) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw UsageError("option -O: expected KEY=VALUE, got '" + kv + "'");
      }
      s.transport_params[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  // The transport and its options, checked now: a typo is bad usage, found before anything runs.
  // (Creating a transport only reads its options; nothing is opened until a test sets up.)
  const TransportEntry* entry = nullptr;
  try {
    entry = &find_transport(s.transport);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("option -T: ") + e.what());
  }
  try {
    check_params(*entry, s.transport_params);
    if (entry->create) (void)entry->create(s.transport_params);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("option -O: ") + e.what());
  }
}

// Options a workload never reads are refused, not ignored: `-w stream -r 1,1` would otherwise
// run and say nothing (docs/cli.md, "Options a workload does not use"). Each kind lists the
// options it reads (WorkloadKind::options); an option some other kind reads is this kind's to
// refuse.
void refuse_unused(const CommandLine& cl, const TestSpec& s) {
  const WorkloadKind& kind = kind_of(s.workload);
  // sockperf's under-load mode is rr at a --rate (peers/sockperf/client.hpp).
  const bool sockperf_under_load = kind.request_response && !kind.per_transaction &&
                                   cl.has("peer") && get<std::string>(cl.vm, "peer") == "sockperf";
  auto reads = [](const WorkloadKind& k, std::string_view option) {
    for (std::string_view rest = k.options; !rest.empty();) {
      const size_t comma = rest.find(',');
      std::string_view word = rest.substr(0, comma);
      while (word.starts_with(' '))
        word.remove_prefix(1);
      if (word == option) return true;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return false;
  };
  for (const WorkloadKind* other : workload_kinds()) {
    for (std::string_view rest = other->options; !rest.empty();) {
      const size_t comma = rest.find(',');
      std::string option(rest.substr(0, comma));
      option.erase(0, option.find_first_not_of(' '));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (!cl.has(option) || reads(kind, option)) continue;
      if (option == "rate" && sockperf_under_load) continue;
      std::string readers;
      for (const WorkloadKind* k : workload_kinds())
        if (reads(*k, option)) readers += (readers.empty() ? "" : ", ") + std::string(k->name);
      throw UsageError("option " + cl.typed(option) + ": -w " + std::string(kind.name) +
                       " does not use it (it sets " + readers +
                       "); drop it or choose one of those");
    }
  }
  if (cl.has("udp-timeout") && s.proto != Proto::udp)
    throw UsageError("option " + cl.typed("udp-timeout") +
                     ": a TCP test does not use it (it sets how long UDP rr waits for an answer); "
                     "drop it or add -p udp");
}

// Message, request and response sizes, burst, rate and socket buffers.
void set_sizes(TestSpec& s, const po::variables_map& vm) {
  if (vm.count("message-size")) {
    s.msg_size = uint32_t(std::min<uint64_t>(
        parse_size("message-size", get<std::string>(vm, "message-size")), UINT32_MAX));
    if (s.msg_size == 0) throw UsageError("option -m/--message-size: 0 bytes; at least 1");
  }
  auto [req, resp] = split2("rr-size", get<std::string>(vm, "rr-size"));
  s.req_size = uint32_t(std::min<uint64_t>(parse_size("rr-size", req), UINT32_MAX));
  s.resp_size = resp.empty()
                    ? s.req_size
                    : uint32_t(std::min<uint64_t>(parse_size("rr-size", resp), UINT32_MAX));
  s.burst = count_option(vm, "burst", "--burst", 1, kLimits.max_burst);
  if (vm.count("rate")) {
    const double rate = parse_rate("rate", get<std::string>(vm, "rate"));
    (kind_of(s.workload).per_transaction ? s.conn_rate : s.rate_bps) = rate;
  }
  if (vm.count("sndbuf"))
    s.sock.sndbuf =
        int(std::min<uint64_t>(parse_size("sndbuf", get<std::string>(vm, "sndbuf")), INT32_MAX));
  if (vm.count("rcvbuf"))
    s.sock.rcvbuf =
        int(std::min<uint64_t>(parse_size("rcvbuf", get<std::string>(vm, "rcvbuf")), INT32_MAX));
}

// The test's own checks (validate()), an error named by the option that sets the field, as typed.
void check_test(TestSpec& s, const CommandLine& cl) {
  try {
    validate(s);
  } catch (const SpecError& e) {
    throw UsageError("option " + cl.typed(spec_field_option(e.field)) + ": " + e.why);
  }
}

// With --adapters, -P counts the flows on each adapter: the test has that many on each.
void spread_over_adapters(PlacementRequest& p, TestSpec& s) {
  p.flows_per_adapter = int(std::min<uint32_t>(s.flows, kMaxFlowsPerAdapter));
  size_t adapters = p.adapters.empty() ? size_t(p.auto_count) : p.adapters.size();
  uint64_t total = uint64_t(s.flows) * adapters;
  if (total > kLimits.max_flows) {
    throw UsageError("option -P/--flows: " + std::to_string(s.flows) + " flows on each of " +
                     std::to_string(adapters) + " adapters make " + std::to_string(total) +
                     ", over the bound of " + std::to_string(kLimits.max_flows));
  }
  s.flows = uint32_t(total);
}

// --verify's seed: random, and never 0 (no verification).
uint64_t random_seed() {
  std::random_device rd;
  uint64_t seed;
  do {
    seed = (uint64_t(rd()) << 32) | rd();
  } while (seed == 0);
  return seed;
}

void set_spec(RunOptions& o, const CommandLine& cl) {
  const po::variables_map& vm = cl.vm;
  TestSpec& s = o.spec;
  auto wrap = [&cl](const char* option, auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      throw UsageError("option " + cl.typed(option) + ": " + e.what());
    }
  };
  wrap("workload", [&] { s.workload = parse_workload(get<std::string>(vm, "workload")); });
  wrap("protocol", [&] { s.proto = parse_proto(get<std::string>(vm, "protocol")); });
  wrap("wait", [&] { s.wait = parse_wait(get<std::string>(vm, "wait")); });
  set_transport(s, vm);
  s.duration_s = seconds_option(vm, "length", "-l/--length", 0.05, kLimits.max_duration_s);
  s.warmup_s = seconds_option(vm, "warmup", "--warmup", 0, kLimits.max_warmup_s);
  s.flows = count_option(vm, "flows", "-P/--flows", 1, kLimits.max_flows);
  if (o.placement) spread_over_adapters(*o.placement, s);
  s.threads = count_option(vm, "threads", "--threads", 0, kLimits.max_threads);
  set_sizes(s, vm);
  // TCP_NODELAY by default, except for streams of sends under 16 KiB: there Nagle's coalescing
  // doubles loopback throughput (8 KiB: 12.9 -> 25.8 Gbit/s), while from 16 KiB up NODELAY is
  // 10-20% faster (docs/transports.md).
  bool small_stream = !kind_of(s.workload).request_response && s.proto == Proto::tcp &&
                      s.stream_msg_size() < 16 * 1024;
  s.sock.nodelay = vm.count("no-delay") ? get<bool>(vm, "no-delay") : !small_stream;
  if (vm.count("cc")) s.sock.congestion = get<std::string>(vm, "cc");
  s.sock.mptcp = get<bool>(vm, "mptcp");
  if (vm.count("mss")) s.sock.mss = get<int>(vm, "mss");
  s.sock.busy_poll_us = get<int>(vm, "busy-poll");
  s.interval_s = get<double>(vm, "interval");
  s.udp_timeout_s = get<double>(vm, "udp-timeout");
  s.measure = !get<bool>(vm, "no-measure");
  if (get<bool>(vm, "verify")) s.verify_seed = random_seed();
  check_test(s, cl);
}

// The server, the CPUs of each side, the key, the memory budget and the data sockets' source.
void set_hosts(RunOptions& o, const po::variables_map& vm) {
  if (vm.count("host")) {
    o.embedded = false;
    o.client.server = get<std::string>(vm, "host");
  }
  if (vm.count("cpus")) {
    try {
      // In the order given: worker i goes to the i-th CPU. Checked here, not after a run.
      o.client.cpus = parse_cpu_order(get<std::string>(vm, "cpus"));
      check_cpus_online(o.client.cpus);
    } catch (const std::exception& e) {
      throw UsageError(std::string("option --cpus: ") + e.what());
    }
    // With --adapters, --cpus is where flows of adapters without interrupts go (veth, tun).
    if (o.placement) o.placement->fallback_cpus = o.client.cpus;
  }
  if (vm.count("server-cpus")) {
    try {
      o.spec.server_cpus = parse_cpu_order(get<std::string>(vm, "server-cpus"));
      if (o.embedded) check_cpus_online(o.spec.server_cpus);  // the server runs on this host
      validate(o.spec);
    } catch (const std::exception& e) {
      throw UsageError(std::string("option --server-cpus: ") + e.what());
    }
  }
  try {
    o.client.key = control::load_key(vm.count("key-file") ? get<std::string>(vm, "key-file") : "");
  } catch (const std::exception& e) {
    throw UsageError(std::string(vm.count("key-file") ? "option --key-file: " : "") + e.what());
  }
  if (vm.count("max-memory")) {
    try {
      o.client.max_memory = parse_bytes(get<std::string>(vm, "max-memory"));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("option --max-memory: ") + e.what());
    }
    if (o.client.max_memory == 0) throw UsageError("option --max-memory: must be > 0");
  }
  if (vm.count("bind-device")) o.spec.sock.bind_device = get<std::string>(vm, "bind-device");
  if (vm.count("source")) o.spec.sock.source = get<std::string>(vm, "source");
}

// --format, --check, --output, --histogram.
void set_output(RunOptions& o, const po::variables_map& vm) {
  std::string f = get<std::string>(vm, "format");
  if (f == "text")
    o.format = Format::text;
  else if (f == "json")
    o.format = Format::json;
  else if (f == "csv")
    o.format = Format::csv;
  else if (f == "csv-flows")
    o.format = Format::csv_flows;
  else if (f == "junit")
    o.format = Format::junit;
  else
    throw UsageError("option --format: '" + f + "' is not text, json, csv, csv-flows or junit");
  if (vm.count("check")) {
    try {
      o.checks = parse_checks(get<std::string>(vm, "check"));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("option --check: ") + e.what());
    }
  }
  if (o.format == Format::junit && o.checks.empty())
    throw UsageError("option --format: junit reports checks: give them with --check");
  if (vm.count("output")) o.output = get<std::string>(vm, "output");
  if (vm.count("histogram")) o.histogram = get<std::string>(vm, "histogram");
}

}  // namespace

uint64_t parse_size(const std::string& option, const std::string& text) {
  std::optional<double> bytes = parse_scaled(text, kSizeUnits);
  if (!bytes) {
    throw UsageError("option --" + option + ": '" + text +
                     "' is not a size (a number with an optional K, M, G or T)");
  }
  if (*bytes != std::floor(*bytes) || *bytes > 1e15) {
    throw UsageError("option --" + option + ": '" + text + "' is not a whole number of bytes");
  }
  return uint64_t(*bytes);
}

double parse_rate(const std::string& option, const std::string& text) {
  std::optional<double> v = parse_scaled(text, kRateUnits);
  if (!v) {
    throw UsageError("option --" + option + ": '" + text +
                     "' is not a rate (bits/s with an optional k, M, G or T)");
  }
  return *v;
}

void refuse_key_on_command_line(const CommandLine& cl) {
  if (!cl.has("key")) return;
  throw UsageError("option " + cl.typed("key") +
                   ": a key on the command line shows in ps, /proc and stored job scripts; give "
                   "it in a file (--key-file FILE, mode 600) or in the environment (MTPERF_KEY)");
}

CommandSpec run_spec() {
  CommandSpec spec("run", "[options]",
                   "Runs a test against -H's server, or an in-process one on 127.0.0.1.");
  spec.options.add(run_description());
  spec.hidden.add_options()("key", po::value<std::string>(), "");  // refused, named: see below
  spec.habits = true;
  spec.aliases = {{"bind", "pin"}};  // run's CPU policy was --bind, serve's listen address
  return spec;
}

std::string run_usage() {
  return usage_text(run_spec());
}

// --peer: iperf3's warm-up (omit) is whole seconds, none unless asked for; what the peer cannot
// do is bad usage, found before anything connects (harness/peer_run.hpp).
static void set_peer(RunOptions& o, bool warmup_defaulted, const std::string& peer) {
  o.peer = peer;
  if (warmup_defaulted) o.spec.warmup_s = 0;
  check_peer_request(o);
}

RunOptions parse_run_options(const std::vector<std::string>& args, UnusedOptions unused) {
  RunOptions o;
  const CommandLine cl = parse_command_line(run_spec(), args);
  const po::variables_map& vm = cl.vm;
  if (cl.help) {
    o.help = true;
    return o;
  }
  refuse_key_on_command_line(cl);
  set_placement(o, cl);
  set_spec(o, cl);
  if (unused == UnusedOptions::refuse) refuse_unused(cl, o.spec);
  set_iterations(o, get<std::string>(vm, "iterations"), get<std::string>(vm, "confidence"));
  set_hosts(o, vm);
  check_test(o.spec, cl);  // again: --bind-device and --source are set with the hosts
  set_output(o, vm);
  o.spec.stop_on_error = get<bool>(vm, "stop-on-error");
  o.client.need_all = get<bool>(vm, "need-all");
  o.spec.per_flow_latency = get<bool>(vm, "per-flow-latency");
  // The options of a line the transport brings (harness/request.hpp): those given, by key; the
  // line's hook checks them.
  for (const LineHook* hook : line_hooks())
    o.line_options.merge(given_flags(vm, hook->run_options()));
  if (vm.count("count")) {
    o.count = get<uint64_t>(vm, "count");
    if (o.count == 0) throw RequestError("option --count: expected 1 or more, got 0");
  }
  o.peer_server_output = get<bool>(vm, "get-server-output");
  if (vm.count("peer") || o.count > 0 || o.peer_server_output)
    set_peer(o, vm["warmup"].defaulted(), vm.count("peer") ? get<std::string>(vm, "peer") : "");
  o.quiet = get<bool>(vm, "quiet");
  o.interim_lines = o.format == Format::text;  // the other formats keep stderr for errors
  return o;
}

}  // namespace mtperf::cli
