// `mtperf sweep`: a table of workloads (rows) over the values of one axis (columns): 1, 2, ... N
// adapters, stream message sizes, parallel flows, or a testbed's MTU; on a testbed (--testbed) or
// on this host against -H or the embedded server. Options it does not know are passed to every
// run (-l, -T, -P, --pin, --cpus, ...).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "cli/sweep_axis.hpp"
#include "control/local_server.hpp"
#include "harness/atm_run.hpp"
#include "harness/hosts_run.hpp"
#include "harness/run.hpp"
#include "platform/interrupt.hpp"
#include "platform/link_mtu.hpp"
#include "report/sweep.hpp"
#include "stats/fairness.hpp"

namespace mtperf::cli {
namespace {

struct RowKind {
  const char* name;
  const char* label;
  std::vector<std::string> args;
  const char* workload = nullptr;  // the same row by `run`'s workload name (-w stream ...)
  bool rr = false;                 // a request/response row (no -m)
};

// The rows of the multi-adapter reports, in their order.
const std::vector<RowKind>& row_kinds() {
  static const std::vector<RowKind> all = {
      {"outbound", "TCP outbound", {"-w", "stream"}, "stream"},
      {"inbound", "TCP inbound", {"-w", "maerts"}, "maerts"},
      {"bidirectional", "TCP bidirectional", {"-w", "bidir"}, "bidir"},
      {"tcp-rr", "TCP rr 1 byte", {"-w", "rr", "-r", "1,1"}, "rr", true},
      {"udp-rr-1k", "UDP rr 1K", {"-w", "rr", "-p", "udp", "-r", "1024,1024"}, nullptr, true},
      {"udp-rr-2k", "UDP rr 2K", {"-w", "rr", "-p", "udp", "-r", "2048,2048"}, nullptr, true},
  };
  return all;
}

CommandSpec sweep_spec() {
  namespace po = boost::program_options;
  CommandSpec spec("sweep",
                   "--adapters A..B|LIST | --message-size SIZES | --flows A..B|LIST | --mtu MTUS "
                   "[-w ROW]... [--testbed [NAME]] [--format text|json|csv] [-o FILE] "
                   "[run options...]",
                   "A table of workloads over one axis: adapters (scaling efficiency), stream "
                   "message sizes, parallel flows (the load curve) or a testbed's MTU, with CPU "
                   "and service demand.");
  auto add = spec.options.add_options();
  for (const auto& a : sweep_axis_options())
    add(a.option, po::value<std::string>()->value_name(a.value_name), a.help);
  add("workload,w", po::value<std::vector<std::string>>()->value_name("ROW"),
      "outbound | inbound | bidirectional | tcp-rr | udp-rr-1k | udp-rr-2k, or run's names stream, "
      "maerts, bidir, rr for the first four (repeatable; default: all six; the three stream rows "
      "with --message-size, the three rr rows with --flows)");
  add("testbed", po::value<std::string>()->implicit_value("default", "default")->value_name("NAME"),
      "between the namespaces of testbed NAME (built for the sweep, with as many veth links as the "
      "largest adapter count, when it is not up)");
  add("format", po::value<std::string>()->default_value("text", "text")->value_name("FORMAT"),
      "text | json | csv");
  add("output,o", po::value<std::string>()->value_name("FILE"),
      "write the table to FILE (default: stdout)");
  // The rows set these; declared so that they are refused rather than passed on.
  spec.hidden.add_options()("protocol,p", po::value<std::string>(), "")(
      "rr-size,r", po::value<std::string>(), "");
  spec.about =
      "Exactly one of --adapters, --message-size, --flows, --mtu.\n"
      "Other options go to every run: -l, --warmup, -T, -O, -P (flows, per adapter with\n"
      "--adapters), -m, --per-controller, --pin, --cpus, -H, -i/-I, --atm-rate, ...\n"
      "(mtperf run --help); -p and -r are the rows', -m the --message-size axis', -P the\n"
      "--flows axis'.\n";
  spec.forward_unknown = true;
  spec.habits = true;
  return spec;
}

struct SweepOptions {
  SweepAxis axis = SweepAxis::adapters;
  std::vector<int64_t> values;
  std::vector<const RowKind*> rows;
  std::optional<std::string> testbed;
  std::string format = "text", output;
  std::vector<std::string> forward;
  bool help = false;
};

// Exactly one axis option; its values.
void parse_axis(const CommandLine& cl, SweepOptions& o) {
  const SweepAxisOption* given = nullptr;
  const std::string all = "--adapters, --message-size, --flows or --mtu";
  for (const auto& a : sweep_axis_options()) {
    if (!cl.has(a.option)) continue;
    if (given != nullptr)
      throw UsageError("options " + cl.typed(given->option) + " and " + cl.typed(a.option) +
                       ": a sweep varies one axis; give one of " + all);
    given = &a;
  }
  if (given == nullptr) throw UsageError("an axis is required: one of " + all);
  o.axis = given->axis;
  o.values = parse_axis_values(o.axis, cl.typed(given->option), cl.get<std::string>(given->option));
  // The axis sets this run option per column; a fixed one beside it would be a second axis.
  const std::string run_option = axis_run_option(o.axis);
  for (const std::string& word : o.forward)
    if (!run_option.empty() && word.rfind(run_option, 0) == 0)
      throw UsageError("option " + run_option + ": the " + cl.typed(given->option) +
                       " axis sets it for each column");
}

// The rows -w names (or the axis' default rows); --message-size takes stream rows only.
void parse_rows(const CommandLine& cl, SweepOptions& o) {
  if (cl.has("workload")) {
    for (const std::string& name : cl.get<std::vector<std::string>>("workload")) {
      const RowKind* found = nullptr;
      for (const auto& k : row_kinds())
        if (name == k.name || (k.workload && name == k.workload)) found = &k;
      if (found == nullptr)
        throw UsageError("option " + cl.typed("workload") + ": '" + name +
                         "' is not outbound (stream), inbound (maerts), bidirectional (bidir), "
                         "tcp-rr (rr), udp-rr-1k or udp-rr-2k");
      if (found->rr && o.axis == SweepAxis::message_size)
        throw UsageError("option " + cl.typed("workload") + ": '" + name +
                         "' is a request/response row, which has no message size; " +
                         cl.typed("message-size") +
                         " sweeps outbound, inbound and bidirectional (-r sets rr sizes)");
      o.rows.push_back(found);
    }
    return;
  }
  for (const auto& k : row_kinds()) {
    bool wanted = o.axis == SweepAxis::message_size ? !k.rr
                  : o.axis == SweepAxis::flows      ? k.rr
                                                    : true;
    if (wanted) o.rows.push_back(&k);
  }
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
  o.forward = cl.rest;
  parse_axis(cl, o);
  parse_rows(cl, o);
  if (cl.has("testbed")) o.testbed = cl.get<std::string>("testbed");
  if (o.axis == SweepAxis::mtu && !o.testbed)
    throw UsageError("option " + cl.typed("mtu") +
                     ": only with --testbed (it sets the testbed's links for each column)");
  o.format = cl.get<std::string>("format");
  if (o.format != "text" && o.format != "json" && o.format != "csv")
    throw UsageError("option " + cl.typed("format") + ": '" + o.format +
                     "' is not text, json or csv");
  if (cl.has("output")) o.output = cl.get<std::string>("output");
  return o;
}

SweepCell cell_of(int64_t at, const Report& r) {
  const Summary& s = r.summary;
  bool rr = r.spec.workload == Workload::rr || r.spec.workload == Workload::crr;
  SweepCell c;
  c.at = at;
  c.value = rr ? s.transaction_rate : s.throughput_bps;
  if (s.local_cpu) {
    c.local_cpu = s.local_cpu->host.total.util;
    if (s.local_cpu->service_demand > 0) c.local_sd = s.local_cpu->service_demand;
  }
  if (s.remote_cpu) {
    c.remote_cpu = s.remote_cpu->host.total.util;
    if (s.remote_cpu->service_demand > 0) c.remote_sd = s.remote_cpu->service_demand;
  }
  if (rr && s.latency && s.latency->count > 0) {
    c.latency_mean_us = s.latency->mean_us;
    c.latency_p99_us = s.latency->p99_us;
  }
  if (s.adapters.size() > 1) {
    std::vector<double> per;
    for (const auto& g : s.adapters)
      per.push_back(rr ? g.transaction_rate : g.throughput_bps);
    c.jain_fairness = jain_index(per);
  }
  c.errors = s.errors;
  return c;
}

SweepCell failed_cell(int64_t at, const std::string& why) {
  SweepCell c;
  c.at = at;
  c.errors.push_back(why);
  return c;
}

// Runs one cell: a row's workload at one axis value.
using CellRunner = std::function<Report(const RunOptions&)>;
// Called before each column's runs with its axis value (--mtu sets the links).
using ColumnSetup = std::function<void(int64_t)>;

void run_cell(const SweepOptions& so, size_t r, int64_t at, const CellRunner& runner,
              Sweep& sweep) {
  std::vector<std::string> a = so.forward;
  a.insert(a.end(), so.rows[r]->args.begin(), so.rows[r]->args.end());
  const auto column = axis_run_args(so.axis, at);
  a.insert(a.end(), column.begin(), column.end());
  a.push_back("-q");
  RunOptions o = parse_run_options(a);
  bool rr = o.spec.workload == Workload::rr;
  sweep.rows[r].figure = rr ? SweepFigure::transaction_rate : SweepFigure::throughput;
  sweep.transport = o.spec.transport;
  sweep.length_s = o.spec.duration_s;
  std::fprintf(stderr, "  %s %s...\n", so.rows[r]->label, axis_cell_phrase(so.axis, at).c_str());
  try {
    sweep.rows[r].cells.push_back(cell_of(at, runner(o)));
  } catch (const std::exception& e) {
    sweep.rows[r].cells.push_back(failed_cell(at, e.what()));
  }
}

Sweep run_sweep(const SweepOptions& so, const CellRunner& runner, const ColumnSetup& setup = {}) {
  Sweep sweep;
  sweep.axis = so.axis;
  sweep.axis_values = so.values;
  for (const RowKind* k : so.rows)
    sweep.rows.push_back(
        {k->name, k->label, k->rr ? SweepFigure::transaction_rate : SweepFigure::throughput, {}});
  for (int64_t at : so.values) {
    if (interrupts() > 0) break;
    if (setup) {
      try {
        setup(at);
      } catch (const std::exception& e) {
        // Every row of the column failed for the same reason; the sweep goes on.
        for (auto& row : sweep.rows)
          row.cells.push_back(failed_cell(at, e.what()));
        continue;
      }
    }
    for (size_t r = 0; r < so.rows.size() && interrupts() == 0; ++r)
      run_cell(so, r, at, runner, sweep);
  }
  return sweep;
}

// The testbed's links, both ends: what --mtu sets.
std::vector<NamespacedLink> both_ends(const TestHosts& hosts) {
  std::vector<NamespacedLink> out;
  for (const auto& l : hosts.links) {
    out.push_back({hosts.near_ns, l.near_if});
    out.push_back({hosts.far_ns, l.far_if});
  }
  return out;
}

// The links a sweep needs: as many as its largest adapter count, else one.
int links_needed(const SweepOptions& so) {
  return so.axis == SweepAxis::adapters ? int(so.values.back()) : 1;
}

Sweep sweep_over_atm(const SweepOptions& so, const RunOptions& probe) {
  // clip and lane run over their emulated line: the `atm up` testbed --testbed names, or one
  // built for the sweep with as many adapter pairs as needed.
  std::optional<TestHosts> named;
  if (so.testbed) named = atm_testbed_hosts(*so.testbed, probe.spec.transport);
  AtmHosts built;
  if (!named) built = build_atm_testbed(probe, links_needed(so));
  const TestHosts hosts = named ? *named : built.hosts;
  Sweep sweep = run_sweep(so, [&](const RunOptions& o) { return run_on_hosts(o, hosts); });
  sweep.hosts = fmt::format("emulated {} line {} -> {} ({} adapters, {})", hosts.kind,
                            hosts.near_ns, hosts.far_ns, hosts.links.size(), probe.atm_rate);
  return sweep;
}

Sweep sweep_over_testbed(const SweepOptions& so) {
  check_testbed_name(*so.testbed);
  std::unique_ptr<Testbed> bed;
  TestHosts hosts;
  if (std::filesystem::exists(testbed_state_path(*so.testbed))) {
    hosts = hosts_from_state(read_testbed_state(*so.testbed));
  } else {
    TestbedOptions t;
    t.adapters = links_needed(so);
    t.tag = *so.testbed;
    bed = std::make_unique<Testbed>(t);  // removed when the sweep ends
    hosts = bed->hosts();
  }
  // Declared after the testbed, so the MTUs are put back before a built testbed goes; also when
  // a run throws or the sweep is interrupted.
  std::unique_ptr<LinkMtuOverride> mtu;
  ColumnSetup setup;
  if (so.axis == SweepAxis::mtu) {
    mtu = std::make_unique<LinkMtuOverride>(both_ends(hosts));
    setup = [&](int64_t at) { mtu->set(int(at)); };
  }
  Sweep sweep = run_sweep(
      so, [&](const RunOptions& o) { return run_on_hosts(o, hosts); }, setup);
  sweep.hosts = fmt::format("testbed {} -> {} ({}, {} links)", hosts.near_ns, hosts.far_ns,
                            hosts.kind, hosts.links.size());
  return sweep;
}

Sweep sweep_here(const SweepOptions& so) {
  std::unique_ptr<control::LocalServer> local;
  std::string where;
  Sweep sweep = run_sweep(so, [&](const RunOptions& o) {
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
  const char* what = so.axis == SweepAxis::adapters ? "this host's adapters" : "this host";
  sweep.hosts = std::string(what) + " -> " + (local ? "an in-process server" : where);
  return sweep;
}

// Every run's options are checked before the first test starts, at the largest axis value.
RunOptions check_run_options(const SweepOptions& so) {
  std::vector<std::string> probe = so.forward;
  const auto column = axis_run_args(so.axis, so.values.back());
  probe.insert(probe.end(), column.begin(), column.end());
  RunOptions o = parse_run_options(probe);
  if (so.testbed && !o.embedded)
    throw UsageError("--testbed: the testbed's far host is the server; drop -H");
  if (so.axis == SweepAxis::mtu && is_atm_transport(o.spec.transport))
    throw UsageError("option --mtu: sets a veth testbed's links; -T " + o.spec.transport +
                     " takes --atm-mtu");
  return o;
}

int write_sweep(const SweepOptions& so, const Sweep& sweep) {
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
    std::fprintf(stderr, "mtperf sweep: interrupted; the table holds the cells measured so far\n");
    return kExitInterrupted;
  }
  for (const auto& row : sweep.rows)
    for (const auto& c : row.cells)
      if (!c.errors.empty()) return 1;
  return 0;
}

}  // namespace

int sweep_command(const std::vector<std::string>& args) {
  const CommandSpec spec = sweep_spec();
  SweepOptions so;
  RunOptions probe;
  try {
    so = parse_sweep(args);
    if (so.help) {
      std::fputs(usage_text(spec).c_str(), stdout);
      return 0;
    }
    probe = check_run_options(so);
  } catch (const UsageError& e) {
    return usage_error(spec, std::cerr, e.what());
  }
  catch_interrupts();
  try {
    Sweep sweep = is_atm_transport(probe.spec.transport) ? sweep_over_atm(so, probe)
                  : so.testbed                           ? sweep_over_testbed(so)
                                                         : sweep_here(so);
    return write_sweep(so, sweep);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtperf sweep: %s\n", e.what());
    return interrupts() > 0 ? kExitInterrupted : 1;
  }
}

}  // namespace mtperf::cli
