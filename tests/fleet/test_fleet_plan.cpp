// The fleet's pure parts: patterns, the launcher's environment, checks, renderers, recipes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "fleet/checks.hpp"
#include "fleet/compare.hpp"
#include "fleet/emit.hpp"
#include "fleet/launcher.hpp"
#include "fleet/pattern.hpp"
#include "fleet/render.hpp"
#include "tests/fleet/plan_checks.hpp"

using namespace mtperf::fleet;
using mtperf::fleet::testing::ordered;
using mtperf::fleet::testing::rounds_disjoint;

namespace {

void every_ordered_pair_once(const Plan& p, uint32_t n) {
  auto all = ordered(p);
  REQUIRE(all.size() == size_t(n) * (n - 1));
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = 0; b < n; ++b)
      if (a != b) CHECK(all.count({a, b}) == 1);
}

}  // namespace

TEST_CASE("all-pairs: the circle method, every ordered pair exactly once, rounds disjoint",
          "[fleet][pattern]") {
  for (uint32_t n : {2u, 3u, 4u, 5u, 8u, 16u, 17u}) {
    INFO("n = " << n);
    Plan p = all_pairs(n);
    CHECK(p.disjoint);
    CHECK(p.both_directions);
    CHECK(p.rounds.size() == (n % 2 ? n : n - 1));
    for (const Round& r : p.rounds)
      CHECK(r.pairs.size() == n / 2);
    CHECK(rounds_disjoint(p));
    every_ordered_pair_once(p, n);
    CHECK(p.ordered_pairs() == size_t(n) * (n - 1));
  }
  SECTION("64 ranks: 2,016 pairs in 63 rounds") {
    Plan p = make_plan("all-pairs", 64);
    size_t pairs = 0;
    for (const Round& r : p.rounds)
      pairs += r.pairs.size();
    CHECK(pairs == 2016);
    CHECK(p.rounds.size() == 63);
    CHECK(rounds_disjoint(p));
  }
}

TEST_CASE("shift: round d sends every rank to rank + d, all ordered pairs once",
          "[fleet][pattern]") {
  Plan p = make_plan("shift", 5);
  CHECK_FALSE(p.disjoint);
  REQUIRE(p.rounds.size() == 4);
  for (uint32_t d = 1; d < 5; ++d)
    for (uint32_t r = 0; r < 5; ++r)
      CHECK(p.rounds[d - 1].pairs[r] == Pair{r, (r + d) % 5});
  every_ordered_pair_once(p, 5);
}

TEST_CASE("incast and one-to-many: K peers around one rank, every rank once the centre",
          "[fleet][pattern]") {
  Plan in = make_plan("incast:3", 6);
  Plan out = make_plan("one-to-many:2", 6);
  REQUIRE(in.rounds.size() == 6);
  for (uint32_t r = 0; r < 6; ++r) {
    REQUIRE(in.rounds[r].pairs.size() == 3);
    for (const Pair& x : in.rounds[r].pairs)
      CHECK(x.dst == r);
    for (const Pair& x : out.rounds[r].pairs)
      CHECK(x.src == r);
  }
  CHECK_THROWS_WITH(make_plan("incast:6", 6), Catch::Contains("1..5"));
  CHECK_THROWS_WITH(make_plan("incast", 6), Catch::Contains("give K"));
  CHECK_THROWS_WITH(make_plan("incast:x", 6), Catch::Contains("whole number"));
}

TEST_CASE("bisection: the two halves, one round, both directions", "[fleet][pattern]") {
  Plan p = make_plan("bisection", 6);
  REQUIRE(p.rounds.size() == 1);
  CHECK(p.rounds[0].pairs == std::vector<Pair>{{0, 3}, {1, 4}, {2, 5}});
  CHECK(rounds_disjoint(p));
  CHECK_THROWS_WITH(make_plan("bisection", 5), Catch::Contains("even"));
}

