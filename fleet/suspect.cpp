#include "fleet/suspect.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace mtperf::fleet {
namespace {

struct Count {
  size_t failing = 0, pairs = 0;
  double rate() const { return pairs ? double(failing) / double(pairs) : 0; }
};

std::string host_key(const FleetDoc& d, uint32_t rank) {
  return rank < d.roster.size() && !d.roster[rank].host.empty() ? d.roster[rank].host
                                                                : "rank " + std::to_string(rank);
}

std::string adapter_of(const FleetDoc& d, uint32_t rank) {
  return rank < d.roster.size() ? d.roster[rank].adapter : "";
}

// The checks a verdict's detail names: "A: x < y; B: ..." gives A and B.
std::vector<std::string> checks_of(const std::string& detail) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < detail.size()) {
    size_t end = detail.find("; ", at);
    if (end == std::string::npos) end = detail.size();
    const std::string part = detail.substr(at, end - at);
    out.push_back(part.substr(0, part.find(": ")));
    at = end + 2;
  }
  return out;
}

struct Work {
  const FleetDoc& d;
  std::vector<size_t> live;   // results still counted (failing ones of named suspects removed)
  std::vector<bool> failing;  // by result
  std::vector<std::string> why;

  // Whether result i touches the ranks that `in` accepts.
  template <class In>
  Count count(In in) const {
    Count c;
    for (size_t i : live) {
      const Pair& p = d.results[i].pair;
      if (!in(p.src) && !in(p.dst)) continue;
      ++c.pairs;
      c.failing += failing[i];
    }
    return c;
  }
  size_t failing_left() const {
    size_t n = 0;
    for (size_t i : live)
      n += failing[i];
    return n;
  }
};

std::string most_failed_check(const Work& w, const std::set<uint32_t>& ranks) {
  std::map<std::string, size_t> seen;
  for (size_t i : w.live) {
    const Pair& p = w.d.results[i].pair;
    if (!w.failing[i] || (!ranks.count(p.src) && !ranks.count(p.dst))) continue;
    for (const std::string& c : checks_of(w.why[i]))
      ++seen[c];
  }
  std::string best;
  size_t most = 0;
  for (const auto& [c, n] : seen)
    if (n > most) best = c, most = n;
  return best;
}

// Narrows a host to one adapter when its failing pairs all go through that adapter and the
// host's other adapters are clean.
void narrow(const Work& w, Suspect& s, const std::set<uint32_t>& ranks) {
  std::map<std::string, std::set<uint32_t>> by_adapter;
  for (uint32_t r : ranks)
    by_adapter[adapter_of(w.d, r)].insert(r);
  if (by_adapter.count("")) return;  // an adapter unknown: the host it is
  std::string guilty;
  std::vector<std::string> clean;
  for (const auto& entry : by_adapter) {
    const std::string& a = entry.first;
    const std::set<uint32_t>& rs = entry.second;  // a name, not a binding: lambdas capture it
    const Count c = w.count([&](uint32_t r) { return rs.count(r) > 0; });
    if (c.failing == s.failing && guilty.empty()) {
      guilty = a;
      s.ranks.assign(rs.begin(), rs.end());
      s.pairs = c.pairs;
    } else if (c.failing == 0) {
      clean.push_back(fmt::format("{} ({} of {})", a, c.failing, c.pairs));
    } else {
      return;  // failures on two adapters: the host
    }
  }
  if (guilty.empty()) return;
  s.kind = "adapter";
  s.adapter = guilty;
  if (!clean.empty()) s.clean = fmt::format("{}", fmt::join(clean, ", "));
}

// Named only when its failing pairs are at least 2 and at least half its pairs, and it fails at
// least twice as often as the pairs without it.
bool strong(const Suspect& s) {
  const double own = s.pairs ? double(s.failing) / double(s.pairs) : 0;
  const double rest = s.others ? double(s.others_failing) / double(s.others) : 0;
  return s.failing >= 2 && 2 * s.failing >= s.pairs && own >= 2 * rest;
}

std::string spread(const std::string& host, const Count& c) {
  return fmt::format(
      "the failing pairs are spread: no host is in most of them ({} with {} of its {} pairs the "
      "most)",
      host, c.failing, c.pairs);
}

