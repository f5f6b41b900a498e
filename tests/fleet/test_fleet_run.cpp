// A whole fleet in one process over loopback: the coordinator on a thread, each rank's member on
// its own, every pair a real socket test; and the ranks that never join, vanish or hold the
// wrong key.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "control/protocol.hpp"
#include "fleet/checks.hpp"
#include "fleet/coordinator.hpp"
#include "fleet/figure_matrix.hpp"
#include "fleet/line.hpp"
#include "fleet/member.hpp"
#include "fleet/net.hpp"
#include "fleet/pair_run.hpp"
#include "fleet/protocol.hpp"
#include "fleet/render.hpp"
#include "fleet/results_log.hpp"
#include "tests/fleet/fleet_fixture.hpp"

using namespace mtperf;
using namespace mtperf::fleet;
using namespace mtperf::fleet::testing;

TEST_CASE("three ranks, all pairs over loopback: every cell filled, bytes equal each way",
          "[fleet][run]") {
  RunRequest r = short_stream();
  Coordinator c(coordinator_options(3, r));
  Members members(3);
  for (uint32_t i = 0; i < 3; ++i)
    members.start(i, member_options(i, 3, c.port(), r));
  FleetDoc d = c.run();
  members.join();
  for (const auto& e : members.errors)
    CHECK(e.empty());
  CHECK(d.complete);
  CHECK(d.errors.empty());
  REQUIRE(d.results.size() == 6);
  for (const PairResult& p : d.results) {
    INFO(p.pair.src << "->" << p.pair.dst << ": " << p.error);
    CHECK(p.ok);
    CHECK(p.throughput_bps > 0);
    CHECK(p.server_counted);
    CHECK(p.c2s_sent > 0);
    CHECK(p.c2s_sent == p.c2s_received);
    CHECK(p.start_offset_ns.has_value());
  }
  Matrix m = matrix(d, 0, "throughput");
  for (uint32_t a = 0; a < 3; ++a)
    for (uint32_t b = 0; b < 3; ++b)
      CHECK(m[a][b].has_value() == (a != b));
  CHECK(byte_agreement(d).equal == 6);
  for (const StepTiming& s : d.steps)
    CHECK(s.pairs == 1);
  for (const Member& mb : d.roster) {
    CHECK(mb.joined);
    CHECK(mb.address == "127.0.0.1");
    CHECK(mb.port != 0);
  }
}

TEST_CASE("a rank that never joins is named; its cells stay empty; the rest is measured",
          "[fleet][run]") {
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(3, r);
  co.join_timeout_ms = 1500;
  co.pattern = "shift";
  Coordinator c(co);
  Members members(2);
  for (uint32_t i = 0; i < 2; ++i)
    members.start(i, member_options(i, 3, c.port(), r));
  const auto t0 = std::chrono::steady_clock::now();
  FleetDoc d = c.run();
  members.join();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));
  CHECK_FALSE(d.roster[2].joined);
  REQUIRE_FALSE(d.errors.empty());
  CHECK_THAT(d.errors.front(), Catch::Contains("rank 2 never joined"));
  size_t ok = 0;
  for (const PairResult& p : d.results) {
    if (p.pair.src == 2 || p.pair.dst == 2) {
      CHECK_FALSE(p.ok);
      CHECK_THAT(p.error, Catch::Contains("rank 2 never joined"));
    } else {
      CHECK(p.ok);
      ++ok;
    }
  }
  CHECK(ok == 2);
  SECTION("with --need-all the fleet does not start, and says why") {
    co.need_all = true;
    Coordinator c2(co);
    Members m2(2);
    for (uint32_t i = 0; i < 2; ++i)
      m2.start(i, member_options(i, 3, c2.port(), r));
    FleetDoc d2 = c2.run();
    m2.join();
    CHECK(d2.results.empty());
    CHECK_THAT(d2.errors.back(), Catch::Contains("did not start"));
    for (const auto& e : m2.errors)
      CHECK_THAT(e, Catch::Contains("did not start"));
  }
}