TEST_CASE("a pattern that does not exist or a fleet too small is named", "[fleet][pattern]") {
  CHECK_THROWS_WITH(make_plan("ring", 4), Catch::Contains("pattern ring: unknown"));
  CHECK_THROWS_WITH(make_plan("all-pairs", 1), Catch::Contains("at least 2 ranks"));
}

TEST_CASE("a pair file: rounds by number, ranks or host names, errors by line",
          "[fleet][pattern]") {
  const std::vector<std::string> hosts = {"n0", "n1", "n2", "n3"};
  Plan p = parse_pairs("# ClusterKit style\n2 n2 n3\n1 0 1\n1 2 3  # a comment\n\n2 1 0\n", hosts,
                       "my.pairs");
  REQUIRE(p.rounds.size() == 2);
  CHECK(p.rounds[0].pairs == std::vector<Pair>{{0, 1}, {2, 3}});
  CHECK(p.rounds[1].pairs == std::vector<Pair>{{2, 3}, {1, 0}});
  CHECK(p.disjoint);
  CHECK_FALSE(parse_pairs("1 0 1\n1 1 2\n", hosts).disjoint);
  CHECK_THROWS_WITH(parse_pairs("1 0 9\n", hosts, "f"), Catch::Contains("f line 1: rank 9"));
  CHECK_THROWS_WITH(parse_pairs("1 0 1\n1 nx 1\n", hosts, "f"),
                    Catch::Contains("f line 2: 'nx' is neither a rank nor a host"));
  CHECK_THROWS_WITH(parse_pairs("1 0\n", hosts, "f"),
                    Catch::Contains("expected '<round> <a> <b>'"));
  CHECK_THROWS_WITH(parse_pairs("1 2 2\n", hosts, "f"), Catch::Contains("with itself"));
  CHECK_THROWS_WITH(parse_pairs("# nothing\n", hosts, "f"), Catch::Contains("no pair"));
}

TEST_CASE("schedule: rounds in order, transports alternated, isolated one pair a step",
          "[fleet][pattern]") {
  Plan p = all_pairs(4);
  auto steps = schedule(p, 2, Concurrency::round);
  REQUIRE(steps.size() == 3 * 2 * 2);  // rounds x transports x directions
  CHECK(steps[0].transport == 0);
  CHECK(steps[2].transport == 1);
  CHECK(steps[4].transport == 1);  // round 1 reversed
  CHECK(steps[1].pairs[0] == Pair{steps[0].pairs[0].dst, steps[0].pairs[0].src});
  auto iso = schedule(p, 1, Concurrency::isolated);
  CHECK(iso.size() == 12);
  for (const Step& s : iso)
    CHECK(s.pairs.size() == 1);
}