// The link between two hosts: the pairs from one to the other, either way.
Suspect between(const Work& w, const std::set<uint32_t>& x, const std::set<uint32_t>& y,
                size_t left) {
  Suspect s;
  s.kind = "pair";
  s.ranks.assign(x.begin(), x.end());
  s.ranks.insert(s.ranks.end(), y.begin(), y.end());
  for (size_t i : w.live) {
    const Pair& p = w.d.results[i].pair;
    if (!((x.count(p.src) && y.count(p.dst)) || (y.count(p.src) && x.count(p.dst)))) continue;
    ++s.pairs;
    s.failing += w.failing[i];
  }
  s.others = w.live.size() - s.pairs;
  s.others_failing = left - s.failing;
  return s;
}

std::string evidence(const Suspect& s) {
  if (s.kind == "pair") {
    std::string out =
        fmt::format("the link {}{}: {} of {} pairs between them fail", s.host,
                    s.group.empty() ? "" : " (group " + s.group + ")", s.failing, s.pairs);
    if (!s.check.empty()) out += " " + s.check;
    if (s.others)
      out += fmt::format("; the other pairs: {} of {} fail", s.others_failing, s.others);
    return out;
  }
  std::string out = s.host + (s.adapter.empty() ? "" : " " + s.adapter) +
                    (s.group.empty() ? "" : " (group " + s.group + ")") +
                    fmt::format(": {} of {} pairs fail", s.failing, s.pairs);
  if (!s.check.empty()) out += " " + s.check;
  if (!s.clean.empty())
    out += fmt::format("; its other adapter{} {} clean",
                       s.clean.find(',') == std::string::npos ? "" : "s", s.clean);
  if (s.others) out += fmt::format("; pairs without it: {} of {} fail", s.others_failing, s.others);
  return out;
}

// The groups of a suspect's ranks, each once: "leaf1", or "leaf1 <-> leaf2" for a link between
// two groups; "" without groups.
std::string group_of(const FleetDoc& d, const Suspect& s) {
  std::vector<std::string> seen;
  for (uint32_t r : s.ranks) {
    const std::string& g = r < d.roster.size() ? d.roster[r].group : std::string();
    if (!g.empty() && std::find(seen.begin(), seen.end(), g) == seen.end()) seen.push_back(g);
  }
  return fmt::format("{}", fmt::join(seen, s.kind == "pair" ? " <-> " : ", "));
}

}  // namespace

