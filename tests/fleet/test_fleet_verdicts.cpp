// Verdicts against the line, the retest's steps and the suspect analysis, on synthetic fleet
// documents: pure logic, no traffic.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "fleet/checks.hpp"
#include "fleet/compare.hpp"
#include "fleet/line.hpp"
#include "fleet/render.hpp"
#include "fleet/retest.hpp"
#include "fleet/suspect.hpp"

using namespace mtperf;
using namespace mtperf::fleet;

namespace {

// `hosts` hosts with `per_host` ranks each (rank = host * per_host + adapter), adapters ens1f0,
// ens1f1, ...; every ordered pair of ranks on different hosts measured at `gbps`, those that
// `slow` picks at 1 Gbit/s; every adapter reports 10 Gbit/s.
template <class Slow>
FleetDoc fleet_doc(uint32_t hosts, uint32_t per_host, double gbps, Slow slow) {
  FleetDoc d;
  for (uint32_t h = 0; h < hosts; ++h)
    for (uint32_t a = 0; a < per_host; ++a) {
      Member m;
      m.rank = h * per_host + a;
      m.host = "node" + std::to_string(h);
      m.adapter = "ens1f" + std::to_string(a);
      m.speed_bps = 10e9;
      m.joined = true;
      d.roster.push_back(m);
    }
  d.transports = {"socket"};
  d.workload = "stream";
  d.complete = true;
  const uint32_t n = hosts * per_host;
  for (uint32_t s = 0; s < n; ++s)
    for (uint32_t t = 0; t < n; ++t) {
      if (s / per_host == t / per_host) continue;
      PairResult r;
      r.pair = {s, t};
      r.ok = true;
      r.throughput_bps = r.throughput_c2s_bps = (slow(s, t) ? 1 : gbps) * 1e9;
      d.results.push_back(r);
    }
  assign_lines(d, {});
  return d;
}

FleetDoc fleet_doc(uint32_t hosts, uint32_t per_host, double gbps) {
  return fleet_doc(hosts, per_host, gbps, [](uint32_t, uint32_t) { return false; });
}

}  // namespace

TEST_CASE("line: the smaller end's rate, where it came from, --line-rate over all",
          "[fleet][line]") {
  FleetDoc d = fleet_doc(3, 1, 9.5);
  d.roster[1].speed_bps = 25e9;
  d.roster[2].speed_bps.reset();
  d.roster[2].rdma_rate_bps = 100e9;
  d.roster[2].adapter = "ib0";
  PairResult r;
  r.pair = {0, 1};
  PairLine l = pair_line(d, r, false);
  CHECK(l.bps == 10e9);
  CHECK(l.source == "sysfs");
  r.pair = {1, 2};
  l = pair_line(d, r, false);  // sysfs 25G against an RDMA port of 100G: the smaller
  CHECK(l.bps == 25e9);
  CHECK(l.source == "sysfs");
  d.roster[1].rdma_rate_bps = 56e9;
  l = pair_line(d, r, true);  // over verbs: the ports' rates
  CHECK(l.bps == 56e9);
  CHECK(l.source == "rdma port");
  d.roster[2].rdma_rate_bps.reset();
  l = pair_line(d, r, false);
  CHECK_FALSE(l.bps);
  CHECK(l.source == "none");
  CHECK(no_line_why(d, r) == "rank 2 (node2) ib0 reports no speed");
  d.line_rate_bps = 1e9;
  l = pair_line(d, r, false);
  CHECK(l.bps == 1e9);
  CHECK(l.source == "--line-rate");
}

