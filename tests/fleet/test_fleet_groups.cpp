// Groups and the patterns that follow them: the groups file, Slurm's topology, within-group,
// across-groups and rail plans, the group matrix, a suspect's group.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <set>
#include <string>

#include "fleet/group_matrix.hpp"
#include "fleet/group_plan.hpp"
#include "fleet/groups.hpp"
#include "fleet/model.hpp"
#include "fleet/suspect.hpp"
#include "tests/fleet/plan_checks.hpp"

using namespace mtperf::fleet;
using mtperf::fleet::testing::ordered;
using mtperf::fleet::testing::rounds_disjoint;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// Group sizes -> each rank's group, the groups' ranks consecutive.
std::vector<uint32_t> groups_of(const std::vector<uint32_t>& sizes) {
  std::vector<uint32_t> out;
  for (uint32_t g = 0; g < sizes.size(); ++g)
    out.insert(out.end(), sizes[g], g);
  return out;
}

const std::vector<std::string> kHosts = {"node1", "node2", "node3", "node4"};

}  // namespace

TEST_CASE("groups file: HOST GROUP lines, comments, other hosts ignored", "[fleet][groups]") {
  const std::string text =
      "# rack map of the site\n"
      "node1 leaf1\n"
      "  node2\tleaf1   # trailing comment\n"
      "\n"
      "node3.cluster.example leaf2\r\n"
      "node4 leaf2\n"
      "node99 leaf7\n";  // not in this fleet
  const std::vector<std::string> hosts = {"node1", "node2", "node3.cluster.example", "node4.lan"};
  CHECK(parse_groups(text, hosts) == std::vector<std::string>{"leaf1", "leaf1", "leaf2", "leaf2"});
  // Two ranks of one host (--per-host 2) share its group.
  CHECK(parse_groups("a g1\nb g2\n", {"a", "a", "b", "b"}) ==
        std::vector<std::string>{"g1", "g1", "g2", "g2"});
}

TEST_CASE("groups file: hostile input is named by its line", "[fleet][groups]") {
  CHECK_THAT(
      error_of([] { parse_groups("node1 a\n" + std::string(2000, 'x') + "\n", kHosts, "g.txt"); }),
      Catch::Contains("g.txt line 2: longer than 1024 bytes"));
  CHECK_THAT(error_of([] { parse_groups("node1 a\nnode2 b\nnode1 c\n", kHosts, "g.txt"); }),
             Catch::Contains("g.txt line 3: host node1 is already on line 1"));
  CHECK_THAT(error_of([] { parse_groups("node1 a b\n", kHosts, "g.txt"); }),
             Catch::Contains("g.txt line 1: expected 'HOST GROUP', got 3 words"));
  CHECK_THAT(error_of([] { parse_groups("node1\n", kHosts, "g.txt"); }),
             Catch::Contains("got 1 words"));
  CHECK_THAT(error_of([] { parse_groups("node1 " + std::string(200, 'g') + "\n", kHosts); }),
             Catch::Contains("at most 128 bytes"));
  CHECK_THAT(error_of([] {
               parse_groups(
                   "node1 le\x01"
                   "af\n",
                   kHosts);
             }),
             Catch::Contains("outside visible ASCII"));
  // Unknown hosts are a site's others; the fleet's hosts missing are named.
  const std::string missing =
      error_of([] { parse_groups("node1 a\nnode7 b\nnode8 b\n", kHosts, "g.txt"); });
  CHECK_THAT(missing,
             Catch::Contains("g.txt: no group for 3 hosts of the fleet: node2, node3, node4"));
  CHECK_THAT(error_of([] { parse_groups(std::string(kMaxGroupsFileBytes + 1, '#'), kHosts); }),
             Catch::Contains("larger than"));
  // A rank that never joined (no host) needs no group.
  CHECK(parse_groups("node1 a\nnode2 a\n", {"node1", "", "node2"}) ==
        std::vector<std::string>{"a", "", "a"});
}

TEST_CASE("Slurm topology: scontrol show topology's leaf switches are the groups",
          "[fleet][groups]") {
  // As slurmctld 22.05 prints it for a topology.conf of two leaves under a spine.
  const std::string out =
      "SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=node[1-2]\n"
      "SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=node[3-4],gpu01\n"
      "SwitchName=spine Level=1 LinkSpeed=1 Switches=leaf[1-2]\n";
  CHECK(parse_slurm_topology(out, kHosts) ==
        std::vector<std::string>{"leaf1", "leaf1", "leaf2", "leaf2"});
  CHECK(parse_slurm_topology(out, {"node4", "gpu01.example"}) ==
        std::vector<std::string>{"leaf2", "leaf2"});
  CHECK_THAT(error_of([&] {
               parse_slurm_topology(out, {"node1", "node5"});
             }),
             Catch::Contains("no group for 1 host of the fleet: node5"));
  CHECK_THAT(error_of([] {
               parse_slurm_topology(
                   "SwitchName=a Level=0 LinkSpeed=1 Nodes=node[1-2]\n"
                   "SwitchName=b Level=0 LinkSpeed=1 Nodes=node[2-4]\n",
                   kHosts);
             }),
             Catch::Contains("switch b: node node2 is under leaf switch a too"));
  CHECK_THAT(error_of([] { parse_slurm_topology("", kHosts); }),
             Catch::Contains("TopologyPlugin=topology/tree"));
  CHECK_THAT(error_of([] {
               parse_slurm_topology("SwitchName=a Level=0 LinkSpeed=1 Nodes=node[2-\n", kHosts);
             }),
             Catch::Contains("switch a: host list"));
}

