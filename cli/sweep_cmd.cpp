// `mtperf sweep`: a table of workloads (rows) over the values of one axis (columns): 1, 2, ... N
// adapters, stream message sizes, parallel flows, or a testbed's MTU; on a testbed (--testbed) or
// on this host against -H or the embedded server. Options it does not know are passed to every
// run (-l, -T, -P, --pin, --cpus, ...).
#include <cstdio>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "cli/sweep_axis.hpp"
#include "harness/line_run.hpp"
#include "harness/sweep_run.hpp"
#include "platform/command_line.hpp"
#include "platform/interrupt.hpp"
#include "report/sweep.hpp"

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
      "--adapters), -m, --per-controller, --pin, --cpus, -H, -i/-I, the line options, ...\n"
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

// The request: the table's layout and every cell's run, parsed before the first one starts.
SweepRequest sweep_request(const SweepOptions& so) {
  SweepRequest q;
  q.layout.axis = so.axis;
  q.layout.axis_values = so.values;
  for (const RowKind* k : so.rows)
    q.layout.rows.push_back(
        {k->name, k->label, k->rr ? SweepFigure::transaction_rate : SweepFigure::throughput, {}});
  for (int64_t at : so.values) {
    std::vector<RunRequest>& column = q.runs.emplace_back();
    for (const RowKind* k : so.rows) {
      std::vector<std::string> a = so.forward;
      a.insert(a.end(), k->args.begin(), k->args.end());
      const auto axis = axis_run_args(so.axis, at);
      a.insert(a.end(), axis.begin(), axis.end());
      a.push_back("-q");
      column.push_back(parse_run_options(a, UnusedOptions::pass));
    }
  }
  q.testbed = so.testbed;
  return q;
}

// Every run's options are checked before the first test starts, at the largest axis value.
RunOptions check_run_options(const SweepOptions& so) {
  std::vector<std::string> probe = so.forward;
  const auto column = axis_run_args(so.axis, so.values.back());
  probe.insert(probe.end(), column.begin(), column.end());
  RunOptions o = parse_run_options(probe, UnusedOptions::pass);
  if (so.testbed && !o.embedded)
    throw UsageError("--testbed: the testbed's far host is the server; drop -H");
  if (const LineHook* line = line_hook_of(o.spec.transport); so.axis == SweepAxis::mtu && line)
    throw UsageError("option --mtu: sets a veth testbed's links; -T " + o.spec.transport +
                     " takes " + line->option_name("mtu"));
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
  // Whatever the format, a cell that failed is named on stderr too: a JSON or CSV reader may not
  // look for errors inside the document.
  int failed = 0;
  for (const auto& row : sweep.rows) {
    for (const auto& c : row.cells) {
      if (c.errors.empty()) continue;
      if (++failed <= 5) {
        std::fprintf(stderr, "mtperf sweep: %s at %lld: %s\n", row.label.c_str(),
                     static_cast<long long>(c.at), c.errors.front().c_str());
      }
    }
  }
  if (failed > 5) std::fprintf(stderr, "mtperf sweep: %d cells failed in all\n", failed);
  return failed > 0 ? 1 : 0;
}

}  // namespace

int sweep_command(const std::vector<std::string>& args) {
  const CommandSpec spec = sweep_spec();
  SweepOptions so;
  SweepRequest request;
  try {
    so = parse_sweep(args);
    if (so.help) {
      std::fputs(usage_text(spec).c_str(), stdout);
      return 0;
    }
    check_run_options(so);
    request = sweep_request(so);
  } catch (const UsageError& e) {
    return usage_error(spec, std::cerr, e.what());
  }
  catch_interrupts();
  try {
    return write_sweep(so, run_sweep(request));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtperf sweep: %s\n", e.what());
    return interrupts() > 0 ? kExitInterrupted : 1;
  }
}

}  // namespace mtperf::cli