TEST_CASE("checks against the line: pass, fail with the figures, no line names the pair",
          "[fleet][line]") {
  FleetDoc d = fleet_doc(3, 1, 9.5, [](uint32_t s, uint32_t t) { return s == 2 && t == 0; });
  auto checks = parse_fleet_checks("pair.throughput>=0.9*line");
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].ref == "line");
  auto v = judge(checks, d);
  REQUIRE(v.size() == 6);
  for (size_t i = 0; i < v.size(); ++i) {
    const Pair p = d.results[i].pair;
    INFO(p.src << "->" << p.dst << ": " << v[i].detail);
    CHECK(v[i].passed == !(p.src == 2 && p.dst == 0));
  }
  const auto failed = std::find_if(v.begin(), v.end(), [](const auto& x) { return !x.passed; });
  CHECK(failed->detail == "pair.throughput>=0.9*line: 1G < 9G");
  // Half speed everywhere passes a check against the best pair, not one against the line.
  FleetDoc half = fleet_doc(3, 1, 5);
  for (const auto& x : judge(parse_fleet_checks("pair.throughput>=0.93*max"), half))
    CHECK(x.passed);
  for (const auto& x : judge(checks, half))
    CHECK_FALSE(x.passed);
  // No speed on rank 1's adapter: its pairs fail, named, the others are judged.
  d.roster[1].speed_bps.reset();
  d.roster[1].adapter = "veth1";
  assign_lines(d, {});
  v = judge(checks, d);
  for (size_t i = 0; i < v.size(); ++i) {
    const PairResult& r = d.results[i];
    if (r.pair.src != 1 && r.pair.dst != 1) continue;
    CHECK_FALSE(v[i].passed);
    CHECK(r.line_source == "none");
    CHECK_THAT(v[i].detail,
               Catch::Contains(std::to_string(r.pair.src) + "->" + std::to_string(r.pair.dst)) &&
                   Catch::Contains("rank 1 (node1) veth1 reports no speed") &&
                   Catch::Contains("--line-rate"));
  }
  d.line_rate_bps = 1.05e9;
  assign_lines(d, {});
  for (const auto& x : judge(checks, d))
    CHECK(x.passed);
  // The document carries each pair's line and its source; they read back.
  const auto j = fleet_json(d, judge(checks, d));
  CHECK(j["results"][0]["line_source"] == "--line-rate");
  CHECK(j["fleet"]["line_rate_bps"] == 1.05e9);
  CHECK(j["roster"][1]["adapter"] == "veth1");
  CHECK(j["roster"][1]["speed_bps"].is_null());
  const FleetDoc back = fleet_from_json(j);
  CHECK(back.results[0].line_bps == 1.05e9);
  CHECK(back.roster[0].speed_bps == 10e9);
  CHECK(back.line_rate_bps == 1.05e9);
  auto bad = j;
  bad["roster"][0]["speed_bps"] = -1;
  CHECK_THROWS_WITH(fleet_from_json(bad), Catch::Contains("speed_bps"));
  bad = j;
  bad["results"][0]["line_source"] = "guess";
  CHECK_THROWS_WITH(fleet_from_json(bad), Catch::Contains("line_source"));
}

TEST_CASE("retest steps: one transport each, no host in two pairs of a step", "[fleet][retest]") {
  FleetDoc d = fleet_doc(4, 2, 9.5);
  std::vector<size_t> all(d.results.size());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  const auto steps = retest_steps(d, all);
  size_t seen = 0;
  for (const RetestStep& s : steps) {
    std::set<std::string> hosts;
    for (size_t i : s.results) {
      const Pair p = d.results[i].pair;
      CHECK(hosts.insert(d.roster[p.src].host).second);
      CHECK(hosts.insert(d.roster[p.dst].host).second);
    }
    CHECK(s.results.size() <= 2);  // 4 hosts: at most 2 disjoint pairs
    seen += s.results.size();
  }
  CHECK(seen == d.results.size());
  // Two failing pairs on four different hosts run together; out-of-range indexes are ignored.
  const auto two = retest_steps(d, {0, d.results.size() - 1, d.results.size() + 5});
  REQUIRE(two.size() == 1);
  CHECK(two[0].results.size() == 2);
  // Another transport never shares a step.
  d.transports.push_back("uring");
  d.results.back().transport = 1;
  CHECK(retest_steps(d, {0, d.results.size() - 1}).size() == 2);
  CHECK(retest_steps(d, {}).empty());
}

