#include "fleet/checks.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "fleet/compare.hpp"
#include "fleet/line.hpp"

namespace mtperf::fleet {
namespace {

constexpr std::string_view kFigures[] = {
    "throughput", "throughput_c2s", "throughput_s2c", "transaction_rate", "p50", "p99"};

constexpr std::string_view kRefs[] = {"max", "min", "median", "line", "baseline"};

FleetCheck to_check(const CheckTerm& t) {
  FleetCheck c;
  c.text = t.text;
  c.op = t.op;
  c.factor = t.value;
  c.ref = t.ref;
  if (t.subject.rfind("pair.", 0) != 0)
    throw std::invalid_argument("check '" + t.text + "': the figure is a pair's: pair.FIGURE");
  c.figure = t.subject.substr(5);
  if (c.figure == "trans_rate") c.figure = "transaction_rate";
  if (std::find(std::begin(kFigures), std::end(kFigures), c.figure) == std::end(kFigures))
    throw std::invalid_argument("check '" + t.text + "': unknown figure '" + c.figure +
                                "' (throughput, throughput_c2s, throughput_s2c, transaction_rate, "
                                "p50, p99)");
  return c;
}

std::string show(double v, std::string_view figure) {
  if (figure.rfind("throughput", 0) == 0) return fmt::format("{:.4g}G", v / 1e9);
  if (figure == "transaction_rate") return fmt::format("{:.5g}/s", v);
  return fmt::format("{:.4g} us", v);
}

// References taken over the transport's measured pairs (the others are the pair's own).
bool is_fleet_relative(const std::string& ref) {
  return ref == "max" || ref == "min" || ref == "median";
}

}  // namespace

std::vector<FleetCheck> parse_fleet_checks(std::string_view list) {
  std::vector<FleetCheck> out;
  for (const CheckTerm& t : parse_check_terms(list, kRefs))
    out.push_back(to_check(t));
  return out;
}

std::optional<double> pair_figure(const PairResult& r, std::string_view figure) {
  if (!r.ok) return std::nullopt;
  if (figure == "throughput") return r.throughput_bps;
  if (figure == "throughput_c2s") return r.throughput_c2s_bps;
  if (figure == "throughput_s2c") return r.throughput_s2c_bps;
  if (figure == "transaction_rate") return r.transaction_rate;
  if (figure == "p50") return r.p50_us;
  if (figure == "p99") return r.p99_us;
  return std::nullopt;
}

std::vector<PairVerdict> judge(const std::vector<FleetCheck>& checks, const FleetDoc& d,
                               const FleetDoc* baseline) {
  // The baseline's result of each pair: the same transport by name, the ranks by host.
  std::map<std::tuple<std::string, uint32_t, uint32_t>, const PairResult*> before;
  std::vector<std::optional<uint32_t>> to_base;
  if (baseline) {
    to_base = ranks_by_host(d, *baseline);
    for (const PairResult& r : baseline->results)
      if (r.transport < baseline->transports.size())
        before[{baseline->transports[r.transport], r.pair.src, r.pair.dst}] = &r;
  }
  auto base_of = [&](const PairResult& r, const std::string& figure) -> std::optional<double> {
    if (!baseline || r.pair.src >= to_base.size() || r.pair.dst >= to_base.size() ||
        !to_base[r.pair.src] || !to_base[r.pair.dst] || r.transport >= d.transports.size())
      return std::nullopt;
    auto it = before.find({d.transports[r.transport], *to_base[r.pair.src], *to_base[r.pair.dst]});
    return it == before.end() ? std::nullopt : pair_figure(*it->second, figure);
  };
  // The reference of each relative check, per transport, over the measured pairs.
  std::map<std::pair<size_t, uint32_t>, double> refs;
  for (size_t c = 0; c < checks.size(); ++c) {
    if (!is_fleet_relative(checks[c].ref)) continue;
    std::map<uint32_t, std::vector<double>> values;
    for (const PairResult& r : d.results)
      if (auto v = pair_figure(r, checks[c].figure)) values[r.transport].push_back(*v);
    for (auto& [t, v] : values) {
      std::sort(v.begin(), v.end());
      const double ref = checks[c].ref == "max"   ? v.back()
                         : checks[c].ref == "min" ? v.front()
                         : v.size() % 2           ? v[v.size() / 2]
                                                  : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
      refs[{c, t}] = ref;
    }
  }
  std::vector<PairVerdict> out;
  for (size_t i = 0; i < d.results.size(); ++i) {
    const PairResult& r = d.results[i];
    PairVerdict v{i, true, ""};
    auto fail = [&](const std::string& why) {
      v.passed = false;
      v.detail += (v.detail.empty() ? "" : "; ") + why;
    };
    if (!r.ok) {
      fail("not measured: " + r.error);
      out.push_back(v);
      continue;
    }
    for (size_t c = 0; c < checks.size(); ++c) {
      const FleetCheck& k = checks[c];
      auto value = pair_figure(r, k.figure);
      if (!value) {
        fail(k.text + ": the pair has no " + k.figure);
        continue;
      }
      double bound = k.factor;
      if (k.ref == "line") {
        if (!r.line_bps) {
          fail(fmt::format("{}: no line for {}->{} ({}; give --line-rate RATE)", k.text, r.pair.src,
                           r.pair.dst, no_line_why(d, r)));
          continue;
        }
        bound = k.factor * *r.line_bps;
      } else if (k.ref == "baseline") {
        const auto base = base_of(r, k.figure);
        if (!base) {
          fail(fmt::format("{}: no baseline for {}->{} ({} measured no such pair{})", k.text,
                           r.pair.src, r.pair.dst, baseline ? "the baseline" : "no baseline given:",
                           baseline ? " of these hosts" : " --baseline FILE"));
          continue;
        }
        bound = k.factor * *base;
      } else if (!k.ref.empty()) {
        auto it = refs.find({c, r.transport});
        if (it == refs.end()) continue;
        bound = k.factor * it->second;
      }
      if (!check_holds(*value, k.op, bound))
        fail(k.text + ": " + show(*value, k.figure) + " " + std::string(failing(k.op)) + " " +
             show(bound, k.figure));
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace mtperf::fleet