TEST_CASE("the launcher: Slurm, Open MPI, MPICH, Kubernetes, by hand", "[fleet][launcher]") {
  LaunchGiven none;
  SECTION("srun: SLURM_PROCID, the first node of the step coordinates") {
    Environment env = {{"SLURM_PROCID", "2"},
                       {"SLURM_NTASKS", "4"},
                       {"SLURM_STEP_NODELIST", "node[1-4]"},
                       {"SLURM_JOB_NODELIST", "other[1-8]"},
                       {"SLURM_JOB_ID", "17"},
                       {"SLURM_STEP_ID", "0"}};
    Launch l = detect_launch(env, none);
    CHECK(l.launcher == "Slurm");
    CHECK(l.rank == 2);
    CHECK(l.size == 4);
    CHECK(l.coordinator == "node1");
    CHECK(l.job == "17.0");
    CHECK_THAT(l.why, Catch::Contains("SLURM_PROCID=2") && Catch::Contains("SLURM_STEP_NODELIST"));
  }
  SECTION("mpirun inside an allocation: the MPI rank wins over SLURM_PROCID") {
    Environment env = {{"SLURM_PROCID", "0"},
                       {"SLURM_NTASKS", "2"},
                       {"SLURM_JOB_NODELIST", "node[1-2]"},
                       {"OMPI_COMM_WORLD_RANK", "3"},
                       {"OMPI_COMM_WORLD_SIZE", "4"}};
    LaunchGiven g;
    g.rendezvous = "/shared/r";
    Launch l = detect_launch(env, g);
    CHECK(l.launcher == "Open MPI");
    CHECK(l.rank == 3);
    CHECK(l.size == 4);
    CHECK_THAT(l.why, Catch::Contains("SLURM_PROCID=0 is ignored"));
  }
  SECTION("MPICH's PMI") {
    Launch l = detect_launch({{"PMI_RANK", "1"}, {"PMI_SIZE", "3"}}, LaunchGiven{{}, {}, "h0", ""});
    CHECK(l.launcher == "MPICH/PMI");
    CHECK(l.coordinator == "h0");
  }
  SECTION("a Kubernetes Indexed Job needs --size") {
    CHECK_THROWS_WITH(detect_launch({{"JOB_COMPLETION_INDEX", "1"}}, none),
                      Catch::Contains("--size"));
    Launch l =
        detect_launch({{"JOB_COMPLETION_INDEX", "1"}}, LaunchGiven{{}, 8u, "fleet-0.fleet", ""});
    CHECK(l.launcher == "Kubernetes");
    CHECK(l.rank == 1);
    CHECK(l.size == 8);
  }
  SECTION("by hand, and what is missing") {
    Launch l = detect_launch({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}},
                             LaunchGiven{0u, 2u, "", ""});
    CHECK(l.launcher == "command line");
    CHECK(l.rank == 0);
    CHECK_THROWS_WITH(detect_launch({}, none), Catch::Contains("no launcher found"));
    CHECK_THROWS_WITH(
        detect_launch({{"PMI_RANK", "0"}, {"PMI_SIZE", "3"}}, LaunchGiven{{}, 4u, "h", ""}),
        Catch::Contains("--size 4 but MPICH/PMI says 3"));
    CHECK_THROWS_WITH(detect_launch({}, LaunchGiven{1u, {}, "", ""}),
                      Catch::Contains("--rank needs --size"));
    CHECK_THROWS_WITH(detect_launch({}, LaunchGiven{4u, 4u, "h", ""}),
                      Catch::Contains("rank 4 is outside 0..3"));
    CHECK_THROWS_WITH(detect_launch({}, LaunchGiven{1u, 4u, "", ""}),
                      Catch::Contains("--coordinator"));
    CHECK_THROWS_WITH(
        detect_launch({{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "2"}}, none),
        Catch::Contains("OMPI_COMM_WORLD_RANK=x"));
  }
}