TEST_CASE("suspects: one host's pairs fail, it is named with the evidence", "[fleet][suspect]") {
  // node3 slow both ways, and one stray slow pair elsewhere.
  FleetDoc d = fleet_doc(
      6, 1, 9.5, [](uint32_t s, uint32_t t) { return s == 3 || t == 3 || (s == 0 && t == 1); });
  const auto v = judge(parse_fleet_checks("pair.throughput>=0.9*line"), d);
  const SuspectAnalysis a = find_suspects(d, v);
  CHECK(a.failing == 11);
  CHECK(a.pairs == 30);
  REQUIRE(a.suspects.size() == 1);
  const Suspect& s = a.suspects[0];
  CHECK(s.host == "node3");
  CHECK(s.kind == "adapter");  // its only adapter
  CHECK(s.adapter == "ens1f0");
  CHECK(s.failing == 10);
  CHECK(s.pairs == 10);
  CHECK(s.others_failing == 1);
  CHECK(s.others == 20);
  CHECK(s.check == "pair.throughput>=0.9*line");
  CHECK(s.evidence ==
        "node3 ens1f0: 10 of 10 pairs fail pair.throughput>=0.9*line; pairs without it: 1 of 20 "
        "fail");
  CHECK_THAT(a.summary, Catch::Contains("11 of 30 pairs fail; suspect: node3 ens1f0; the rest: "
                                        "1 failing pair: either end"));
  const std::string text = fleet_text(d, v);
  CHECK_THAT(text, Catch::Contains("suspects: 11 of 30 pairs fail") &&
                       Catch::Contains("  node3 ens1f0: 10 of 10 pairs fail"));
  const auto j = fleet_json(d, v);
  CHECK(j["suspects"]["named"][0]["host"] == "node3");
  CHECK(j["suspects"]["named"][0]["ranks"] == nlohmann::json::array({3}));
}

TEST_CASE("suspects: one adapter of a host, its other adapter clean", "[fleet][suspect]") {
  // 8 hosts, 2 ranks each (one per adapter); node7's ens1f1 (rank 15) slow.
  FleetDoc d = fleet_doc(8, 2, 9.5, [](uint32_t s, uint32_t t) { return s == 15 || t == 15; });
  // One of its pairs passes all the same.
  for (PairResult& r : d.results)
    if (r.pair.src == 15 && r.pair.dst == 0) r.throughput_bps = 9.5e9;
  const auto v = judge(parse_fleet_checks("pair.throughput>=0.9*line"), d);
  const SuspectAnalysis a = find_suspects(d, v);
  REQUIRE(a.suspects.size() == 1);
  const Suspect& s = a.suspects[0];
  CHECK(s.kind == "adapter");
  CHECK(s.host == "node7");
  CHECK(s.adapter == "ens1f1");
  CHECK(s.ranks == std::vector<uint32_t>{15});
  CHECK(s.failing == 27);
  CHECK(s.pairs == 28);
  CHECK(s.clean == "ens1f0 (0 of 28)");
  CHECK_THAT(s.evidence, Catch::StartsWith("node7 ens1f1: 27 of 28 pairs fail "
                                           "pair.throughput>=0.9*line; its other adapter "
                                           "ens1f0 (0 of 28) clean"));
}

TEST_CASE("suspects: none in a clean fleet, none when every pair fails, ties", "[fleet][suspect]") {
  const auto checks = parse_fleet_checks("pair.throughput>=0.9*line");
  FleetDoc clean = fleet_doc(4, 1, 9.5);
  SuspectAnalysis a = find_suspects(clean, judge(checks, clean));
  CHECK(a.failing == 0);
  CHECK(a.suspects.empty());
  CHECK(a.summary == "no pair fails: no suspect");
  // The whole fabric at half speed: no host stands out.
  FleetDoc half = fleet_doc(4, 1, 5);
  a = find_suspects(half, judge(checks, half));
  CHECK(a.failing == 12);
  CHECK(a.suspects.empty());
  CHECK_THAT(a.summary, Catch::Contains("spread"));
  // The link between node0 and node1 slow both ways: the pair, not either host.
  FleetDoc link = fleet_doc(4, 1, 9.5, [](uint32_t s, uint32_t t) { return s + t == 1; });
  a = find_suspects(link, judge(checks, link));
  REQUIRE(a.suspects.size() == 1);
  CHECK(a.suspects[0].kind == "pair");
  CHECK(a.suspects[0].host == "node0 <-> node1");
  CHECK(a.suspects[0].failing == 2);
  // Two hosts level with failures beyond each other: neither is named.
  FleetDoc two = fleet_doc(6, 1, 9.5, [](uint32_t s, uint32_t t) {
    return (s == 0 && t == 2) || (s == 0 && t == 3) || (s == 1 && t == 4) || (s == 1 && t == 5);
  });
  a = find_suspects(two, judge(checks, two));
  CHECK(a.suspects.empty());
  // A pair not measured counts as failing without checks too.
  FleetDoc dead = fleet_doc(4, 1, 9.5);
  for (PairResult& r : dead.results)
    if (r.pair.src == 2 || r.pair.dst == 2) r.ok = false;
  a = find_suspects(dead, {});
  REQUIRE(a.suspects.size() == 1);
  CHECK(a.suspects[0].host == "node2");
  CHECK(a.suspects[0].check == "not measured");
}

