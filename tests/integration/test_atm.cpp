// The emulated ATM link end to end, as root, for Classical IP and LAN Emulation: `mtperf atm up`
// leaves a daemon and two hosts behind, tests run over it, `status` shows the counters move,
// `down` removes everything; and `mtperf run -T clip|lane` builds and removes its own
// one-adapter testbed. Bounds are wide: CI runs this beside other tests on two loaded cores.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/command.hpp"
#include "tests/support/skip.hpp"

using mtperf::test::CommandResult;
using mtperf::test::mtperf_cmd;
using nlohmann::json;

namespace {

// Under ASan/UBSan the emulated line's daemon runs several times slower: the goodput floors
// measure the build, not the line, and are left out (the ceilings stay).
#ifdef MTPERF_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

struct Result {
  int rc = -1;
  std::string out;
};

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

bool namespace_exists(const std::string& ns) {
  return std::filesystem::exists("/run/netns/" + ns);
}

std::string why_no_tun() {
  std::string why = mtperf::test::why_not_root("the emulated ATM link");
  struct stat st;
  if (why.empty() && ::stat("/dev/net/tun", &st) != 0) why = "no /dev/net/tun (modprobe tun)";
  return why;
}

double stream_goodput_bps(const std::string& args) {
  const CommandResult r = mtperf_cmd("run -w stream -l 1.5 --warmup 0.5 -q --format json " + args);
  REQUIRE(r.rc == 0);
  const json report = json::parse(r.out);
  const json& flow = report["summary"]["flows"][0];
  CHECK(flow["tcp_info"]["congestion"].is_string());  // the CC in use travels with the result
  return report["summary"]["throughput_bps"].get<double>();
}

void testbed_round_trip(const std::string& mode, double theory_bps) {
  const std::string name = "itest-" + mode;
  const std::string state_file = "/run/mtperf/atm-" + name + ".json";
  mtperf_cmd("atm down --name " + name + " 2>/dev/null");  // a leftover of an earlier crash
  CommandResult up =
      mtperf_cmd("atm up --mode " + mode + " --adapters 2 --rate oc3 --name " + name);
  REQUIRE(up.rc == 0);
  const json state = read_json(state_file);
  const std::string near = state["near_ns"], far = state["far_ns"];
  const int pid = state["pid"];
  CHECK(namespace_exists(near));
  CHECK(namespace_exists(far));
  CHECK(state["links"].size() == 2);
  CHECK(state["kind"] == mode);
  CHECK(state["links"][1]["controller"] == "emu1");
  // Named by the testbed alone, so `ip netns exec mtperf-NAME-near ...` can be typed.
  CHECK(near == "mtperf-atm-" + name + "-near");
  CHECK(far == "mtperf-atm-" + name + "-far");
  // The README's `mtperf atm up ... && mtperf atm status`: at once, the counters are there.
  const CommandResult first = mtperf_cmd("atm status --name " + name + " 2>&1");
  CHECK(first.rc == 0);
  CHECK_THAT(first.out, Catch::Contains("cells/s of"));

  // Both adapters carry a stream and request/response; the second by its own addresses.
  const double goodput = stream_goodput_bps("-T " + mode + " --testbed " + name + " --cc cubic");
  if (!kSanitized) CHECK(goodput > 0.5 * theory_bps);
  CHECK(goodput < 1.01 * theory_bps);  // the line cannot carry more than its cells allow
  const CommandResult rr = mtperf_cmd("run -T " + mode + " --testbed " + name +
                                      " -w rr -l 1 --warmup 0.2 -q --format json");
  REQUIRE(rr.rc == 0);

  // Never a silent substitute: sockets over a veth testbed of the same name, or the line at
  // another rate than asked, are refused before anything runs.
  const CommandResult veth = mtperf_cmd("run --testbed " + name + " --adapters auto:2 -l 0.3 2>&1");
  CHECK(veth.rc == 2);
  CHECK_THAT(veth.out, Catch::Contains("is an emulated ATM testbed (" + mode + ")"));
  const CommandResult rate =
      mtperf_cmd("run -T " + mode + " --testbed " + name + " --atm-rate oc12 -l 0.3 2>&1");
  CHECK(rate.rc == 2);
  CHECK_THAT(rate.out, Catch::Contains("runs its line at 353207 cells/s"));
  CHECK(json::parse(rr.out)["summary"]["transactions"].get<double>() > 100);

  ::sleep(2);  // the daemon rewrites its counters every second
  const json stats = read_json("/run/mtperf/atm-" + name + ".stats.json");
  const json& a0 = stats["adapters"][0];
  CHECK(a0["lines"]["near_to_far"]["cells_sent"].get<std::uint64_t>() > 10000);
  CHECK(a0["lines"]["near_to_far"]["hec_errors"] == 0);
  CHECK(a0["hosts"]["near"]["ready"] == true);
  const CommandResult status = mtperf_cmd("atm status --name " + name);
  CHECK(status.rc == 0);
  CHECK(status.out.find("cells/s of") != std::string::npos);
  if (mode == "lane") {
    // The kernel's ARP broadcasts crossed the BUS; the stream went data-direct after a flush.
    const json& near_lec = a0["hosts"]["near"];
    CHECK(near_lec["lecid"].get<int>() > 0);
    CHECK(near_lec["bus_frames"].get<std::uint64_t>() > 0);
    CHECK(near_lec["flushes"].get<std::uint64_t>() >= 1);
    CHECK(near_lec["direct_frames"].get<std::uint64_t>() > 1000);
    CHECK(a0["elan"]["joins"] == 2);
    CHECK(status.out.find("LEC lecid") != std::string::npos);
  }

  const CommandResult down = mtperf_cmd("atm down --name " + name);
  CHECK(down.rc == 0);
  CHECK_FALSE(namespace_exists(near));
  CHECK_FALSE(namespace_exists(far));
  CHECK_FALSE(std::filesystem::exists(state_file));
  // The daemon has exited; init reaps it in its own time, so allow a moment for that.
  for (int i = 0; i < 50 && ::kill(pid, 0) == 0; ++i)
    ::usleep(100'000);
  CHECK(::kill(pid, 0) != 0);
}

}  // namespace

MTPERF_TEST_REQUIRES(why_no_tun());

TEST_CASE("atm up/down: a two-adapter CLIP testbed carries stream and rr, leaves nothing") {
  testbed_round_trip("clip", 134.34e6);
}

TEST_CASE("atm up/down: a two-adapter LANE testbed carries stream and rr, leaves nothing") {
  testbed_round_trip("lane", 127.86e6);  // 1516-byte frames: 32 cells per 1500-byte packet
}

TEST_CASE("run -T clip and -T lane build a one-adapter testbed for the run and remove it") {
  // Other tests make and remove namespaces meanwhile (ctest -j): count only those of in-process
  // ATM testbeds ("mtperf-<pid>-atm<n>-near|far").
  auto atm_namespaces = [] {
    std::filesystem::create_directories("/run/netns");
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator("/run/netns")) {
      std::string n = e.path().filename().string();
      if (n.starts_with("mtperf-") && n.find("-atm") != std::string::npos) names.insert(n);
    }
    return names;
  };
  const auto before = atm_namespaces();
  for (const auto& [kind, theory] : {std::pair{"clip", 134.34e6}, std::pair{"lane", 127.86e6}}) {
    INFO(kind);
    const double goodput =
        stream_goodput_bps(std::string("-T ") + kind + " --atm-rate oc3 --cc cubic");
    if (!kSanitized) CHECK(goodput > 0.5 * theory);
    CHECK(goodput < 1.01 * theory);
  }
  CHECK(atm_namespaces() == before);
}