TEST_CASE("a wrong key is refused and named; the right key joins", "[fleet][run]") {
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(2, r);
  co.key = "sesame";
  co.join_timeout_ms = 3000;
  Coordinator c(co);
  FleetDoc d;
  std::thread t([&] { d = c.run(); });
  Members members(2);
  members.start(0, member_options(0, 2, c.port(), r, "sesame"));
  members.start(1, member_options(1, 2, c.port(), r, "guess"));
  members.join();
  t.join();
  CHECK_THAT(members.errors[1], Catch::Contains("authentication failed"));
  bool named = false;
  for (const auto& e : d.errors)
    named = named || e.find("wrong or missing key") != std::string::npos;
  CHECK(named);
  CHECK_FALSE(d.roster[1].joined);
  CHECK_THAT(members.errors[0], Catch::Contains("fewer than 2 ranks joined"));
}

TEST_CASE("a rank that dies mid-round: named, its cells empty with the reason, bounded",
          "[fleet][run]") {
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(3, r);
  co.pair_timeout_ms = 5000;
  Coordinator c(co);
  Members members(2);
  for (uint32_t i = 0; i < 2; ++i)
    members.start(i, member_options(i, 3, c.port(), r));
  // Rank 2 by hand: joins, answers the clock, then closes at its first ROUND.
  std::thread dying([&] {
    int fd = connect_tcp("127.0.0.1", c.port(), 2000);
    using control::MsgType;
    control::send_message(fd, {MsgType::hello, {{"version", control::kVersion}, {"fleet", 1}}},
                          2000);
    control::expect(fd, MsgType::welcome, 65536, 2000);
    Member me;
    me.rank = 2;
    me.host = "dying";
    me.port = 9;  // nothing listens there: no pair ever reaches it
    control::send_message(fd, {MsgType::join, {{"member", to_json(me)}, {"test", test_of(r)}}},
                          2000);
    for (;;) {
      control::Message m = control::recv_message(fd, kMaxFleetBody, 20000);
      if (m.type == MsgType::clock) {
        control::send_message(fd, {MsgType::clock, {{"now_ns", int64_t(0)}}}, 2000);
        continue;
      }
      if (m.type == MsgType::round) break;
    }
    close(fd);
  });
  const auto t0 = std::chrono::steady_clock::now();
  FleetDoc d = c.run();
  const auto took = std::chrono::steady_clock::now() - t0;
  dying.join();
  members.join();
  CHECK(took < std::chrono::seconds(30));
  CHECK_FALSE(d.roster[2].lost.empty());
  size_t measured = 0;
  for (const PairResult& p : d.results) {
    if (p.pair.src == 2 || p.pair.dst == 2) {
      CHECK_FALSE(p.ok);
      CHECK_FALSE(p.error.empty());
    } else {
      measured += p.ok;
    }
  }
  CHECK(measured == 2);
  CHECK(d.complete);  // it went on without rank 2 (no --need-all)
}

TEST_CASE("--retest: the pairs a verdict failed run once more, alone, before the verdict",
          "[fleet][run]") {
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(2, r);
  std::vector<size_t> asked;
  co.retest = [&](const FleetDoc& d) {
    asked.push_back(d.results.size());
    return std::vector<size_t>{1};  // as if the second pair had failed a check
  };
  Coordinator c(co);
  Members members(2);
  for (uint32_t i = 0; i < 2; ++i)
    members.start(i, member_options(i, 2, c.port(), r));
  FleetDoc d = c.run();
  members.join();
  REQUIRE(asked == std::vector<size_t>{2});
  REQUIRE(d.results.size() == 2);
  CHECK(d.results[0].tries == 1);
  CHECK(d.results[1].tries == 2);
  CHECK(d.results[1].ok);
  CHECK(d.results[1].step == 2);  // a step of its own after the plan's two
  CHECK(d.steps.size() == 3);
  CHECK(d.complete);
}