TEST_CASE("compare pairs cells by host and adapter, not by rank", "[fleet][compare]") {
  const FleetDoc a = fleet_doc(4, 2, 9.5);
  // The same fleet launched in another order: rank r of a is rank (r + 3) % 8 of b, and the
  // link node1 ens1f0 -> node2 ens1f1 (a's ranks 2 -> 5) halved.
  FleetDoc b = fleet_doc(4, 2, 9.5);
  auto to_b = [](uint32_t r) { return (r + 3) % 8; };
  for (uint32_t r = 0; r < 8; ++r) {
    b.roster[to_b(r)] = a.roster[r];
    b.roster[to_b(r)].rank = to_b(r);
  }
  for (PairResult& p : b.results) {
    p.pair = {to_b(p.pair.src), to_b(p.pair.dst)};
    if (p.pair.src == to_b(2) && p.pair.dst == to_b(5)) p.throughput_bps /= 2;
  }
  const auto by_host = ranks_by_host(a, b);
  for (uint32_t r = 0; r < 8; ++r)
    CHECK(by_host[r] == to_b(r));
  const auto r = compare_runs(a, "a", b, "b");
  REQUIRE(r.size() == 1);
  for (uint32_t s = 0; s < 8; ++s)
    for (uint32_t t = 0; t < 8; ++t) {
      INFO(s << "->" << t);
      if (s / 2 == t / 2)
        CHECK_FALSE(r[0].ratio[s][t].has_value());
      else
        CHECK(*r[0].ratio[s][t] == Approx(s == 2 && t == 5 ? 0.5 : 1.0));
    }
  CHECK_THAT(ratios_text(r), Catch::Contains("lowest 2->5 0.500") &&
                                 Catch::Contains("ranks of a socket by host in b socket: 0=3 1=4"));
  CHECK(ratios_json(r)["fleet_compare"][0]["b_rank"][0] == 3);
  // The one pair that moved, listed.
  CHECK_THAT(ratios_text(r), Catch::Contains("moved beyond 10%: 1 pair: 2->5 0.500\n"));
  const auto j = ratios_json(r)["fleet_compare"][0];
  CHECK(j["moved_count"] == 1);
  CHECK(j["moved"][0]["src"] == 2);
  CHECK(j["moved"][0]["dst"] == 5);
}

TEST_CASE("checks against a baseline: the same pair by host, a pair it lacks named",
          "[fleet][baseline]") {
  const auto checks = parse_fleet_checks("pair.throughput>=0.95*baseline");
  REQUIRE(checks[0].ref == "baseline");
  // The baseline ran the same hosts in reverse rank order, all at 9.5 Gbit/s.
  FleetDoc base = fleet_doc(3, 1, 9.5);
  for (Member& m : base.roster)
    m.host = "node" + std::to_string(2 - m.rank);
  // Now node0 -> node2 (ranks 0 -> 2 here) runs at 1 Gbit/s.
  FleetDoc now = fleet_doc(3, 1, 9.5, [](uint32_t s, uint32_t t) { return s == 0 && t == 2; });
  auto v = judge(checks, now, &base);
  for (size_t i = 0; i < v.size(); ++i) {
    const Pair p = now.results[i].pair;
    INFO(p.src << "->" << p.dst << ": " << v[i].detail);
    CHECK(v[i].passed == !(p.src == 0 && p.dst == 2));
  }
  // A host the baseline never saw: its pairs fail, named; no baseline at all: every pair.
  now.roster[1].host = "node9";
  v = judge(checks, now, &base);
  for (size_t i = 0; i < v.size(); ++i) {
    const Pair p = now.results[i].pair;
    if (p.src != 1 && p.dst != 1) continue;
    CHECK_FALSE(v[i].passed);
    CHECK_THAT(v[i].detail, Catch::Contains("no baseline for " + std::to_string(p.src) + "->" +
                                            std::to_string(p.dst)));
  }
  for (const auto& x : judge(checks, now))
    CHECK_FALSE(x.passed);
}