TEST_CASE("LLDP: the chassis cabled to the rank's adapter", "[fleet][groups]") {
  // lldpcli -f json show neighbors (lldpd 1.0): one interface is an object, several a list; a
  // chassis with a name is keyed by it, one without carries its id directly.
  const std::string one = R"({"lldp": {"interface": {"eth0": {"via": "LLDP", "rid": "1",
      "chassis": {"leaf7.example": {"id": {"type": "mac", "value": "00:11:22:33:44:55"},
      "descr": "switch OS", "capability": [{"type": "Bridge", "enabled": true}]}},
      "port": {"id": {"type": "ifname", "value": "Ethernet12"}}}}}})";
  CHECK(lldp_chassis(one, "eth0") == "leaf7.example");
  CHECK(lldp_chassis(one, "") == "leaf7.example");  // the only one
  const std::string two = R"({"lldp": {"interface": [
      {"ens1f0": {"chassis": {"leaf1": {"id": {"type": "mac", "value": "aa"}}}}},
      {"ens1f1": {"chassis": {"leaf2": {"id": {"type": "mac", "value": "bb"}}}}},
      {"eno1": {"chassis": {"id": {"type": "mac", "value": "cc"}}}}]}})";
  CHECK(lldp_chassis(two, "ens1f1") == "leaf2");
  CHECK(lldp_chassis(two, "ens1f0") == "leaf1");
  CHECK(lldp_chassis(two, "eth9").empty());  // two named, neither the adapter
  CHECK(lldp_chassis(R"({"lldp": {}})", "eth0").empty());
  CHECK_THAT(error_of([] { lldp_chassis("not json", "eth0"); }), Catch::Contains("not JSON"));
  // The coordinator's side: each rank's declaration; a joined rank without one is named.
  GroupsSource lldp{"lldp", "", ""};
  CHECK(resolve_groups(lldp, {"a", "a", ""}, {"leaf1", "leaf2", ""}) ==
        std::vector<std::string>{"leaf1", "leaf2", ""});
  CHECK_THAT(error_of([&] {
               resolve_groups(lldp, {"a", "b"}, {"leaf1", ""});
             }),
             Catch::Contains("no LLDP neighbour's name from 1 rank(s): b (rank 1)"));
}

TEST_CASE("within-group: all pairs inside each group, the groups at once", "[fleet][pattern]") {
  for (const auto& sizes : std::vector<std::vector<uint32_t>>{{4, 4}, {3, 5, 1}, {2}, {6, 2, 3}}) {
    const auto group = groups_of(sizes);
    const Plan p = within_groups(group);
    size_t want = 0, rounds = 0;
    for (uint32_t s : sizes) {
      want += size_t(s) * (s - 1);
      if (s > 1) rounds = std::max<size_t>(rounds, s % 2 ? s : s - 1);
    }
    CHECK(p.pattern == "within-group");
    CHECK(p.ordered_pairs() == want);
    CHECK(p.rounds.size() == rounds);
    CHECK(rounds_disjoint(p));
    const auto all = ordered(p);
    CHECK(all.size() == want);
    for (uint32_t a = 0; a < group.size(); ++a)
      for (uint32_t b = 0; b < group.size(); ++b)
        if (a != b) CHECK(all.count({a, b}) == (group[a] == group[b] ? 1u : 0u));
  }
  CHECK_THAT(error_of([] {
               within_groups(groups_of({1, 1, 1}));
             }),
             Catch::Contains("no group has two ranks"));
  // A rank that never joined is in no group.
  const Plan p = within_groups({0, kNoGroup, 0, 0});
  CHECK(p.ordered_pairs() == 6);
}

TEST_CASE("across-groups: every rank meets one rank of every other group, both ways",
          "[fleet][pattern]") {
  for (const auto& sizes : std::vector<std::vector<uint32_t>>{
           {4, 4}, {2, 3, 5}, {1, 4}, {3, 3, 3, 3}, {2, 2, 2, 2, 2}}) {
    INFO("sizes " << sizes.size());
    const auto group = groups_of(sizes);
    const Plan p = across_groups(group);
    size_t want = 0;
    for (size_t a = 0; a < sizes.size(); ++a)
      for (size_t b = a + 1; b < sizes.size(); ++b)
        want += 2 * std::max(sizes[a], sizes[b]);
    CHECK(p.ordered_pairs() == want);
    CHECK(rounds_disjoint(p));
    const auto all = ordered(p);
    std::map<std::pair<uint32_t, uint32_t>, size_t> met;  // (rank, other group) as sender
    for (const auto& [a, b] : all) {
      CHECK(group[a] != group[b]);
      CHECK(all.count({a, b}) == 1);
      ++met[{a, group[b]}];
    }
    for (uint32_t r = 0; r < group.size(); ++r)
      for (uint32_t g = 0; g < sizes.size(); ++g)
        if (g != group[r]) CHECK(met[{r, g}] >= 1);
  }
  // G equal groups of s ranks: N(G-1) ordered pairs, G-1 rounds (G even).
  const Plan even = across_groups(groups_of({3, 3, 3, 3}));
  CHECK(even.ordered_pairs() == 12 * 3);
  CHECK(even.rounds.size() == 3);
  CHECK_THAT(error_of([] { across_groups(groups_of({4})); }),
             Catch::Contains("needs at least 2 groups"));
}

