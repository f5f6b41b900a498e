#include "fleet/checks.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace mtperf::fleet {
namespace {

constexpr std::string_view kFigures[] = {
    "throughput", "throughput_c2s", "throughput_s2c", "transaction_rate", "p50", "p99"};

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return std::string(s);
}

double number(std::string_view text, const std::string& check) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  std::string_view rest(end, text.data() + text.size() - end);
  double scale = 1;
  if (rest == "k" || rest == "K") scale = 1e3;
  if (rest == "M") scale = 1e6;
  if (rest == "G") scale = 1e9;
  if (rest == "T") scale = 1e12;
  if (ec != std::errc() || text.empty() || (scale == 1 && !rest.empty()) || !std::isfinite(v))
    throw std::invalid_argument("check '" + check + "': '" + std::string(text) +
                                "' is not a number (k, M, G, T for powers of 1000)");
  return v * scale;
}

FleetCheck parse_one(const std::string& text) {
  FleetCheck c;
  c.text = text;
  const size_t op = text.find_first_of("<>");
  if (op == std::string::npos || op + 1 >= text.size() || text[op + 1] != '=')
    throw std::invalid_argument("check '" + text + "': expected pair.FIGURE>=BOUND or <=BOUND");
  c.at_least = text[op] == '>';
  std::string lhs = trim(std::string_view(text).substr(0, op));
  const std::string rhs = trim(std::string_view(text).substr(op + 2));
  if (lhs.rfind("pair.", 0) != 0)
    throw std::invalid_argument("check '" + text + "': the figure is a pair's: pair.FIGURE");
  c.figure = lhs.substr(5);
  if (c.figure == "trans_rate") c.figure = "transaction_rate";
  if (std::find(std::begin(kFigures), std::end(kFigures), c.figure) == std::end(kFigures))
    throw std::invalid_argument("check '" + text + "': unknown figure '" + c.figure +
                                "' (throughput, throughput_c2s, throughput_s2c, transaction_rate, "
                                "p50, p99)");
  const size_t star = rhs.find('*');
  std::string ref = star == std::string::npos ? rhs : trim(std::string_view(rhs).substr(star + 1));
  if (ref == "max" || ref == "min" || ref == "median") {
    c.ref = ref;
    c.factor =
        star == std::string::npos ? 1 : number(trim(std::string_view(rhs).substr(0, star)), text);
  } else if (star != std::string::npos) {
    throw std::invalid_argument("check '" + text + "': F*REF takes max, min or median");
  } else {
    c.factor = number(rhs, text);
  }
  return c;
}

std::string show(double v, std::string_view figure) {
  if (figure.rfind("throughput", 0) == 0) return fmt::format("{:.4g}G", v / 1e9);
  if (figure == "transaction_rate") return fmt::format("{:.5g}/s", v);
  return fmt::format("{:.4g} us", v);
}

}  // namespace

std::vector<FleetCheck> parse_fleet_checks(std::string_view list) {
  std::vector<FleetCheck> out;
  size_t i = 0;
  while (i <= list.size()) {
    size_t comma = list.find(',', i);
    std::string one = trim(list.substr(i, comma == std::string_view::npos ? comma : comma - i));
    if (!one.empty()) out.push_back(parse_one(one));
    if (comma == std::string_view::npos) break;
    i = comma + 1;
  }
  if (out.empty()) throw std::invalid_argument("--check: no check given");
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

std::vector<PairVerdict> judge(const std::vector<FleetCheck>& checks, const FleetDoc& d) {
  // The reference of each relative check, per transport, over the measured pairs.
  std::map<std::pair<size_t, uint32_t>, double> refs;
  for (size_t c = 0; c < checks.size(); ++c) {
    if (checks[c].ref.empty()) continue;
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
      if (!k.ref.empty()) {
        auto it = refs.find({c, r.transport});
        if (it == refs.end()) continue;
        bound = k.factor * it->second;
      }
      const bool ok = k.at_least ? *value >= bound : *value <= bound;
      if (!ok)
        fail(k.text + ": " + show(*value, k.figure) + (k.at_least ? " < " : " > ") +
             show(bound, k.figure));
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace mtperf::fleet
