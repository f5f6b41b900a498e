// The text output of a big fleet: above kTextMatrixMaxRanks ranks, the pairs' distribution, the
// worst ranks and pairs and the group matrix instead of the N x N matrix, the roster by state.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "fleet/checks.hpp"
#include "fleet/render.hpp"

using namespace mtperf::fleet;

namespace {

// `n` ranks in groups of `group` (leaf0, leaf1, ...), every ordered pair measured at 9 to 9.9
// Gbit/s; rank `slow`'s pairs both ways at 2 Gbit/s, pair 1->3 failed, rank 5 never joined,
// rank 7 lost (its pairs as client failed).
FleetDoc big_fleet(uint32_t n, uint32_t group, uint32_t slow) {
  FleetDoc d;
  for (uint32_t r = 0; r < n; ++r) {
    Member m;
    m.rank = r;
    m.host = "node" + std::to_string(r);
    m.joined = r != 5;
    m.lost = r == 7 ? "killed" : "";
    m.group = "leaf" + std::to_string(r / group);
    m.speed_bps = 10e9;
    d.roster.push_back(m);
  }
  d.groups_from = "file";
  d.transports = {"socket"};
  d.workload = "stream";
  d.complete = true;
  d.results.reserve(size_t(n) * n);
  for (uint32_t s = 0; s < n; ++s)
    for (uint32_t t = 0; t < n; ++t) {
      if (s == t || s == 5 || t == 5) continue;
      PairResult r;
      r.pair = {s, t};
      r.ok = s != 7 && !(s == 1 && t == 3);
      r.error = r.ok ? "" : "refused";
      r.throughput_bps = r.throughput_c2s_bps =
          s == slow || t == slow ? 2e9 : (9 + 0.1 * ((s * 7 + t * 3) % 10)) * 1e9;
      d.results.push_back(r);
    }
  return d;
}

size_t lines(const std::string& s) {
  return size_t(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST_CASE("text above the threshold: distribution, worst ranks and pairs, groups, no matrix",
          "[fleet][render]") {
  const FleetDoc d = big_fleet(kTextMatrixMaxRanks + 8, 10, 13);
  const std::string text = fleet_text(d, {});
  CHECK(text.find("from\\to         0") == std::string::npos);  // no rank matrix
  CHECK_THAT(text, Catch::Contains("roster: 38 ranks joined and in the fleet at its end, 1 lost, "
                                   "1 never joined"));
  CHECK_THAT(text, Catch::Contains("  LOST: 7 node7 (killed)\n"));
  CHECK_THAT(text, Catch::Contains("  never joined: ranks 5\n"));
  CHECK_THAT(text, Catch::Contains("  groups (file, 4): leaf0 10 ranks 0-9; leaf1 10 ranks "
                                   "10-19; leaf2 10 ranks 20-29; leaf3 10 ranks 30-39\n"));
  CHECK_THAT(text, Catch::Contains("  pairs: 1443 measured, 39 failed; min 2 p1 2 p10 9"));
  // The planted slow rank is the worst, as client and as server; its pairs the worst measured.
  CHECK_THAT(text, Catch::Contains("as client  as server  group\n      13  node13                  "
                                   "      2          2  leaf1\n"));
  const size_t worst = text.find("worst 10 measured pairs, Gbit/s:\n");
  REQUIRE(worst != std::string::npos);
  const std::string first = text.substr(worst, text.find('\n', text.find('\n', worst) + 1) - worst);
  CHECK_THAT(first, Catch::Contains("node13") && Catch::EndsWith("  2"));
  CHECK_THAT(text, Catch::Contains("by group: the median of the pairs between them (pairs)"));
  CHECK_THAT(text, Catch::Contains("failed pairs: 39\n"));
  // The failing checks: the first 20 named, the rest counted.
  const auto v = judge(parse_fleet_checks("pair.throughput>=8G"), d);
  const std::string checked = fleet_text(d, v);
  CHECK_THAT(checked, Catch::Contains("checks: 1368 of 1482 pairs passed\n"));
  CHECK_THAT(checked, Catch::Contains("  and 94 more failing pairs (the JSON and JUnit outputs "
                                      "list them all)\n"));
  CHECK_THAT(checked, Catch::Contains("suspects: "));
  // At the threshold the matrix is still there.
  const std::string small = fleet_text(big_fleet(kTextMatrixMaxRanks, 10, 13), {});
  CHECK_THAT(small, Catch::Contains("  from\\to         0         1"));
  CHECK(small.find("roster: ") == std::string::npos);
}

TEST_CASE("text at 1,024 ranks: bounded, the slow rank named", "[fleet][render]") {
  const FleetDoc d = big_fleet(1024, 32, 700);
  const std::string text = fleet_text(d, {});
  INFO(text.substr(0, 4000));
  // One transport, one figure: the roster's lines, about 30 for the figure and a line per group.
  CHECK(lines(text) < 100);
  CHECK(text.size() < 64 * 1024);
  CHECK_THAT(text, Catch::Contains("as client  as server  group\n     700  node700                 "
                                   "      2          2  leaf21\n"));
  CHECK_THAT(text, Catch::Contains("  pairs: 1044483 measured, 1023 failed; min 2 p1 9"));
  CHECK_THAT(text, Catch::Contains("leaf31 32 ranks 992-1023\n"));
}
