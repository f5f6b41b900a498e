// `mtperf fleet`: one process per host, started by Slurm, mpirun, a Kubernetes Indexed Job or a
// pdsh/ssh loop; every pair of the fleet measured as `mtperf run` measures one (fleet/).
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "control/server.hpp"
#include "fleet/checks.hpp"
#include "fleet/compare.hpp"
#include "fleet/emit.hpp"
#include "fleet/groups.hpp"
#include "fleet/launcher.hpp"
#include "fleet/net.hpp"
#include "fleet/protocol.hpp"
#include "fleet/render.hpp"
#include "fleet/retest.hpp"
#include "fleet/run.hpp"
#include "platform/command_line.hpp"
#include "platform/number.hpp"
#include "platform/topology.hpp"
#include "transports/api/registry.hpp"

namespace mtperf::cli {
namespace {
namespace po = boost::program_options;

CommandSpec fleet_spec() {
  CommandSpec spec("fleet",
                   "[--pattern P | --pairs FILE] [-T A,B,...] [--concurrency round|isolated] "
                   "[--check CHECKS] [--format F] [-o FILE] [run options...]",
                   "Every pair of a cluster measured, one process per host started by Slurm, "
                   "mpirun, a Kubernetes Indexed Job or pdsh: N x N matrices, slow pairs named.");
  auto add = spec.options.add_options();
  auto text = [] { return po::value<std::string>(); };
  add("pattern", text()->default_value("all-pairs", "all-pairs")->value_name("P"),
      "all-pairs | shift | incast:K | one-to-many:K | bisection | within-group | "
      "across-groups (with --groups) | rail (with --per-host)");
  add("groups", text()->value_name("FILE|slurm|lldp"),
      "each rank's group (leaf switch, rack): 'HOST GROUP' lines of FILE, Slurm's leaf "
      "switches (scontrol show topology, topology/tree), or each rank's LLDP neighbour (lldpd)");
  add("pairs", text()->value_name("FILE"),
      "the pairs from FILE instead: '<round> <a> <b>' lines, ranks or host names");
  add("concurrency", text()->default_value("round", "round")->value_name("HOW"),
      "round: a whole round at once (contention) | isolated: one pair at a time (link health)");
  add("transport,T",
      text()
          ->default_value(std::string(kDefaultTransport), std::string(kDefaultTransport))
          ->value_name("LIST"),
      "transports, comma-separated: one matrix each, on the same pairs, alternated");
  add("rank", po::value<uint32_t>()->value_name("N"), "this process's rank (by hand: pdsh, ssh)");
  add("size", po::value<uint32_t>()->value_name("N"),
      "the number of ranks (by hand, or a Kubernetes Job's completions)");
  add("coordinator", text()->value_name("HOST[:PORT]"),
      "rank 0's host (default: from the launcher; Slurm: the first node)");
  add("rendezvous", text()->value_name("FILE"),
      "a file on a shared filesystem where rank 0 writes its address (mpirun, pdsh)");
  add("port",
      po::value<uint16_t>()->default_value(fleet::kDefaultFleetPort, "12866")->value_name("PORT"),
      "the coordinator's port (0: any, with --rendezvous)");
  add("bind", text()->value_name("ADDRESS[,...]"),
      "this rank's address or interface (its first address): its server listens and, on rank "
      "0, its coordinator there; with --per-host N, N of them, one per rank of a host");
  add("per-host", po::value<uint32_t>()->value_name("N"),
      "N ranks on each host, one per adapter: rank i of a host takes the i-th --bind address");
  add("key-file", text()->value_name("FILE"),
      "the fleet's pre-shared key (mode 600; default: the environment's MTPERF_KEY): every rank "
      "and the coordinator prove it, and every control frame is sealed with it");
  add("insecure", po::bool_switch(),
      "run without a key on addresses beyond loopback (anyone who reaches the fleet can join it)");
  add("join-timeout", po::value<double>()->default_value(60, "60")->value_name("SECONDS"),
      "how long rank 0 waits for every rank to join");
  add("pair-timeout", po::value<double>()->value_name("SECONDS"),
      "deadline of each step (default: the test's length and warm-up x iterations + 30 s)");
  add("need-all", po::bool_switch(),
      "a rank that never joins or is lost ends the fleet (default: it goes on without it)");
  add("check", text()->value_name("CHECKS"),
      "pair verdicts, e.g. 'pair.throughput>=0.93*max,pair.p99<=2.1*min,pair.throughput>=9G'");
  add("retest", po::value<uint32_t>()->value_name("N"),
      "run the pairs that fail a check again, up to N times (1-10), in parallel steps of pairs "
      "with no host in two, before the verdict");
  add("line-rate", text()->value_name("RATE"),
      "every pair's line, bits/s (100G, 25G, 400M): what 'line' in a check is, over what the "
      "adapters report (veth's nominal 10G, a VF's nothing)");
  add("baseline", text()->value_name("FILE"),
      "an earlier fleet document (--format json): what 'baseline' in a check is, the same pair "
      "by host and adapter");
  add("format", text()->default_value("text", "text")->value_name("FORMAT"),
      "text | json | csv | mpigraph | junit");
  add("output,o", text()->value_name("FILE"), "write the fleet document to FILE (default: stdout)");
  add("results-log", text()->value_name("FILE"),
      "rank 0: also write each pair's result to FILE as a line of JSON as soon as its step ends "
      "(JSON Lines, flushed: on disk while the fleet runs)");
  add("emit", text()->value_name("KIND"),
      "print how to start this fleet: slurm | mpirun | kubernetes | pdsh (nothing runs)");
  add("image", text()->default_value("mtperf:latest", "mtperf:latest")->value_name("IMAGE"),
      "--emit kubernetes: the container image");
  add("key-secret", text()->value_name("NAME"),
      "--emit kubernetes: the Secret whose 'key' is the fleet's key (default: NAME-key)");
  spec.hidden.add_options()("key", text(), "")("host,H", text(), "")("testbed", text(), "")(
      "confidence,I", text(), "")("histogram", text(), "");
  spec.about =
      "Other options go to every pair's test, as `mtperf run` takes them: -w, -p, -l, -P, -m, -r,\n"
      "-O, ... (mtperf run --help). The launcher is read from the environment: --rank/--size,\n"
      "then Open MPI (OMPI_COMM_WORLD_RANK), MPICH (PMI_RANK), Slurm (SLURM_PROCID), a\n"
      "Kubernetes Indexed Job (JOB_COMPLETION_INDEX with --size). Rank 0 coordinates and writes\n"
      "the document; exit 0 all pairs measured (and checked), 1 a pair or rank failed, 3 a check\n"
      "failed. docs/fleet.md shows each launcher end to end.\n";
  spec.forward_unknown = true;
  spec.habits = true;
  return spec;
}

struct FleetOptions {
  CommandLine cl;
  RunOptions run;  // every pair's test
  std::vector<std::string> transports;
  fleet::Concurrency concurrency = fleet::Concurrency::round;
  std::vector<fleet::FleetCheck> checks;
  std::string pairs_text;
  fleet::GroupsSource groups;  // --groups
  int pair_timeout_ms = 0;
  uint32_t retests = 0;                             // --retest N (0: none)
  std::shared_ptr<const fleet::FleetDoc> baseline;  // --baseline FILE
  std::optional<double> line_rate_bps;              // --line-rate
};

// --groups FILE | slurm, and the patterns that need it.
void parse_groups_option(FleetOptions& o) {
  const CommandLine& cl = o.cl;
  const std::string pattern = cl.get<std::string>("pattern");
  if (cl.has("groups")) {
    const std::string g = cl.get<std::string>("groups");
    if (g == "slurm" || g == "lldp") {
      o.groups.from = g;
    } else {
      std::ifstream in(g, std::ios::binary);
      if (!in) throw UsageError("option --groups: cannot read " + g + " (a file, slurm or lldp)");
      std::string text(fleet::kMaxGroupsFileBytes + 1, '\0');
      in.read(text.data(), std::streamsize(text.size()));
      text.resize(size_t(in.gcount()));
      if (text.size() > fleet::kMaxGroupsFileBytes)
        throw UsageError("option --groups: " + g + " is larger than " +
                         std::to_string(fleet::kMaxGroupsFileBytes) + " bytes");
      o.groups = {"file", g, std::move(text)};
    }
  } else if (!cl.has("pairs") && (pattern == "within-group" || pattern == "across-groups")) {
    throw UsageError("option --pattern: " + pattern +
                     " follows the ranks' groups: give --groups FILE (HOST GROUP lines), "
                     "--groups slurm or --groups lldp");
  }
  if (!cl.has("pairs") && pattern == "rail" && !cl.has("per-host"))
    throw UsageError(
        "option --pattern: rail pairs adapter i of each host with adapter i of the "
        "others: give --per-host N (N ranks a host, one per adapter)");
}

FleetOptions parse_fleet(const std::vector<std::string>& args) {
  FleetOptions o;
  o.cl = parse_command_line(fleet_spec(), args);
  const CommandLine& cl = o.cl;
  if (cl.help || cl.has("emit")) return o;
  refuse_key_on_command_line(cl);
  for (const char* own : {"host", "testbed", "confidence", "histogram"})
    if (cl.has(own))
      throw UsageError("option " + cl.typed(own) +
                       ": not for fleet (the launcher places the ranks; each pair runs once)");
  o.transports = split_list(cl.get<std::string>("transport"), ',');
  if (o.transports.empty()) throw UsageError("option " + cl.typed("transport") + ": none given");
  for (const auto& t : o.transports) {
    try {
      if (find_transport(t).line != nullptr)
        throw UsageError("option " + cl.typed("transport") + ": " + t +
                         " runs over a line it emulates between its own namespaces; a fleet "
                         "measures the hosts' own adapters");
    } catch (const std::invalid_argument& e) {
      throw UsageError("option " + cl.typed("transport") + ": " + e.what());
    }
  }
  std::vector<std::string> rest = cl.rest;
  rest.insert(rest.end(), {"-T", o.transports.front(), "-q"});
  o.run = parse_run_options(rest);
  const std::string c = cl.get<std::string>("concurrency");
  if (c == "isolated")
    o.concurrency = fleet::Concurrency::isolated;
  else if (c != "round")
    throw UsageError("option --concurrency: '" + c + "' is not round or isolated");
  try {
    if (cl.has("check")) o.checks = fleet::parse_fleet_checks(cl.get<std::string>("check"));
    if (!cl.has("pairs")) fleet::check_pattern(cl.get<std::string>("pattern"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (cl.has("pairs")) {
    std::ifstream in(cl.get<std::string>("pairs"));
    std::stringstream text;
    if (!(in && text << in.rdbuf()))
      throw UsageError("option --pairs: cannot read " + cl.get<std::string>("pairs"));
    o.pairs_text = text.str();
  }
  parse_groups_option(o);
  if (cl.has("retest")) {
    o.retests = cl.get<uint32_t>("retest");
    if (o.retests < 1 || o.retests > fleet::kMaxRetests)
      throw UsageError("option --retest: " + std::to_string(o.retests) + " is not in 1.." +
                       std::to_string(fleet::kMaxRetests));
    if (o.checks.empty())
      throw UsageError("option --retest: it retests the pairs that fail a check: give --check");
  }
  const bool wants_baseline = std::any_of(o.checks.begin(), o.checks.end(),
                                          [](const auto& c) { return c.ref == "baseline"; });
  if (cl.has("baseline")) {
    const std::string file = cl.get<std::string>("baseline");
    std::ifstream in(file);
    if (!in) throw UsageError("option --baseline: cannot read " + file);
    try {
      o.baseline = std::make_shared<const fleet::FleetDoc>(
          fleet::fleet_from_json(nlohmann::json::parse(in)));
    } catch (const std::exception& e) {
      throw UsageError("option --baseline: " + file + " is not a fleet document: " + e.what());
    }
  } else if (wants_baseline) {
    throw UsageError(
        "option --check: a check against 'baseline' needs --baseline FILE (an earlier fleet "
        "document)");
  }
  if (cl.has("line-rate")) {
    const std::string rate = cl.get<std::string>("line-rate");
    o.line_rate_bps = parse_scaled(rate, kRateUnits);
    if (!o.line_rate_bps || *o.line_rate_bps < 1e3 || *o.line_rate_bps > fleet::kMaxLineBps)
      throw UsageError("option --line-rate: '" + rate +
                       "' is not a rate in bits/s from 1k to 1000T (e.g. 100G, 25G, 400M)");
  }
  const std::string format = cl.get<std::string>("format");
  if (format != "text" && format != "json" && format != "csv" && format != "mpigraph" &&
      format != "junit")
    throw UsageError("option --format: '" + format + "' is not text, json, csv, mpigraph or junit");
  const double per_test = (o.run.spec.duration_s + o.run.spec.warmup_s) * o.run.rule.max_iterations;
  double timeout = cl.has("pair-timeout") ? cl.get<double>("pair-timeout") : per_test + 30;
  if (!(timeout > 0 && timeout <= 86400))
    throw UsageError("option --pair-timeout: not in (0, 86400] seconds");
  o.pair_timeout_ms = int(timeout * 1000);
  const double join = cl.get<double>("join-timeout");
  if (!(join > 0 && join <= 86400))
    throw UsageError("option --join-timeout: not in (0, 86400] seconds");
  return o;
}

// --bind takes an address or an interface's name (the same command line on every host):
// an interface gives its first IPv4 address, else its first global IPv6 one.
std::string address_of(const std::string& bind) {
  if (bind.empty() || bind.find_first_not_of("0123456789.") == std::string::npos ||
      bind.find(':') != std::string::npos)
    return bind;
  std::string v6;
  for (const InterfaceAddress& a : interface_addresses()) {
    if (a.interface != bind) continue;
    if (a.family == AF_INET) return a.address;
    if (v6.empty() && a.address.rfind("fe80", 0) != 0) v6 = a.address;
  }
  if (!v6.empty()) return v6;
  return bind;  // a host name: the resolver's
}

std::string render(const FleetOptions& o, const fleet::FleetDoc& d,
                   const std::vector<fleet::PairVerdict>& verdicts) {
  const std::string f = o.cl.get<std::string>("format");
  if (f == "json") return fleet::fleet_json(d, verdicts).dump(2) + "\n";
  if (f == "csv") return fleet::fleet_csv(d);
  if (f == "mpigraph") return fleet::fleet_mpigraph(d);
  if (f == "junit") return fleet::fleet_junit(d, verdicts);
  return fleet::fleet_text(d, verdicts);
}

// Why a fleet without a key would be reachable beyond loopback ("" when it would not): its
// ranks' servers and its coordinator listen on `bind`, and the ranks reach the coordinator at
// the launcher's host or the rendezvous file's.
std::string keyless_exposure(const std::string& bind, const fleet::Launch& launch) {
  if (bind.empty() || bind == "0.0.0.0" || bind == "::")
    return "the ranks listen on every address (no --bind)";
  if (!fleet::is_loopback(bind)) return "the ranks listen on " + bind;
  if (!launch.coordinator.empty()) {
    std::string host;
    uint16_t port = 0;
    fleet::split_host_port(launch.coordinator, 0, host, port);
    if (!fleet::is_loopback(host)) return "the coordinator is " + host;
  }
  return "";
}

std::string keyless_refusal(const std::string& why) {
  return "no key, and " + why +
         ": anyone who reaches the fleet could join it and make its ranks send traffic. Make a "
         "key every rank can read on a shared filesystem, and give it to every rank:\n"
         "  (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > "
         "~/.mtperf-fleet.key)\n"
         "  mtperf fleet --key-file ~/.mtperf-fleet.key ...   (or MTPERF_KEY in the environment)\n"
         "(--insecure runs without a key; on loopback alone none is needed)";
}

int emit_command(const FleetOptions& o, const std::vector<std::string>& args) {
  fleet::EmitOptions e;
  e.kind = o.cl.get<std::string>("emit");
  e.size = o.cl.has("size") ? o.cl.get<uint32_t>("size") : 4;
  e.image = o.cl.get<std::string>("image");
  if (o.cl.has("key-secret")) e.key_secret = o.cl.get<std::string>("key-secret");
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--emit" || a == "--size" || a == "--image" || a == "--key-secret") {
      ++i;
      continue;
    }
    if (a.rfind("--emit=", 0) == 0 || a.rfind("--size=", 0) == 0 || a.rfind("--image=", 0) == 0 ||
        a.rfind("--key-secret=", 0) == 0)
      continue;
    e.args.push_back(a);
  }
  for (const auto& t : split_list(o.cl.get<std::string>("transport"), ','))
    e.rdma = e.rdma || find_transport(t).caps.one_sided;  // RDMA verbs: the device in the pod
  try {
    std::fputs(fleet::emit(e).c_str(), stdout);
  } catch (const std::invalid_argument& err) {
    throw UsageError(err.what());
  }
  return 0;
}

}  // namespace

int fleet_compare_command(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::string format = "text", output;
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "--format" || args[i] == "-o" || args[i] == "--output") &&
        i + 1 < args.size()) {
      (args[i] == "--format" ? format : output) = args[i + 1];
      ++i;
    } else if (args[i].ends_with(".json")) {
      files.push_back(args[i]);
    } else {
      std::fprintf(stderr,
                   "mtperf compare: '%s': fleet documents take only FILE.json [FILE.json] "
                   "[--format text|json] [-o FILE]\n",
                   args[i].c_str());
      return kExitUsage;
    }
  }
  if (files.empty() || files.size() > 2 || (format != "text" && format != "json")) {
    std::fprintf(stderr, "mtperf compare: give one or two fleet documents, --format text|json\n");
    return kExitUsage;
  }
  try {
    std::vector<fleet::FleetDoc> docs;
    for (const auto& f : files) {
      std::ifstream in(f);
      if (!in) throw std::runtime_error("cannot read " + f);
      docs.push_back(fleet::fleet_from_json(nlohmann::json::parse(in)));
    }
    const auto ratios = docs.size() == 2 ? fleet::compare_runs(docs[0], files[0], docs[1], files[1])
                                         : fleet::compare_transports(docs[0]);
    const std::string text =
        format == "json" ? fleet::ratios_json(ratios).dump(2) + "\n" : fleet::ratios_text(ratios);
    if (output.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      std::ofstream out(output);
      if (!(out << text)) throw std::runtime_error("cannot write " + output);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtperf compare: %s\n", e.what());
    return 1;
  }
}