TEST_CASE("--per-host: each rank of a host takes its adapter by its local rank",
          "[fleet][launcher]") {
  Launch slurm = detect_launch({{"SLURM_PROCID", "5"},
                                {"SLURM_NTASKS", "8"},
                                {"SLURM_LOCALID", "1"},
                                {"SLURM_STEP_NODELIST", "n[1-4]"}},
                               {});
  CHECK(slurm.local_rank == 1);
  Launch ompi = detect_launch({{"OMPI_COMM_WORLD_RANK", "3"},
                               {"OMPI_COMM_WORLD_SIZE", "4"},
                               {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                               {"SLURM_PROCID", "1"},
                               {"SLURM_NTASKS", "2"},
                               {"SLURM_LOCALID", "0"}},
                              LaunchGiven{{}, {}, "h", ""});
  CHECK(ompi.local_rank == 1);  // mpirun's, not its helper's
  CHECK(bind_of({"10.0.0.1", "10.0.1.1"}, 2, 1) == "10.0.1.1");
  CHECK_THROWS_WITH(bind_of({"10.0.0.1"}, 2, 0), Catch::Contains("takes 2 --bind addresses"));
  CHECK_THROWS_WITH(bind_of({"a", "b"}, 2, 2), Catch::Contains("rank 2 of its host"));
}

TEST_CASE("Slurm host lists", "[fleet][launcher]") {
  CHECK(expand_hostlist("node[1-3,7],gpu[08-10],login") ==
        std::vector<std::string>{"node1", "node2", "node3", "node7", "gpu08", "gpu09", "gpu10",
                                 "login"});
  CHECK(expand_hostlist("rack[1-2]n[1-2]") ==
        std::vector<std::string>{"rack1n1", "rack1n2", "rack2n1", "rack2n2"});
  CHECK(expand_hostlist("solo") == std::vector<std::string>{"solo"});
  CHECK_THROWS_WITH(expand_hostlist("n[1-"), Catch::Contains("without ']'"));
  CHECK_THROWS_WITH(expand_hostlist("n[5-2]"), Catch::Contains("backwards"));
  CHECK_THROWS_WITH(expand_hostlist("n[a-b]"), Catch::Contains("not a number"));
  CHECK_THROWS_WITH(expand_hostlist("n[1-100000]", 1000), Catch::Contains("more than 1000"));
}

namespace {
FleetDoc three_rank_doc() {
  FleetDoc d;
  for (uint32_t r = 0; r < 3; ++r) {
    Member m;
    m.rank = r;
    m.host = "h" + std::to_string(r);
    m.joined = true;
    d.roster.push_back(m);
  }
  d.transports = {"socket"};
  d.workload = "stream";
  d.plan = all_pairs(3);
  d.complete = true;
  auto add = [&](uint32_t a, uint32_t b, double gbps, bool ok = true) {
    PairResult r;
    r.pair = {a, b};
    r.ok = ok;
    if (!ok) r.error = "connect to 10.0.0.2: refused";
    r.throughput_bps = r.throughput_c2s_bps = gbps * 1e9;
    r.c2s_sent = r.c2s_received = 1000;
    r.server_counted = true;
    d.results.push_back(r);
  };
  add(0, 1, 10);
  add(1, 0, 9.9);
  add(0, 2, 10);
  add(2, 0, 8);  // the slow one
  add(1, 2, 9.8);
  add(2, 1, 0, false);
  return d;
}
}  // namespace

TEST_CASE("checks: relative to the best pair, absolute, failed pairs fail", "[fleet][checks]") {
  FleetDoc d = three_rank_doc();
  auto checks = parse_fleet_checks("pair.throughput>=0.93*max, pair.throughput>=5G");
  REQUIRE(checks.size() == 2);
  auto v = judge(checks, d);
  REQUIRE(v.size() == 6);
  CHECK(v[0].passed);
  CHECK_FALSE(v[3].passed);
  CHECK_THAT(v[3].detail, Catch::Contains("pair.throughput>=0.93*max: 8G < 9.3G"));
  CHECK_FALSE(v[5].passed);
  CHECK_THAT(v[5].detail, Catch::Contains("not measured"));
  CHECK_THROWS_WITH(parse_fleet_checks("pair.speed>=1G"), Catch::Contains("unknown figure"));
  CHECK_THROWS_WITH(parse_fleet_checks("throughput>=1G"), Catch::Contains("pair.FIGURE"));
  CHECK_THROWS_WITH(parse_fleet_checks("pair.p99<=2*best"),
                    Catch::Contains("max, min, median, line or baseline"));
  CHECK_THROWS_WITH(parse_fleet_checks("pair.p99=3"), Catch::Contains(">="));
}

TEST_CASE("matrices, row and column figures, the renderers", "[fleet][render]") {
  FleetDoc d = three_rank_doc();
  Matrix m = matrix(d, 0, "throughput");
  CHECK(m[0][1] == 10e9);
  CHECK_FALSE(m[2][1].has_value());  // failed
  CHECK_FALSE(m[1][1].has_value());
  auto rows = row_stats(m);
  REQUIRE(rows.size() == 3);
  CHECK(rows[2].cells == 1);
  CHECK(rows[2].max == 8e9);
  auto cols = column_stats(m);
  CHECK(cols[0].min == 8e9);
  CHECK(byte_agreement(d).equal == 5);
  const std::string text = fleet_text(d, {});
  CHECK_THAT(text, Catch::Contains("socket: throughput, Gbit/s"));
  CHECK_THAT(text, Catch::Contains("slowest pairs (throughput): 2->1 failed 2->0 8"));
  CHECK_THAT(text, Catch::Contains("5 of 5 measured pairs with sender and receiver counts equal"));
  auto j = fleet_json(d, judge(parse_fleet_checks("pair.throughput>=9G"), d));
  CHECK(j["matrices"]["socket"]["throughput"]["cells"][0][1] == 10e9);
  CHECK(j["matrices"]["socket"]["throughput"]["cells"][2][1].is_null());
  CHECK(j["checks"][3]["passed"] == false);
  FleetDoc back = fleet_from_json(j);
  CHECK(back.results.size() == d.results.size());
  CHECK(back.roster[2].host == "h2");
  CHECK(fleet_csv(d).find("socket,0,0,2,1,h2,h1,0,") != std::string::npos);
  const std::string mg = fleet_mpigraph(d);
  CHECK_THAT(mg, Catch::StartsWith("START mpiGraph (mtperf fleet, transport socket)\nMsgSize\t"));
  CHECK_THAT(mg, Catch::Contains("\nSend\th0:0\th1:1\th2:2\t\n"));
  // 10 Gbit/s = 1.25e9 B/s = 1192.093 MB/s of 2^20 bytes; 2->1 failed.
  CHECK_THAT(mg, Catch::Contains("\nh0:0 to\t0.000\t1192.093\t1192.093\t\n"));
  CHECK_THAT(mg, Catch::Contains("\nh1:1 from\t1192.093\t0.000\t0.000\t\n"));
  CHECK_THAT(mg, Catch::EndsWith("\n\nEND mpiGraph\n"));
  // JUnit: a testcase per host (h1 and h2 share the failed pair 2->1), then the failing pair.
  const std::string junit = fleet_junit(d, {});
  CHECK_THAT(junit, Catch::Contains("<testsuites name=\"mtperf fleet "));
  CHECK_THAT(junit, Catch::Contains("<testsuite name=\"hosts\" tests=\"3\" failures=\"2\">"));
  CHECK_THAT(junit, Catch::Contains("<testcase classname=\"hosts\" name=\"h0 (rank 0)\"/>"));
  CHECK_THAT(junit,
             Catch::Contains("name=\"h1 (rank 1)\">\n      <failure message=\"1 of 4 "
                             "pairs failed, first stream 2-&gt;1 (h2 -&gt; h1) over socket: "));
  CHECK_THAT(junit, Catch::Contains("<testsuite name=\"failing pairs\" tests=\"1\" "
                                    "failures=\"1\" pairs=\"6\">"));
  CHECK_THAT(junit, Catch::Contains("<testcase classname=\"socket\" name=\"stream 2-&gt;1 (h2 "
                                    "-&gt; h1)\">"));
  CHECK_THAT(junit, Catch::EndsWith("</testsuites>\n"));
}

TEST_CASE("launch recipes: sbatch, mpirun, pdsh, a Kubernetes Indexed Job", "[fleet][emit]") {
  EmitOptions o;
  o.size = 4;
  o.args = {"-w", "stream", "-T", "socket,uring", "--check", "pair.throughput>=0.9*max"};
  o.kind = "slurm";
  const std::string s = emit(o);
  CHECK_THAT(s, Catch::Contains("#SBATCH --nodes=4") && Catch::Contains("--ntasks-per-node=1"));
  CHECK_THAT(s, Catch::Contains("srun --nodes=4 --ntasks-per-node=1 mtperf fleet -w stream -T "
                                "socket,uring --check 'pair.throughput>=0.9*max'"));
  // Every shell recipe makes the key file (this user's alone) before the ranks start, and hands
  // it over as a file: the key itself is never in the recipe nor on a command line.
  auto keyed_by_file = [](const std::string& r) {
    CHECK_THAT(r, Catch::Contains("umask 077") && Catch::Contains("head -c 32 /dev/urandom"));
    CHECK_THAT(r, Catch::Contains("--key-file") && !Catch::Contains("--key ") &&
                      !Catch::Contains("MTPERF_KEY=") && !Catch::Contains("--insecure"));
    CHECK(r.find("--key-file") > r.find("umask 077"));
  };
  keyed_by_file(s);
  o.kind = "mpirun";
  CHECK_THAT(emit(o), Catch::Contains("mpirun -np 4") && Catch::Contains("--rendezvous"));
  keyed_by_file(emit(o));
  o.kind = "pdsh";
  CHECK_THAT(emit(o), Catch::Contains("--rank %n --size 4"));
  keyed_by_file(emit(o));
  o.kind = "kubernetes";
  o.key_secret = "fleet-key";
  const std::string k = emit(o);
  CHECK_THAT(k, Catch::Contains("completionMode: Indexed") && Catch::Contains("completions: 4"));
  CHECK_THAT(k, Catch::Contains("hostNetwork: true") && Catch::Contains("clusterIP: None"));
  CHECK_THAT(k, Catch::Contains("- mtperf-fleet-0.mtperf-fleet"));
  CHECK_THAT(k, Catch::Contains("secretName: fleet-key") && Catch::Contains("defaultMode: 0400"));
  CHECK_THAT(k, Catch::Contains("- --key-file\n        - /etc/mtperf-key/key\n") &&
                    Catch::Contains("mountPath: /etc/mtperf-key"));
  CHECK_THAT(k, !Catch::Contains("$(MTPERF_KEY)") && !Catch::Contains("- --key\n"));
  o.key_secret.clear();
  CHECK_THAT(emit(o), Catch::Contains("secretName: mtperf-fleet-key"));
  o.kind = "ansible";
  CHECK_THROWS_WITH(emit(o), Catch::Contains("one of slurm, mpirun, kubernetes, pdsh"));
  CHECK(shell_quote("a b'c") == "'a b'\\''c'");
}

TEST_CASE("a pattern is checked before the size is known, without building it",
          "[fleet][pattern]") {
  CHECK_NOTHROW(check_pattern("all-pairs"));
  CHECK_NOTHROW(check_pattern("incast:8"));
  CHECK_THROWS_WITH(check_pattern("incast"), Catch::Contains("give K"));
  CHECK_THROWS_WITH(check_pattern("one-to-many:0"), Catch::Contains("K = 0"));
  CHECK_THROWS_WITH(check_pattern("star"), Catch::Contains("unknown"));
}

TEST_CASE("fleet runs compared pair by pair, and transports within one run", "[fleet][compare]") {
  FleetDoc a = three_rank_doc();
  FleetDoc b = three_rank_doc();
  b.results[3].throughput_bps = 4e9;  // 2->0 halved
  auto r = compare_runs(a, "before", b, "after");
  REQUIRE(r.size() == 1);
  CHECK(r[0].ratio[2][0] == Approx(0.5));
  CHECK(r[0].ratio[0][1] == Approx(1.0));
  CHECK_FALSE(r[0].ratio[2][1].has_value());  // failed in both
  CHECK_THAT(ratios_text(r), Catch::Contains("lowest 2->0 0.500"));
  CHECK(ratios_json(r)["fleet_compare"][0]["ratio"][2][0] == Approx(0.5));
  b.roster.pop_back();  // h2 not in y: its cells empty, the others compared
  const auto missing = compare_runs(a, "x", b, "y");
  CHECK_FALSE(missing[0].ratio[0][2].has_value());
  CHECK(missing[0].ratio[0][1] == Approx(1.0));
  FleetDoc other = three_rank_doc();
  for (Member& m : other.roster)
    m.host = "x" + m.host;
  CHECK_THROWS_WITH(compare_runs(a, "x", other, "y"), Catch::Contains("no host in common"));
  CHECK_THROWS_WITH(compare_transports(a), Catch::Contains("one transport only"));
  FleetDoc two = three_rank_doc();
  two.transports.push_back("uring");
  PairResult u = two.results[0];
  u.transport = 1;
  u.throughput_bps = 12e9;
  two.results.push_back(u);
  auto t = compare_transports(two);
  REQUIRE(t.size() == 1);
  CHECK(t[0].ratio[0][1] == Approx(1.2));
}