TEST_CASE(
    "--line-rate and --retest 2: every pair judged against the line, failing pairs rerun "
    "twice, the members' adapters named",
    "[fleet][run]") {
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(2, r);
  co.line_rate_bps = 1e15;  // a petabit: no loopback pair reaches 0.9 of it
  co.retests = 2;
  const auto checks = parse_fleet_checks("pair.throughput>=0.9*line");
  size_t asked = 0;
  co.retest = [&](const FleetDoc& d) {
    ++asked;
    std::vector<size_t> again;
    for (const auto& v : judge(checks, d))
      if (!v.passed) again.push_back(v.result);
    return again;
  };
  Coordinator c(co);
  Members members(2);
  for (uint32_t i = 0; i < 2; ++i)
    members.start(i, member_options(i, 2, c.port(), r));
  FleetDoc d = c.run();
  members.join();
  CHECK(d.complete);
  CHECK(asked == 2);
  REQUIRE(d.results.size() == 2);
  for (const PairResult& p : d.results) {
    INFO(p.pair.src << "->" << p.pair.dst << ": " << p.error);
    CHECK(p.ok);
    CHECK(p.tries == 3);
    CHECK(p.line_bps == 1e15);
    CHECK(p.line_source == "--line-rate");
  }
  // Both ranks on this host: no two of its pairs in one retest step.
  CHECK(d.steps.size() == 2 + 2 * 2);
  for (const Member& m : d.roster) {
    CHECK(m.adapter == "lo");
    CHECK_FALSE(m.speed_bps);  // loopback reports no speed
  }
  const auto v = judge(checks, d);
  for (const auto& x : v)
    CHECK_THAT(x.detail,
               Catch::Contains("pair.throughput>=0.9*line: ") && Catch::Contains(" < 9e+05G"));
  // Without --line-rate, loopback has no line: the check fails, naming the pair and the reason.
  d.line_rate_bps.reset();
  assign_lines(d, {});
  for (const auto& x : judge(checks, d))
    CHECK_THAT(x.detail, Catch::Contains("no line for") && Catch::Contains("lo reports no speed"));
}

TEST_CASE(
    "the start spread is measured against offsets taken after the step: a clock that steps "
    "shows in it",
    "[fleet][run][clock]") {
  // Each rank answers its first clock exchange (the one the first step is planned with) with the
  // true time, and every later one with a clock stepped by rank x 200 ms: the offsets measured
  // after the step differ from those the step was planned with. Data starts put on the
  // coordinator's clock through the later offsets then lie apart by about the steps' differences,
  // which the spread shows; planned and converted with the same offsets, it would show only the
  // ranks' wake-up jitter. The runs themselves are instant (a ranks' run_pair that measures
  // nothing), so only the clocks matter here.
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(4, r);
  Coordinator c(co);
  Members members(4);
  for (uint32_t i = 0; i < 4; ++i) {
    MemberOptions m = member_options(i, 4, c.port(), r);
    m.run_pair = [](uint32_t, const std::string&) {
      PairResult p;
      p.ok = true;
      p.throughput_bps = 1e9;
      p.data_started_ns = realtime_ns();
      return p;
    };
    const int64_t step = int64_t(i) * 200'000'000;
    m.clock = [answers = std::make_shared<std::atomic<int>>(0), step] {
      return realtime_ns() + (answers->fetch_add(1) >= 3 ? step : 0);
    };
    members.start(i, m);
  }
  FleetDoc d = c.run();
  members.join();
  for (const auto& e : members.errors)
    CHECK(e.empty());
  REQUIRE(d.complete);
  REQUIRE(!d.steps.empty());
  // Rank 3's offset moved by 600 ms across the first step (the exchange's own error is half a
  // loopback round trip).
  REQUIRE(d.steps[0].clock_moved_ns.has_value());
  CHECK(*d.steps[0].clock_moved_ns > 500'000'000);
  CHECK(*d.steps[0].clock_moved_ns < 700'000'000);
  // The first step's two clients' starts differ by at least 200 ms on the corrected clock, less
  // their real difference (both woke at the same planned start).
  REQUIRE(d.steps[0].start_spread_ns.has_value());
  CHECK(*d.steps[0].start_spread_ns > 100'000'000);
  // Later steps are planned with the stepped offsets, and measured against the same: no move.
  for (size_t s = 1; s < d.steps.size(); ++s) {
    REQUIRE(d.steps[s].clock_moved_ns.has_value());
    CHECK(*d.steps[s].clock_moved_ns < 100'000'000);
  }
}