TEST_CASE("rail: adapter i of every host with adapter i of the others", "[fleet][pattern]") {
  const std::vector<std::string> hosts = {"a", "a", "b", "b", "c", "c", ""};
  const auto rails = rails_of(hosts);
  CHECK(rails == std::vector<uint32_t>{0, 1, 0, 1, 0, 1, kNoGroup});
  const Plan p = within_groups(rails, "rail");
  CHECK(p.pattern == "rail");
  CHECK(p.ordered_pairs() == 12);  // 2 rails of 3 hosts: 2 x 3 x 2
  for (const auto& [a, b] : ordered(p)) {
    CHECK(rails[a] == rails[b]);
    CHECK(hosts[a] != hosts[b]);
  }
}

TEST_CASE("group matrix: the median of the pairs between two groups", "[fleet][groups]") {
  FleetDoc d;
  d.transports = {"t"};
  for (uint32_t r = 0; r < 4; ++r) {
    Member m;
    m.rank = r;
    m.host = "node" + std::to_string(r + 1);
    m.joined = true;
    m.group = r < 2 ? "leaf1" : "leaf2";
    d.roster.push_back(m);
  }
  auto add = [&](uint32_t s, uint32_t t, double bps, bool ok = true) {
    PairResult r;
    r.pair = {s, t};
    r.ok = ok;
    r.throughput_bps = bps;
    d.results.push_back(r);
  };
  add(0, 1, 10e9);
  add(1, 0, 12e9);
  add(0, 2, 4e9);
  add(0, 3, 6e9);
  add(1, 2, 5e9);
  add(2, 0, 8e9, false);  // failed: not in the median
  add(3, 1, 9e9);
  const GroupMatrix g = group_matrix(d, 0, "throughput");
  REQUIRE(g.groups == std::vector<std::string>{"leaf1", "leaf2"});
  CHECK(*g.median[0][0] == Approx(11e9));
  CHECK(*g.median[0][1] == Approx(5e9));
  CHECK(g.pairs[0][1] == 3);
  CHECK(*g.median[1][0] == Approx(9e9));
  CHECK(!g.median[1][1]);
  const std::string text = group_matrix_text(g, 1e-9);
  CHECK_THAT(text,
             Catch::Contains("leaf1") && Catch::Contains("5 (3)") && Catch::Contains("11 (2)"));
  CHECK(to_json(g)["cells"][1][1].is_null());
  // Without groups: nothing.
  for (Member& m : d.roster)
    m.group.clear();
  CHECK(group_matrix(d, 0, "throughput").groups.empty());
  CHECK(group_matrix_text(group_matrix(d, 0, "throughput"), 1).empty());
}

TEST_CASE("a suspect's group is named; the document keeps each rank's group", "[fleet][groups]") {
  FleetDoc d;
  d.transports = {"t"};
  d.groups_from = "slurm";
  for (uint32_t r = 0; r < 6; ++r) {
    Member m;
    m.rank = r;
    m.host = "node" + std::to_string(r + 1);
    m.joined = true;
    m.group = r < 3 ? "leaf1" : "leaf2";
    d.roster.push_back(m);
  }
  // node5 (rank 4) fails every pair, the rest pass.
  for (uint32_t a = 0; a < 6; ++a)
    for (uint32_t b = 0; b < 6; ++b) {
      if (a == b) continue;
      PairResult r;
      r.pair = {a, b};
      r.ok = a != 4 && b != 4;
      r.error = r.ok ? "" : "refused";
      r.throughput_bps = 9e9;
      d.results.push_back(r);
    }
  const SuspectAnalysis s = find_suspects(d, {});
  REQUIRE(s.suspects.size() == 1);
  CHECK(s.suspects[0].host == "node5");
  CHECK(s.suspects[0].group == "leaf2");
  CHECK_THAT(s.suspects[0].evidence, Catch::StartsWith("node5 (group leaf2):"));
  const FleetDoc back = fleet_from_json(to_json(d));
  CHECK(back.roster[4].group == "leaf2");
  CHECK(back.groups_from == "slurm");
  CHECK(index_groups({"b", "a", "", "b"}).of == std::vector<uint32_t>{0, 1, UINT32_MAX, 0});
}
