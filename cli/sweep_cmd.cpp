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
};

// The rows of the multi-adapter reports, in their order.
const std::vector<RowKind>& row_kinds() {
  static const std::vector<RowKind> all = {
      {"outbound", "TCP outbound", {"-w", "stream"}},
      {"inbound", "TCP inbound", {"-w", "maerts"}},
      {"bidirectional", "TCP bidirectional", {"-w", "bidir"}},
      {"tcp-rr", "TCP rr 1 byte", {"-w", "rr", "-r", "1,1"}},
      {"udp-rr-1k", "UDP rr 1K", {"-w", "rr", "-p", "udp", "-r", "1024,1024"}},
      {"udp-rr-2k", "UDP rr 2K", {"-w", "rr", "-p", "udp", "-r", "2048,2048"}},
  };
  return all;
}

const char* kUsage =
    "usage: mtperf sweep --adapters 1..N [-w ROW]... [--testbed [NAME]] [--format text|json|csv]\n"
    "                    [-o FILE] [run options...]\n"
    "  --adapters A..B|LIST  adapter counts, e.g. 1..4 or 1,2,4,8 (auto:N picks each set)\n"
    "  -w ROW                outbound | inbound | bidirectional | tcp-rr | udp-rr-1k |\n"
    "                        udp-rr-2k (repeatable; default: all six)\n"
    "  --testbed [NAME]      between the namespaces of testbed NAME (built for the sweep,\n"
    "                        with N veth links, when it is not up)\n"
    "  other options go to every run: -l, --warmup, -T, -O, -P (flows per adapter),\n"
    "  --per-controller, --bind, --cpus, -H, -i/-I, ... (see mtperf run --help)\n";

struct SweepOptions {
  std::vector<int> counts;
  std::vector<const RowKind*> rows;
  std::optional<std::string> testbed;
  std::string format = "text", output;
  std::vector<std::string> forward;
  bool help = false;
};

std::vector<int> parse_counts(const std::string& text) {
  std::vector<int> out;
  auto number = [&](const std::string& t) {
    size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(t, &used);
    } catch (const std::exception&) {
    }
    if (used != t.size() || v < 1 || v > kMaxTestbedAdapters)
      throw UsageError("option --adapters: '" + t + "' is not a count of 1.." +
                       std::to_string(kMaxTestbedAdapters));
    return v;
  };
  if (auto dots = text.find(".."); dots != std::string::npos) {
    int lo = number(text.substr(0, dots)), hi = number(text.substr(dots + 2));
    if (lo > hi) throw UsageError("option --adapters: '" + text + "' runs backwards");
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
      throw UsageError("option --adapters: counts must ascend, got '" + text + "'");
  return out;
}

SweepOptions parse_sweep(const std::vector<std::string>& args_in) {
  SweepOptions o;
  // --name=value of the sweep's own options becomes two words.
  std::vector<std::string> args;
  for (const auto& a : args_in) {
    size_t eq = a.find('=');
    std::string name = a.substr(0, eq);
    if (eq != std::string::npos &&
        (name == "--adapters" || name == "--workload" || name == "--testbed" ||
         name == "--format" || name == "--output")) {
      args.push_back(name);
      args.push_back(a.substr(eq + 1));
    } else {
      args.push_back(a);
    }
  }
  auto value = [&](size_t& i) {
    if (i + 1 >= args.size()) throw UsageError("option " + args[i] + " needs a value");
    return args[++i];
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "--adapters") {
      o.counts = parse_counts(value(i));
    } else if (a == "-w" || a == "--workload") {
      std::string name = value(i);
      const RowKind* found = nullptr;
      for (const auto& k : row_kinds())
        if (name == k.name) found = &k;
      if (found == nullptr)
        throw UsageError("option -w: '" + name +
                         "' is not outbound, inbound, bidirectional, tcp-rr, udp-rr-1k or "
                         "udp-rr-2k");
      o.rows.push_back(found);
    } else if (a == "--testbed") {
      bool has_name = i + 1 < args.size() && !args[i + 1].starts_with("-");
      o.testbed = has_name ? args[++i] : "default";
    } else if (a == "--format") {
      o.format = value(i);
      if (o.format != "text" && o.format != "json" && o.format != "csv")
        throw UsageError("option --format: '" + o.format + "' is not text, json or csv");
    } else if (a == "-o" || a == "--output") {
      o.output = value(i);
    } else if (a == "-p" || a == "--protocol" || a == "-r" || a == "--rr-size" ||
               a.starts_with("--protocol=") || a.starts_with("--rr-size=")) {
      throw UsageError("option " + a + ": the sweep's rows set it (choose rows with -w)");
    } else {
      o.forward.push_back(a);
    }
  }
  if (o.help) return o;
  if (o.counts.empty()) throw UsageError("--adapters A..B is required");
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
  SweepOptions so;
  RunOptions atm_probe;
  try {
    so = parse_sweep(args);
    if (so.help) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    // Every run's options are checked before the first test starts.
    std::vector<std::string> probe = so.forward;
    probe.insert(probe.end(), {"--adapters", "auto:" + std::to_string(so.counts.back())});
    RunOptions o = parse_run_options(probe);
    if (o.help) throw UsageError("-h: use `mtperf sweep --help`");
    atm_probe = o;
    if (so.testbed && !o.embedded)
      throw UsageError("--testbed: the testbed's far host is the server; drop -H");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "mtperf sweep: %s\n%s", e.what(), kUsage);
    return 2;
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