TEST_CASE("--results-log: a line per pair as its step ends, a retest's try too", "[fleet][run]") {
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(2, r);
  co.retest = [](const FleetDoc&) { return std::vector<size_t>{1}; };
  const std::string path = std::filesystem::temp_directory_path() /
                           ("mtperf-results-log-" + std::to_string(::getpid()) + ".jsonl");
  std::vector<size_t> seen;  // how many results the document held at each line
  {
    ResultsLog log(path);
    co.on_result = [&](const FleetDoc& d, const PairResult& p) {
      seen.push_back(d.results.size());
      log.write(d, p);
    };
    Coordinator c(co);
    Members members(2);
    for (uint32_t i = 0; i < 2; ++i)
      members.start(i, member_options(i, 2, c.port(), r));
    FleetDoc d = c.run();
    members.join();
    REQUIRE(d.results.size() == 2);
    CHECK(log.lines() == 3);
  }
  // Written as each step ended: the first line when the document held one result.
  CHECK(seen == std::vector<size_t>{1, 2, 2});
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(nlohmann::json::parse(line));
  std::filesystem::remove(path);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["src"] == 0);
  CHECK(lines[0]["dst"] == 1);
  CHECK(lines[0]["tries"] == 1);
  CHECK(lines[0]["transport_name"] == "socket");
  CHECK(lines[0]["src_host"] == host_name());
  CHECK(lines[1]["src"] == 1);
  CHECK(lines[2]["src"] == 1);
  CHECK(lines[2]["tries"] == 2);  // the retest's try, the document's last word on that pair
  for (const auto& j : lines)
    CHECK(pair_result_from_json(j, "line").ok);
}

TEST_CASE("keep_results off: every result to on_result, none in the document; a figure matrix",
          "[fleet][run]") {
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(3, r);
  co.keep_results = false;
  FigureMatrix m(3, "throughput");
  std::vector<Pair> seen;
  co.on_result = [&](const FleetDoc& d, const PairResult& p) {
    CHECK(d.results.empty());
    seen.push_back(p.pair);
    m.take(p);
  };
  Coordinator c(co);
  Members members(3);
  for (uint32_t i = 0; i < 3; ++i)
    members.start(i, member_options(i, 3, c.port(), r));
  FleetDoc d = c.run();
  members.join();
  CHECK(d.complete);
  CHECK(d.results.empty());
  CHECK(seen.size() == 6);  // every ordered pair of 3 ranks
  CHECK(m.filled() == 6);
  for (uint32_t a = 0; a < 3; ++a) {
    CHECK(std::isnan(m.at(a, a)));
    for (uint32_t b = 0; b < 3; ++b)
      if (a != b) CHECK(m.at(a, b) > 0);
  }
}

TEST_CASE("a figure matrix: NaN until a figure comes; a failed retry empties the cell again",
          "[fleet][run]") {
  FigureMatrix m(4, "throughput");
  CHECK(m.bytes() == 64);
  CHECK(m.filled() == 0);
  PairResult p;
  p.pair = {1, 2};
  p.ok = true;
  p.throughput_bps = 9e9;
  m.take(p);
  CHECK(m.at(1, 2) == 9e9f);
  CHECK(std::isnan(m.at(2, 1)));
  CHECK(m.filled() == 1);
  p.transport = 1;  // another transport's: not this matrix's
  p.throughput_bps = 1e9;
  m.take(p);
  CHECK(m.at(1, 2) == 9e9f);
  p.transport = 0;
  p.ok = false;
  m.take(p);
  CHECK(std::isnan(m.at(1, 2)));
  CHECK(m.filled() == 0);
  p.pair = {4, 0};  // outside the fleet
  p.ok = true;
  m.take(p);
  CHECK(m.filled() == 0);
  CHECK_THROWS_AS(FigureMatrix(0, "throughput"), std::invalid_argument);
}

TEST_CASE("--results-log: a file that cannot be made is named before anything starts",
          "[fleet][run]") {
  CHECK_THROWS_WITH(ResultsLog("/nonexistent-dir/x.jsonl"),
                    "--results-log /nonexistent-dir/x.jsonl: No such file or directory");
}
