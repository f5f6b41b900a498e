#include <string>

#include <catch2/catch.hpp>

#include "platform/cpu_stat.hpp"

using namespace mtperf;

namespace {

std::string fixture(const std::string& host, const std::string& t) {
  return std::string(MTPERF_FIXTURES) + "/proc/" + host + "/" + t;
}

void check_usage(const CpuUsage& u, double util, double user, double nice, double sys, double irq,
                 double softirq, double iowait, double steal, double idle) {
  CHECK(u.util == util);
  CHECK(u.user == user);
  CHECK(u.nice == nice);
  CHECK(u.sys == sys);
  CHECK(u.irq == irq);
  CHECK(u.softirq == softirq);
  CHECK(u.iowait == iowait);
  CHECK(u.steal == steal);
  CHECK(u.idle == idle);
}

}  // namespace

TEST_CASE("parse the hand-built 8-CPU /proc/stat", "[cpu_stat]") {
  const auto s = read_cpu_snapshot(fixture("host8", "t0"));
  REQUIRE(s.per_cpu.size() == 8);
  REQUIRE(s.cpu_ids == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(s.per_cpu[0].user == 1843210);
  CHECK(s.per_cpu[0].nice == 1200);
  CHECK(s.per_cpu[0].system == 923411);
  CHECK(s.per_cpu[0].idle == 48210933);
  CHECK(s.per_cpu[0].iowait == 10233);
  CHECK(s.per_cpu[0].irq == 40211);
  CHECK(s.per_cpu[0].softirq == 152311);
  CHECK(s.per_cpu[6].steal == 1544);
  CHECK(s.total.user == 13572995);
  CHECK(s.total.steal == 1544);
}

TEST_CASE("8-CPU utilization and its split, exactly", "[cpu_stat]") {
  // Every CPU moved 1000 ticks (10 s at USER_HZ 100), chosen to give round shares.
  const auto u = cpu_utilization(read_cpu_snapshot(fixture("host8", "t0")),
                                 read_cpu_snapshot(fixture("host8", "t1")));
  REQUIRE(u.cpus == 8);
  REQUIRE(u.per_cpu.size() == 8);
  CHECK(u.total.ticks == 8000);
  // Totals: user 2000, nice 50, sys 1050, idle 4390, iowait 100, irq 150, softirq 250, steal 10.
  check_usage(u.total, 43.875, 25.0, 0.625, 13.125, 1.875, 3.125, 1.25, 0.125, 54.875);
  //                                 util  user  nice  sys  irq  soft iow  steal idle
  check_usage(u.per_cpu[0].second, 50.0, 10.0, 0.0, 20.0, 5.0, 15.0, 0.0, 0.0, 50.0);
  check_usage(u.per_cpu[1].second, 40.0, 30.0, 0.0, 10.0, 0.0, 0.0, 0.0, 0.0, 60.0);
  check_usage(u.per_cpu[2].second, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 100.0);
  check_usage(u.per_cpu[3].second, 70.0, 20.0, 0.0, 30.0, 10.0, 10.0, 0.0, 0.0, 30.0);
  check_usage(u.per_cpu[4].second, 100.0, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
  check_usage(u.per_cpu[5].second, 20.0, 5.0, 5.0, 10.0, 0.0, 0.0, 10.0, 0.0, 70.0);
  check_usage(u.per_cpu[6].second, 21.0, 10.0, 0.0, 10.0, 0.0, 0.0, 0.0, 1.0, 79.0);
  check_usage(u.per_cpu[7].second, 50.0, 25.0, 0.0, 25.0, 0.0, 0.0, 0.0, 0.0, 50.0);
  for (int i = 0; i < 8; ++i)
    CHECK(u.per_cpu[i].first == i);
}

TEST_CASE("utilization from this VM's recorded /proc/stat", "[cpu_stat]") {
  const auto u = cpu_utilization(read_cpu_snapshot(fixture("vm2", "t0")),
                                 read_cpu_snapshot(fixture("vm2", "t1")));
  REQUIRE(u.cpus == 2);
  // Total: user +1, idle +200, softirq +1 = 202 ticks. cpu0: system +1, idle +100. cpu1: idle +100.
  CHECK(u.total.ticks == 202);
  CHECK(u.total.util == 2 * 100.0 / 202);
  CHECK(u.total.user == 100.0 / 202);
  CHECK(u.total.softirq == 100.0 / 202);
  CHECK(u.total.idle == 200 * 100.0 / 202);
  CHECK(u.per_cpu[0].second.ticks == 101);
  CHECK(u.per_cpu[0].second.util == 100.0 / 101);
  CHECK(u.per_cpu[0].second.sys == 100.0 / 101);
  CHECK(u.per_cpu[1].second.util == 0.0);
  CHECK(u.per_cpu[1].second.idle == 100.0);
}

TEST_CASE("hot-plugged CPUs and counters that did not move", "[cpu_stat]") {
  const auto before = parse_cpu_snapshot(
      "cpu  300 0 300 2400 0 0 0 0\n"
      "cpu0 100 0 100 800 0 0 0 0\n"
      "cpu1 100 0 100 800 0 0 0 0\n"
      "cpu2 100 0 100 800 0 0 0 0\n",
      "before");
  // cpu1 went offline, cpu3 came online, cpu2 did not move at all.
  const auto after = parse_cpu_snapshot(
      "cpu  450 0 300 2850 0 0 0 0\n"
      "cpu0 150 0 100 850 0 0 0 0\n"
      "cpu2 100 0 100 800 0 0 0 0\n"
      "cpu3 0 0 0 10 0 0 0 0\n",
      "after");
  const auto u = cpu_utilization(before, after);
  REQUIRE(u.cpus == 2);
  CHECK(u.per_cpu[0].first == 0);
  CHECK(u.per_cpu[0].second.util == 50.0);
  CHECK(u.per_cpu[1].first == 2);
  CHECK(u.per_cpu[1].second.ticks == 0);
  CHECK(u.per_cpu[1].second.util == 0.0);
  CHECK(u.per_cpu[1].second.idle == 0.0);
  CHECK(u.total.util == 25.0);  // 150 busy of 600
  // A counter that went backwards counts as not moving instead of wrapping to 2^64.
  const auto back = parse_cpu_snapshot("cpu  100 0 0 50 0 0 0 0\n", "back");
  const auto fwd = parse_cpu_snapshot("cpu  90 0 0 150 0 0 0 0\n", "fwd");
  CHECK(cpu_utilization(back, fwd).total.idle == 100.0);
}

TEST_CASE("older kernels with fewer columns", "[cpu_stat]") {
  const auto s = parse_cpu_snapshot("cpu  1 2 3 4\ncpu0 1 2 3 4\n", "old");
  CHECK(s.total.idle == 4);
  CHECK(s.total.iowait == 0);
  CHECK(s.total.steal == 0);
}

TEST_CASE("malformed /proc/stat lines are named", "[cpu_stat]") {
  CHECK_THROWS_WITH(parse_cpu_snapshot("cpu  1 2 3 4\ncpu0 1 2 x3 4\n", "/proc/stat"),
                    Catch::Contains("/proc/stat:2") && Catch::Contains("cpu0 1 2 x3 4") &&
                        Catch::Contains("'x3'"));
  CHECK_THROWS_WITH(parse_cpu_snapshot("cpu  1 2 3 4\ncpuX 1 2 3 4\n", "s"),
                    Catch::Contains("s:2") && Catch::Contains("cpuX"));
  CHECK_THROWS_WITH(parse_cpu_snapshot("cpu  1 2\n", "s"),
                    Catch::Contains("s:1") && Catch::Contains("at least 4"));
  CHECK_THROWS_WITH(parse_cpu_snapshot("cpu  1 2 3 -4\n", "s"), Catch::Contains("'-4'"));
  CHECK_THROWS_WITH(parse_cpu_snapshot("intr 5\n", "s"), Catch::Contains("no 'cpu' total"));
  CHECK_THROWS_WITH(read_cpu_snapshot("/nonexistent-root"),
                    Catch::Contains("/nonexistent-root/proc/stat"));
}

TEST_CASE("the live /proc/stat parses", "[cpu_stat]") {
  const auto s = read_cpu_snapshot();
  CHECK(!s.per_cpu.empty());
  CHECK(s.total.total() > 0);
}
