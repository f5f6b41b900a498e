// `mtperf compare`: configurations side by side — transports (-T socket,uring), or one
// transport with different options (--variant 'cc=bbr' --variant 'cc=cubic') — over the same
// workloads, N interleaved iterations each, with medians, intervals, ratios to a baseline and a
// verdict per cell (report/compare.hpp). Options it does not know go to every run.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "harness/compare_run.hpp"
#include "harness/run.hpp"
#include "platform/command_line.hpp"
#include "platform/interrupt.hpp"
#include "report/compare.hpp"
#include "transports/api/transport_list.hpp"
#include "workloads/kind.hpp"

namespace mtperf::cli {
namespace {

constexpr int kMaxCompareIterations = 1000;
constexpr size_t kMaxConfigs = 32;

CommandSpec compare_spec() {
  namespace po = boost::program_options;
  CommandSpec spec("compare",
                   "[-T A,B,...] [--variant OPTIONS]... [-w W,...] [-i N] [-l SECONDS] "
                   "[--baseline NAME] [--level PERCENT] [--format text|json|csv] [-o FILE] "
                   "[run options...]",
                   "Configurations side by side over the same workloads, iterated and "
                   "interleaved: medians, intervals, ratios and a verdict per cell.");
  auto add = spec.options.add_options();
  add("transport,T",
      po::value<std::string>()
          ->default_value(std::string(kDefaultTransport), std::string(kDefaultTransport))
          ->value_name("LIST"),
      "transports to compare, comma-separated (one is enough with --variant; the same name twice "
      "compares a transport with itself)");
  add("variant", po::value<std::vector<std::string>>()->value_name("OPTIONS"),
      "a configuration: run options, KEY=VALUE for --KEY VALUE (e.g. 'cc=bbr', 'topt=sqpoll=1 "
      "wait=spin') or as typed ('-O sqpoll=1'); repeatable, each over every -T transport");
  add("workload,w", po::value<std::vector<std::string>>()->value_name("LIST"),
      ("workloads, comma-separated or repeated: " + workload_names(" | ") + " (default stream,rr)")
          .c_str());
  add("iterations,i", po::value<int>()->default_value(5, "5")->value_name("N"),
      "runs of each configuration on each workload, 2..1000");
  add("length,l", po::value<std::string>()->default_value("5", "5")->value_name("SECONDS"),
      "measured window of each run");
  add("baseline", po::value<std::string>()->value_name("NAME"),
      "the configuration the others are compared with, by name or 1-based position (default: the "
      "first)");
  add("level", po::value<double>()->default_value(95, "95")->value_name("PERCENT"),
      "confidence level of the intervals; a difference is a verdict when p < 1 - level");
  add("format", po::value<std::string>()->default_value("text", "text")->value_name("FORMAT"),
      "text | json | csv");
  add("output,o", po::value<std::string>()->value_name("FILE"),
      "write the table to FILE (default: stdout)");
  // Set by compare itself; declared so that they are refused rather than passed on.
  spec.hidden.add_options()("confidence,I", po::value<std::string>(), "")(
      "check", po::value<std::string>(), "")("histogram", po::value<std::string>(), "");
  spec.about =
      "Other options go to every run: -p, -m, -r, -P, --cpus, --server-cpus, -H, --testbed, -O,\n"
      "the line options, ... (mtperf run --help). Iteration i runs each workload over every\n"
      "configuration, in order on even iterations and reversed on odd ones, so a drift of the\n"
      "host's load falls on all alike.\n";
  spec.forward_unknown = true;
  spec.habits = true;
  return spec;
}

// "cc=bbr wait=spin" -> --cc bbr --wait spin; "mptcp" -> --mptcp; "-O sqpoll=1" stays as typed
// (a word after one that starts with '-' is that option's value).
std::vector<std::string> variant_args(const std::string& variant) {
  std::vector<std::string> out;
  bool typed = false;  // the last word was an option as typed
  for (const std::string& word : split_list(variant, ' ')) {
    if (word[0] == '-' || typed) {
      typed = word[0] == '-';
      out.push_back(word);
      continue;
    }
    const size_t eq = word.find('=');
    out.push_back((eq == 1 || word.size() == 1 ? "-" : "--") + word.substr(0, eq));
    if (eq != std::string::npos) out.push_back(word.substr(eq + 1));
  }
  return out;
}

struct CompareOptions {
  Compare model;
  std::vector<std::string> workloads;
  std::vector<std::vector<RunRequest>> requests;  // [workload][configuration]
  std::string format, output;
  bool help = false;
};

std::vector<CompareConfig> configs_of(const CommandLine& cl) {
  const std::vector<std::string> transports = split_list(cl.get<std::string>("transport"), ',');
  if (transports.empty())
    throw UsageError("option " + cl.typed("transport") + ": no transport given");
  std::vector<std::string> variants;
  if (cl.has("variant")) variants = cl.get<std::vector<std::string>>("variant");
  std::vector<CompareConfig> out;
  for (const std::string& t : transports) {
    if (variants.empty()) out.push_back({t, {"-T", t}});
    for (const std::string& v : variants) {
      if (split_list(v, ' ').empty())
        throw UsageError("option --variant: an empty variant (give run options, e.g. 'cc=bbr')");
      CompareConfig c{transports.size() > 1 ? t + " " + v : v, {"-T", t}};
      for (auto& a : variant_args(v))
        c.args.push_back(a);
      out.push_back(std::move(c));
    }
  }
  // The same configuration twice is a fair question (is the difference noise?): number the
  // repeats so each column has its own name.
  for (size_t i = 0; i < out.size(); ++i) {
    int seen = 1;
    for (size_t j = 0; j < i; ++j)
      if (out[j].name == out[i].name || out[j].name.starts_with(out[i].name + "#")) ++seen;
    if (seen > 1) out[i].name += "#" + std::to_string(seen);
  }
  if (out.size() < 2)
    throw UsageError("compare needs two configurations or more: -T A,B, or --variant twice");
  if (out.size() > kMaxConfigs)
    throw UsageError(fmt::format("{} configurations: at most {}", out.size(), kMaxConfigs));
  return out;
}

size_t baseline_of(const CommandLine& cl, const std::vector<CompareConfig>& configs) {
  if (!cl.has("baseline")) return 0;
  const std::string b = cl.get<std::string>("baseline");
  for (size_t i = 0; i < configs.size(); ++i)
    if (configs[i].name == b || std::to_string(i + 1) == b) return i;
  std::string names;
  for (const auto& c : configs)
    names += (names.empty() ? "" : ", ") + c.name;
  throw UsageError("option --baseline: '" + b + "' is none of " + names + " (or 1.." +
                   std::to_string(configs.size()) + ")");
}

// The options of one run.
std::vector<std::string> run_args(const Compare& c, size_t config, const std::string& workload) {
  std::vector<std::string> a = c.common_args;
  a.insert(a.end(), c.configs[config].args.begin(), c.configs[config].args.end());
  a.insert(a.end(), {"-w", workload, "-q"});
  return a;
}

// -w as lists or repeated; stream,rr when not given.
std::vector<std::string> workloads_of(const CommandLine& cl) {
  std::vector<std::string> w = {"stream", "rr"};
  if (cl.has("workload")) {
    w.clear();
    for (const auto& list : cl.get<std::vector<std::string>>("workload"))
      for (const auto& name : split_list(list, ','))
        w.push_back(name);
  }
  for (const auto& name : w) {
    try {
      parse_workload(name);
    } catch (const std::invalid_argument&) {
      throw UsageError("option " + cl.typed("workload") + ": '" + name + "' is not " +
                       workload_names(", ", " or "));
    }
  }
  return w;
}

void set_requests(CompareOptions& o);

CompareOptions parse_compare(const std::vector<std::string>& args) {
  CompareOptions o;
  const CommandLine cl = parse_command_line(compare_spec(), args);
  if ((o.help = cl.help)) return o;
  for (const char* own : {"confidence", "check", "histogram"})
    if (cl.has(own))
      throw UsageError("option " + cl.typed(own) +
                       ": not for compare (its iterations are -i, its verdicts Welch's test)");
  Compare& c = o.model;
  c.configs = configs_of(cl);
  c.baseline = baseline_of(cl, c.configs);
  c.iterations = cl.get<int>("iterations");
  if (c.iterations < 2 || c.iterations > kMaxCompareIterations)
    throw UsageError(fmt::format("option {}: {} is not 2..{} (a verdict needs two runs a side)",
                                 cl.typed("iterations"), c.iterations, kMaxCompareIterations));
  const double level = cl.get<double>("level");
  if (!(level >= 50 && level < 100))
    throw UsageError(fmt::format("option --level: {} is not a percentage in 50..99.9", level));
  c.level = level / 100;
  o.workloads = workloads_of(cl);
  o.format = cl.get<std::string>("format");
  if (o.format != "text" && o.format != "json" && o.format != "csv")
    throw UsageError("option " + cl.typed("format") + ": '" + o.format +
                     "' is not text, json or csv");
  if (cl.has("output")) o.output = cl.get<std::string>("output");
  c.common_args = cl.rest;
  c.common_args.insert(c.common_args.end(), {"-l", cl.get<std::string>("length")});
  set_requests(o);
  return o;
}

// Every run's options, checked before the first one starts: what every run gets, named as
// typed, then each configuration's own, named with the configuration.
void set_requests(CompareOptions& o) {
  Compare& c = o.model;
  const std::vector<std::string>& w = o.workloads;
  std::vector<std::string> where(c.configs.size());
  // An option goes to the workloads that read it (`-r` to rr, not to stream); one that none of
  // them reads is refused, as `mtperf run` refuses it.
  std::optional<UsageError> unused;
  for (const auto& name : w) {
    std::vector<std::string> a = c.common_args;
    a.insert(a.end(), {"-w", name});
    parse_run_options(a, UnusedOptions::pass);
    try {
      parse_run_options(a);
      unused.reset();
      break;
    } catch (const UsageError& e) {
      if (!unused) unused = e;
    }
  }
  if (unused) throw *unused;
  o.requests.assign(w.size(), std::vector<RunRequest>(c.configs.size()));
  for (size_t k = 0; k < c.configs.size(); ++k)
    for (size_t r = 0; r < w.size(); ++r) {
      try {
        const RunOptions ro = parse_run_options(run_args(c, k, w[r]), UnusedOptions::pass);
        c.length_s = ro.spec.duration_s;
        where[k] = where_told(ro);
        o.requests[r][k] = ro;
      } catch (const UsageError& e) {
        throw UsageError(c.configs[k].name + ": " + e.what());
      }
    }
  c.hosts = where[0];
  if (std::count(where.begin(), where.end(), where[0]) != std::ptrdiff_t(where.size())) {
    c.hosts.clear();
    for (size_t k = 0; k < where.size(); ++k)
      c.hosts += (k ? "; " : "") + c.configs[k].name + " over " + where[k];
  }
}

}  // namespace

int compare_command(const std::vector<std::string>& args) {
  if (!args.empty() && args[0].ends_with(".json")) return fleet_compare_command(args);
  const CommandSpec spec = compare_spec();
  CompareOptions o;
  try {
    o = parse_compare(args);
  } catch (const UsageError& e) {
    return usage_error(spec, std::cerr, e.what());
  }
  if (o.help) {
    std::fputs(usage_text(spec).c_str(), stdout);
    return 0;
  }
  catch_interrupts();
  try {
    run_compare(o.model, o.requests);
    const Compare& c = o.model;
    std::string text = o.format == "json"  ? compare_json(c).dump(2) + "\n"
                       : o.format == "csv" ? compare_csv(c)
                                           : compare_text(c);
    if (o.output.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      std::ofstream out(o.output);
      if (!(out << text)) throw std::runtime_error("cannot write " + o.output);
    }
    if (interrupts() > 0) {
      std::fprintf(stderr,
                   "mtperf compare: interrupted; the table holds the runs measured so far\n");
      return kExitInterrupted;
    }
    for (const auto& row : c.rows)
      for (const auto& cell : row.cells)
        for (const auto& s : cell.samples)
          if (!s.errors.empty()) return 1;
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtperf compare: %s\n", e.what());
    return interrupts() > 0 ? kExitInterrupted : 1;
  }
}

}  // namespace mtperf::cli