TEST_CASE("sweep -T clip runs each count over its own emulated adapters") {
  const CommandResult r = mtperf_cmd(
      "sweep -T clip --atm-rate oc3 --adapters 1..2 -w outbound -l 1 --warmup 0.3 --format json");
  REQUIRE(r.rc == 0);
  const json sweep = json::parse(r.out).at("sweep");
  CHECK(sweep["transport"] == "clip");
  REQUIRE(sweep["rows"].size() == 1);
  const json& cells = sweep["rows"][0]["cells"];
  REQUIRE(cells.size() == 2);
  // One OC-3c line carries at most 134.34 Mbit/s of TCP payload, two at most twice that. A 1 s
  // window may exceed it by what the receiver's socket buffer held when the window opened (a
  // receiver slowed by a loaded host or a sanitizer reads it in the window: 135.72 Mbit/s, +1.03%,
  // was seen under ASan at load 8), hence 2% here; the 1.5 s runs above keep 1%. Both adapters
  // carried traffic: Jain's index over the two is 0.5 when one of them carried nothing (a ratio
  // that holds however slow a loaded machine makes both).
  CHECK(cells[0]["throughput_bps"].get<double>() > 0);
  CHECK(cells[0]["throughput_bps"].get<double>() < 1.02 * 134.34e6);
  CHECK(cells[1]["throughput_bps"].get<double>() < 2.04 * 134.34e6);
  CHECK(cells[1]["jain_fairness_adapters"].get<double>() > 0.75);
}