namespace {

// This process's rank, key and address from the options and the launcher's environment; an
// exit status when they do not allow a start (-1 when they do).
int rank_setup(const FleetOptions& o, fleet::Launch& launch, std::string& key, std::string& bind) {
  const CommandLine& cl = o.cl;
  fleet::LaunchGiven given;
  if (cl.has("rank")) given.rank = cl.get<uint32_t>("rank");
  if (cl.has("size")) given.size = cl.get<uint32_t>("size");
  if (cl.has("coordinator")) given.coordinator = cl.get<std::string>("coordinator");
  if (cl.has("rendezvous")) given.rendezvous = cl.get<std::string>("rendezvous");
  try {
    launch = fleet::detect_launch(fleet::launch_environment(), given);
  } catch (const std::invalid_argument& e) {
    return usage_error(fleet_spec(), std::cerr, e.what());
  }
  std::fprintf(stderr, "mtperf fleet: rank %u of %u, launched by %s (%s)\n", launch.rank,
               launch.size, launch.launcher.c_str(), launch.why.c_str());
  // Slurm's topology is the job's: srun, or mpirun inside a Slurm allocation.
  if (o.groups.from == "slurm" && launch.launcher != "Slurm" &&
      fleet::launch_environment().count("SLURM_JOB_ID") == 0)
    return usage_error(fleet_spec(), std::cerr,
                       "option --groups: slurm reads Slurm's topology, and this fleet is not in a "
                       "Slurm job (launched by " +
                           launch.launcher +
                           ", no SLURM_JOB_ID); give --groups FILE (HOST GROUP lines)");
  try {
    key = control::load_key(cl.has("key-file") ? cl.get<std::string>("key-file") : "");
  } catch (const std::exception& e) {
    return usage_error(fleet_spec(), std::cerr, std::string("option --key-file: ") + e.what());
  }
  bind = cl.has("bind") ? cl.get<std::string>("bind") : "";
  if (cl.has("per-host")) {
    try {
      bind = fleet::bind_of(split_list(bind), cl.get<uint32_t>("per-host"), launch.local_rank);
    } catch (const std::invalid_argument& e) {
      return usage_error(fleet_spec(), std::cerr, e.what());
    }
  } else if (bind.find(',') != std::string::npos) {
    return usage_error(fleet_spec(), std::cerr,
                       "option --bind: several addresses need --per-host (one per rank of a host)");
  }
  bind = address_of(bind);
  if (key.empty() && !cl.get<bool>("insecure")) {
    if (std::string why = keyless_exposure(bind, launch); !why.empty()) {
      std::fprintf(stderr, "mtperf fleet: %s\n", keyless_refusal(why).c_str());
      return kExitUsage;
    }
  }
  return -1;
}

fleet::FleetRun fleet_run_of(const FleetOptions& o, const fleet::Launch& launch,
                             const std::string& key, const std::string& bind) {
  const CommandLine& cl = o.cl;
  fleet::FleetRun run;
  run.launch = launch;
  run.key = key;
  run.bind = bind;
  run.port = cl.get<uint16_t>("port");
  run.run = o.run;
  run.transports = o.transports;
  run.join_timeout_ms = int(cl.get<double>("join-timeout") * 1000);
  run.pair_timeout_ms = o.pair_timeout_ms;
  run.need_all = cl.get<bool>("need-all");
  run.pattern = cl.get<std::string>("pattern");
  run.pairs_text = o.pairs_text;
  if (cl.has("pairs")) run.pairs_name = cl.get<std::string>("pairs");
  run.groups = o.groups;
  run.concurrency = o.concurrency;
  run.line_rate_bps = o.line_rate_bps;
  run.retests = o.retests;
  if (cl.has("results-log")) run.results_log = cl.get<std::string>("results-log");
  if (o.retests > 0) {
    run.retest = [checks = o.checks, baseline = o.baseline](const fleet::FleetDoc& d) {
      std::vector<size_t> again;
      for (const auto& v : fleet::judge(checks, d, baseline.get()))
        if (!v.passed) again.push_back(v.result);
      return again;
    };
  }
  return run;
}

// Rank 0: the document written, the errors listed, the exit status of docs/cli.md.
int report_fleet(const FleetOptions& o, const fleet::FleetOutcome& out) {
  const fleet::FleetDoc& doc = out.doc;
  const auto verdicts = o.checks.empty() ? std::vector<fleet::PairVerdict>{}
                                         : fleet::judge(o.checks, doc, o.baseline.get());
  const std::string text = render(o, doc, verdicts);
  if (o.cl.has("output")) {
    std::ofstream file(o.cl.get<std::string>("output"));
    if (!(file << text)) {
      std::fprintf(stderr, "mtperf fleet: cannot write %s\n",
                   o.cl.get<std::string>("output").c_str());
      return 1;
    }
  } else {
    std::fputs(text.c_str(), stdout);
  }
  if (!out.member_error.empty())
    std::fprintf(stderr, "mtperf fleet: rank 0's own member: %s\n", out.member_error.c_str());
  if (out.interrupted) return kExitInterrupted;
  bool all_ok = doc.complete;
  for (const auto& r : doc.results)
    all_ok = all_ok && r.ok;
  for (const auto& e : doc.errors)
    std::fprintf(stderr, "mtperf fleet: %s\n", e.c_str());
  if (!all_ok) return 1;
  for (const auto& v : verdicts)
    if (!v.passed) return kExitCheckFailed;
  return 0;
}

}  // namespace

int fleet_command(const std::vector<std::string>& args) {
  FleetOptions o;
  try {
    o = parse_fleet(args);
    if (o.cl.has("emit")) return emit_command(o, args);
  } catch (const UsageError& e) {
    return usage_error(fleet_spec(), std::cerr, e.what());
  }
  if (o.cl.help) {
    std::fputs(usage_text(fleet_spec()).c_str(), stdout);
    return 0;
  }
  fleet::Launch launch;
  std::string key, bind;
  if (int rc = rank_setup(o, launch, key, bind); rc >= 0) return rc;
  std::atomic<bool> stop{false};
  fleet::FleetOutcome out;
  try {
    out = fleet::run(fleet_run_of(o, launch, key, bind), stop);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtperf fleet: %s\n", e.what());
    return 1;
  }
  if (out.coordinated) return report_fleet(o, out);
  if (out.member_error.empty()) return 0;
  std::fprintf(stderr, "mtperf fleet: rank %u: %s\n", launch.rank, out.member_error.c_str());
  return out.interrupted ? kExitInterrupted : 1;
}

}  // namespace mtperf::cli