SuspectAnalysis find_suspects(const FleetDoc& d, const std::vector<PairVerdict>& verdicts) {
  SuspectAnalysis a;
  Work w{d, {}, std::vector<bool>(d.results.size()), std::vector<std::string>(d.results.size())};
  for (size_t i = 0; i < d.results.size(); ++i) {
    const PairResult& r = d.results[i];
    w.live.push_back(i);
    if (!r.ok) {
      w.failing[i] = true;
      w.why[i] = "not measured";
    }
    if (i < verdicts.size() && !verdicts[i].passed && r.ok) {
      w.failing[i] = true;
      w.why[i] = verdicts[i].detail;
    }
  }
  a.pairs = d.results.size();
  a.failing = w.failing_left();
  std::map<std::string, std::set<uint32_t>> hosts;
  std::map<uint32_t, std::string> keys;  // each rank's host, once
  auto key_of = [&](uint32_t rank) -> const std::string& {
    auto it = keys.find(rank);
    if (it == keys.end()) it = keys.emplace(rank, host_key(d, rank)).first;
    return it->second;
  };
  for (const PairResult& r : d.results)
    for (uint32_t rank : {r.pair.src, r.pair.dst})
      hosts[key_of(rank)].insert(rank);
  std::string stopped;
  while (a.suspects.size() < kMaxSuspects) {
    const size_t left = w.failing_left();
    if (left == 0) break;
    struct Candidate {
      std::string host;
      Count own;
    };
    // Every host's counts in one pass over the pairs (a fleet of thousands of ranks has
    // millions): a pair counts once for each of its two hosts.
    std::map<std::string, Count> per;
    for (size_t i : w.live) {
      const Pair& p = d.results[i].pair;
      const std::string& x = key_of(p.src);
      const std::string& y = key_of(p.dst);
      for (const std::string* h : {&x, &y}) {
        if (h == &y && y == x) break;
        Count& c = per[*h];
        ++c.pairs;
        c.failing += w.failing[i];
      }
    }
    std::vector<Candidate> cs;
    for (const auto& [h, c] : per)
      if (c.failing > 0) cs.push_back({h, c});
    std::sort(cs.begin(), cs.end(), [](const Candidate& x, const Candidate& y) {
      if (x.own.failing != y.own.failing) return x.own.failing > y.own.failing;
      if (x.own.rate() != y.own.rate()) return x.own.rate() > y.own.rate();
      return x.host < y.host;
    });
    const Candidate& top = cs.front();
    const std::set<uint32_t>& ranks = hosts[top.host];
    Suspect s;
    s.kind = "host";
    s.host = top.host;
    s.ranks.assign(ranks.begin(), ranks.end());
    s.failing = top.own.failing;
    s.pairs = top.own.pairs;
    narrow(w, s, ranks);
    s.others = w.live.size() - s.pairs;
    s.others_failing = left - s.failing;
    const std::string weak =
        left < 2 ? fmt::format("{} failing pair: either end", left) : spread(top.host, top.own);
    const bool tie =
        cs.size() > 1 && cs[1].own.failing == top.own.failing && cs[1].own.rate() == top.own.rate();
    if (tie) {
      Suspect link = between(w, hosts[top.host], hosts[cs[1].host], left);
      link.host = top.host + " <-> " + cs[1].host;
      const bool alone = cs.size() < 3 || cs[2].own.failing < top.own.failing;
      if (alone && link.failing == top.own.failing && strong(link)) {
        s = std::move(link);
      } else {
        stopped = strong(s) ? fmt::format(
                                  "{} and {} are level ({} of {} pairs failing each): no "
                                  "one suspect",
                                  top.host, cs[1].host, top.own.failing, top.own.pairs)
                            : weak;
        break;
      }
    } else if (!strong(s)) {
      stopped = weak;
      break;
    }
    const std::set<uint32_t> named(s.ranks.begin(), s.ranks.end());
    s.check = most_failed_check(w, named);
    s.group = group_of(d, s);
    s.evidence = evidence(s);
    std::erase_if(w.live, [&](size_t i) {
      const Pair& p = d.results[i].pair;
      if (!w.failing[i]) return false;
      if (s.kind != "pair") return named.count(p.src) || named.count(p.dst);
      return named.count(p.src) && named.count(p.dst) && host_key(d, p.src) != host_key(d, p.dst);
    });
    a.suspects.push_back(std::move(s));
  }
  if (a.failing == 0)
    a.summary = "no pair fails: no suspect";
  else if (a.suspects.empty())
    a.summary = fmt::format("{} of {} pairs fail; no suspect: {}", a.failing, a.pairs, stopped);
  else
    a.summary =
        fmt::format("{} of {} pairs fail; suspect{}: {}{}", a.failing, a.pairs,
                    a.suspects.size() > 1 ? "s" : "",
                    fmt::join(
                        [&] {
                          std::vector<std::string> v;
                          for (const Suspect& s : a.suspects)
                            v.push_back(s.host + (s.adapter.empty() ? "" : " " + s.adapter));
                          return v;
                        }(),
                        ", "),
                    stopped.empty() ? "" : "; the rest: " + stopped);
  return a;
}

nlohmann::json to_json(const SuspectAnalysis& a) {
  nlohmann::json named = nlohmann::json::array();
  for (const Suspect& s : a.suspects)
    named.push_back({{"kind", s.kind},
                     {"host", s.host},
                     {"adapter", s.adapter},
                     {"group", s.group},
                     {"ranks", s.ranks},
                     {"failing", s.failing},
                     {"pairs", s.pairs},
                     {"others_failing", s.others_failing},
                     {"others", s.others},
                     {"check", s.check},
                     {"clean", s.clean},
                     {"evidence", s.evidence}});
  return {{"failing", a.failing}, {"pairs", a.pairs}, {"named", named}, {"summary", a.summary}};
}

std::string suspects_text(const SuspectAnalysis& a) {
  std::string out = "suspects: " + a.summary + "\n";
  for (const Suspect& s : a.suspects)
    out += "  " + s.evidence + "\n";
  return out;
}

}  // namespace mtperf::fleet
