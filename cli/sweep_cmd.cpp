// `mtperf sweep`: the multi-adapter scalability table — each chosen workload with 1, 2, ... N
// adapters, on a testbed (--testbed) or on this host's adapters against -H or the embedded
// server. Options it does not know are passed to every run (-l, -T, -P, --bind, --cpus, ...).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "cli/atm_run.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/hosts_run.hpp"
#include "control/local_server.hpp"
#include "platform/interrupt.hpp"
#include "report/sweep.hpp"
#include "stats/fairness.hpp"

namespace mtperf::cli {
namespace {

struct RowKind {
  const char* name;
  const char* label;
  std::vector<std::string> args;
  const char* workload = nullptr;  // the same row by `run`'s workload name (-w stream ...)
};

// The rows of the multi-adapter reports, in their order.
const std::vector<RowKind>& row_kinds() {
  static const std::vector<RowKind> all = {
      {"outbound", "TCP outbound", {"-w", "stream"}, "stream"},
      {"inbound", "TCP inbound", {"-w", "maerts"}, "maerts"},
      {"bidirectional", "TCP bidirectional", {"-w", "bidir"}, "bidir"},
      {"tcp-rr", "TCP rr 1 byte", {"-w", "rr", "-r", "1,1"}, "rr"},
      {"udp-rr-1k", "UDP rr 1K", {"-w", "rr", "-p", "udp", "-r", "1024,1024"}},
      {"udp-rr-2k", "UDP rr 2K", {"-w", "rr", "-p", "udp", "-r", "2048,2048"}},
  };
  return all;
}

CommandSpec sweep_spec() {
  namespace po = boost::program_options;
  CommandSpec spec("sweep",
                   "--adapters A..B|LIST [-w ROW]... [--testbed [NAME]] [--format text|json|csv] "
                   "[-o FILE] [run options...]",
                   "The multi-adapter scalability table: each row's workload over each count of "
                   "adapters, with CPU, efficiency and fairness.");
  auto add = spec.options.add_options();
  add("adapters", po::value<std::string>()->value_name("A..B|LIST"),
      "adapter counts, 1..64: 1..4 or 1,2,4,8 (auto:N picks each set); required");
  add("workload,w", po::value<std::vector<std::string>>()->value_name("ROW"),
      "outbound | inbound | bidirectional | tcp-rr | udp-rr-1k | udp-rr-2k, or run's names stream, "
      "maerts, bidir, rr for the first four (repeatable; default: all six)");
  add("testbed", po::value<std::string>()->implicit_value("default", "default")->value_name("NAME"),
      "between the namespaces of testbed NAME (built for the sweep, with as many veth links as the "
      "largest count, when it is not up)");
  add("format", po::value<std::string>()->default_value("text", "text")->value_name("FORMAT"),
      "text | json | csv");
  add("output,o", po::value<std::string>()->value_name("FILE"),
      "write the table to FILE (default: stdout)");
  // The rows set these; declared so that they are refused rather than passed on.
  spec.hidden.add_options()("protocol,p", po::value<std::string>(), "")(
      "rr-size,r", po::value<std::string>(), "");
  spec.about =
      "Other options go to every run: -l, --warmup, -T, -O, -P (flows per adapter),\n"
      "--per-controller, --bind, --cpus, -H, -i/-I, --atm-rate, ... (mtperf run --help);\n"
      "-p and -r are the rows'.\n";
  spec.forward_unknown = true;
  spec.habits = true;
  return spec;
}

struct SweepOptions {
  std::vector<int> counts;
  std::vector<const RowKind*> rows;
  std::optional<std::string> testbed;
  std::string format = "text", output;
  std::vector<std::string> forward;
  bool help = false;
};

// `option` is --adapters as typed.
std::vector<int> parse_counts(const std::string& option, const std::string& text) {
  std::vector<int> out;
  auto number = [&](const std::string& t) {
    size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(t, &used);
    } catch (const std::exception&) {
    }
    if (used != t.size() || v < 1 || v > kMaxTestbedAdapters)
      throw UsageError("option " + option + ": '" + t + "' is not a count of 1.." +
                       std::to_string(kMaxTestbedAdapters));
    return v;
  };
  if (auto dots = text.find(".."); dots != std::string::npos) {
    int lo = number(text.substr(0, dots)), hi = number(text.substr(dots + 2));
    if (lo > hi) throw UsageError("option " + option + ": '" + text + "' runs backwards");
    for (int n = lo; n <= hi; ++n)
      out.push_back(n);
    return out;
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    out.push_back(number(text.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i] <= out[i - 1])
      throw UsageError("option " + option + ": counts must ascend, got '" + text + "'");
  return out;
}

SweepOptions parse_sweep(const std::vector<std::string>& args) {
  SweepOptions o;
  const CommandLine cl = parse_command_line(sweep_spec(), args);
  if (cl.help) {
    o.help = true;
    return o;
  }
  for (const char* set_by_rows : {"protocol", "rr-size"}) {
    if (cl.has(set_by_rows)) {
      throw UsageError("option " + cl.typed(set_by_rows) +
                       ": the sweep's rows set it (choose rows with -w)");
    }
  }
  if (!cl.has("adapters")) throw UsageError("option --adapters A..B is required");
  o.counts = parse_counts(cl.typed("adapters"), cl.get<std::string>("adapters"));
  if (cl.has("workload")) {
    for (const std::string& name : cl.get<std::vector<std::string>>("workload")) {
      const RowKind* found = nullptr;
      for (const auto& k : row_kinds())
        if (name == k.name || (k.workload && name == k.workload)) found = &k;
      if (found == nullptr)
        throw UsageError("option " + cl.typed("workload") + ": '" + name +
                         "' is not outbound (stream), inbound (maerts), bidirectional (bidir), "
                         "tcp-rr (rr), udp-rr-1k or udp-rr-2k");
      o.rows.push_back(found);
    }
  }
  if (cl.has("testbed")) o.testbed = cl.get<std::string>("testbed");
  o.format = cl.get<std::string>("format");
  if (o.format != "text" && o.format != "json" && o.format != "csv")
    throw UsageError("option " + cl.typed("format") + ": '" + o.format +
                     "' is not text, json or csv");
  if (cl.has("output")) o.output = cl.get<std::string>("output");
  o.forward = cl.rest;
  if (o.rows.empty())
    for (const auto& k : row_kinds())
      o.rows.push_back(&k);
  return o;
}

SweepCell cell_of(int adapters, const Report& r) {
  const Summary& s = r.summary;
  bool rr = r.spec.workload == Workload::rr || r.spec.workload == Workload::crr;
  SweepCell c;
  c.adapters = adapters;
  c.value = rr ? s.transaction_rate : s.throughput_bps;
  if (s.local_cpu) c.local_cpu = s.local_cpu->host.total.util;
  if (s.remote_cpu) c.remote_cpu = s.remote_cpu->host.total.util;
  if (s.adapters.size() > 1) {
    std::vector<double> per;
    for (const auto& g : s.adapters)
      per.push_back(rr ? g.transaction_rate : g.throughput_bps);
    c.jain_fairness = jain_index(per);
  }
  c.errors = s.errors;
  return c;
}

// Runs one cell: the row's workload over `n` adapters.
using CellRunner = std::function<Report(const RunOptions&)>;

Sweep run_sweep(const SweepOptions& so, const CellRunner& run_cell) {
  Sweep sweep;
  sweep.adapter_counts = so.counts;
  for (const RowKind* k : so.rows)
    sweep.rows.push_back({k->name, k->label, SweepFigure::throughput, {}});
  for (int n : so.counts) {
    for (size_t r = 0; r < so.rows.size() && interrupts() == 0; ++r) {
      std::vector<std::string> a = so.forward;
      a.insert(a.end(), so.rows[r]->args.begin(), so.rows[r]->args.end());
      a.insert(a.end(), {"--adapters", "auto:" + std::to_string(n), "-q"});
      RunOptions o = parse_run_options(a);
      bool rr = o.spec.workload == Workload::rr;
      sweep.rows[r].figure = rr ? SweepFigure::transaction_rate : SweepFigure::throughput;
      sweep.transport = o.spec.transport;
      sweep.length_s = o.spec.duration_s;
      std::fprintf(stderr, "  %s with %d adapter(s)...\n", so.rows[r]->label, n);
      try {
        sweep.rows[r].cells.push_back(cell_of(n, run_cell(o)));
      } catch (const std::exception& e) {
        SweepCell failed;
        failed.adapters = n;
        failed.errors.push_back(e.what());
        sweep.rows[r].cells.push_back(failed);
      }
    }
  }
  return sweep;
}

}  // namespace

int sweep_command(const std::vector<std::string>& args) {
  const CommandSpec spec = sweep_spec();
  SweepOptions so;
  RunOptions atm_probe;
  try {
    so = parse_sweep(args);
    if (so.help) {
      std::fputs(usage_text(spec).c_str(), stdout);
      return 0;
    }
    // Every run's options are checked before the first test starts.
    std::vector<std::string> probe = so.forward;
    probe.insert(probe.end(), {"--adapters", "auto:" + std::to_string(so.counts.back())});
    RunOptions o = parse_run_options(probe);
    atm_probe = o;
    if (so.testbed && !o.embedded)
      throw UsageError("--testbed: the testbed's far host is the server; drop -H");
  } catch (const UsageError& e) {
    return usage_error(spec, std::cerr, e.what());
  }
  catch_interrupts();
  try {
    Sweep sweep;
    if (is_atm_transport(atm_probe.spec.transport)) {
      // clip and lane run over their emulated line: the `atm up` testbed --testbed names, or one
      // built for the sweep with as many adapter pairs as the largest count.
      std::optional<TestHosts> named;
      if (so.testbed) named = atm_testbed_hosts(*so.testbed, atm_probe.spec.transport);
      AtmHosts built;
      if (!named) built = build_atm_testbed(atm_probe, so.counts.back());
      const TestHosts hosts = named ? *named : built.hosts;
      sweep = run_sweep(so, [&](const RunOptions& o) { return run_on_hosts(o, hosts); });
      sweep.hosts =
          fmt::format("emulated {} line {} -> {} ({} adapters, {})", hosts.kind, hosts.near_ns,
                      hosts.far_ns, hosts.links.size(), atm_probe.atm_rate);
    } else if (so.testbed) {
      check_testbed_name(*so.testbed);
      std::unique_ptr<Testbed> bed;
      TestHosts hosts;
      if (std::filesystem::exists(testbed_state_path(*so.testbed))) {
        hosts = hosts_from_state(read_testbed_state(*so.testbed));
      } else {
        TestbedOptions t;
        t.adapters = so.counts.back();
        t.tag = *so.testbed;
        bed = std::make_unique<Testbed>(t);  // removed when the sweep ends
        hosts = bed->hosts();
      }
      sweep = run_sweep(so, [&](const RunOptions& o) { return run_on_hosts(o, hosts); });
      sweep.hosts = fmt::format("testbed {} -> {} ({}, {} links)", hosts.near_ns, hosts.far_ns,
                                hosts.kind, hosts.links.size());
    } else {
      std::unique_ptr<control::LocalServer> local;
      std::string where;
      sweep = run_sweep(so, [&](const RunOptions& o) {
        control::ClientOptions client = o.client;
        if (o.embedded) {
          if (!local) {
            local = std::make_unique<control::LocalServer>(
                control::own_server_options(o.client.max_memory));
          }
          client.server = local->address();
        }
        where = client.server;
        return run_placed(o, client);
      });
      sweep.hosts = "this host's adapters -> " + (local ? "an in-process server" : where);
    }
    std::string text = so.format == "json"  ? sweep_json(sweep).dump(2) + "\n"
                       : so.format == "csv" ? sweep_csv(sweep)
                                            : sweep_text(sweep);
    if (so.output.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      std::ofstream out(so.output);
      if (!(out << text)) throw std::runtime_error("cannot write " + so.output);
    }
    if (interrupts() > 0) {
      std::fprintf(stderr,
                   "mtperf sweep: interrupted; the table holds the cells measured so far\n");
      return kExitInterrupted;
    }
    for (const auto& row : sweep.rows)
      for (const auto& c : row.cells)
        if (!c.errors.empty()) return 1;
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtperf sweep: %s\n", e.what());
    return interrupts() > 0 ? kExitInterrupted : 1;
  }
}

}  // namespace mtperf::cli
