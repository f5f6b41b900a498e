// Fault injection proves detection end to end, as root: an emulated CLIP line (`mtperf atm up`)
// corrupts, duplicates and reorders PDUs after the AAL5 CRC, where no check on the line sees
// them, and `mtperf run --verify` and the UDP sequence accounting catch each one: the counts the
// emulator injected on the near-to-far line equal the counts the run detected (exactly for UDP;
// for TCP all but the corrupted retransmissions TCP drops as old data). A clean line passes with
// zero. About 12 s.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/command.hpp"
#include "tests/support/skip.hpp"

using mtperf::test::CommandResult;
using mtperf::test::mtperf_cmd;
using nlohmann::json;

namespace {

constexpr const char* kName = "itest-pduf";

struct Result {
  int rc = -1;
  std::string out;
};

std::string why_no_tun() {
  std::string why = mtperf::test::why_not_root("the emulated ATM link");
  struct stat st;
  if (why.empty() && ::stat("/dev/net/tun", &st) != 0) why = "no /dev/net/tun (modprobe tun)";
  return why;
}

// The near-to-far line's counters, once the daemon has rewritten them after the last traffic
// (it does every second).
json line_counters(const std::string& line = "near_to_far") {
  ::usleep(1'500'000);
  std::ifstream in(std::string("/run/mtperf/atm-") + kName + ".stats.json");
  return json::parse(in)["adapters"][0]["lines"][line];
}

std::uint64_t delta(const json& after, const json& before, const char* key) {
  return after[key].get<std::uint64_t>() - before[key].get<std::uint64_t>();
}

json run_json(const std::string& args) {
  const CommandResult r = mtperf_cmd("run -T clip --testbed " + std::string(kName) +
                                     " --verify -l 1.5 --warmup 0.3 -q --format json " + args);
  REQUIRE(r.rc == 0);
  return json::parse(r.out)["summary"];
}

struct Testbed {
  Testbed() {
    mtperf_cmd(std::string("atm down --name ") + kName + " 2>/dev/null");  // an earlier crash's
    // Every 97th eligible PDU corrupted, every 89th duplicated, every 83rd reordered: the
    // first coincidence is past any PDU count these runs reach. Only near to far (the data
    // direction of a stream), and only PDUs with at least 1 KiB of payload, so the control
    // connection's messages (a few hundred bytes that way) pass untouched.
    const CommandResult up =
        mtperf_cmd(std::string("atm up --mode clip --atm-rate oc3 --name ") + kName +
                   " --corrupt-after-crc every:97 --duplicate every:89 --reorder every:83 "
                   "--fault-dir near-to-far --fault-min-payload 1024 --seed 7");
    REQUIRE(up.rc == 0);
  }
  ~Testbed() { mtperf_cmd(std::string("atm down --name ") + kName); }
};

}  // namespace

MTPERF_TEST_REQUIRES(why_no_tun());

TEST_CASE("faults after the AAL5 CRC are each caught end to end, with the injected count") {
  Testbed bed;

  // UDP: a corrupted datagram is a bad receive of --verify, a duplicate and a reordered
  // datagram show in the sequence accounting; one datagram per PDU, so the counts are exact.
  const json before_udp = line_counters();
  const json udp = run_json("-w stream -p udp --rate 20M");
  const json after_udp = line_counters();
  const json& flow = udp["flows"][0]["udp"];
  INFO("emulator: " << after_udp.dump() << "\nrun: " << udp["verify"].dump() << flow.dump());
  const std::uint64_t corrupted = delta(after_udp, before_udp, "corrupted_after_crc");
  CHECK(corrupted > 5);
  CHECK(udp["verify"]["bad_receives"].get<std::uint64_t>() == corrupted);
  CHECK(udp["verify"]["bad_bytes"].get<std::uint64_t>() ==
        delta(after_udp, before_udp, "corrupted_bytes"));
  CHECK(delta(after_udp, before_udp, "duplicated") > 5);
  CHECK(flow["duplicates"].get<std::uint64_t>() == delta(after_udp, before_udp, "duplicated"));
  CHECK(delta(after_udp, before_udp, "reordered") > 5);
  CHECK(flow["reordered"].get<std::uint64_t>() == delta(after_udp, before_udp, "reordered"));
  CHECK(flow["lost"].get<std::uint64_t>() == 0);

  // TCP: the corrupted bytes reach the receiver through a valid checksum; each is a wrong byte
  // of --verify (a receive may hold several corrupted segments, so receives are at most PDUs).
  // Duplicates and reordering TCP absorbs. Not exact as for UDP: a corrupted segment can be a
  // retransmission of bytes the receiver already holds (reordering makes the sender resend), which
  // TCP drops unread, or be in flight when the run ends. So the run sees at most what was
  // injected, and nearly all of it.
  const json tcp = run_json("-w stream");
  const json after_tcp = line_counters();
  INFO("emulator: " << after_tcp.dump() << "\nrun: " << tcp["verify"].dump());
  const std::uint64_t segments = delta(after_tcp, after_udp, "corrupted_after_crc");
  CHECK(segments > 5);
  const std::uint64_t injected_bytes = delta(after_tcp, after_udp, "corrupted_bytes");
  const std::uint64_t bad_bytes = tcp["verify"]["bad_bytes"].get<std::uint64_t>();
  CHECK(bad_bytes <= injected_bytes);
  CHECK(bad_bytes * 10 >= injected_bytes * 8);
  CHECK(tcp["verify"]["bad_receives"].get<std::uint64_t>() >= 1);
  CHECK(tcp["verify"]["bad_receives"].get<std::uint64_t>() <= segments);
  CHECK(delta(after_tcp, after_udp, "duplicated") > 0);
  CHECK(delta(after_tcp, after_udp, "reordered") > 0);

  // The other direction was left alone, and `atm status` shows the counters.
  const json back = line_counters("far_to_near");
  CHECK(back["pdu_eligible"] == 0);
  CHECK(back["corrupted_after_crc"] == 0);
  const CommandResult status = mtperf_cmd(std::string("atm status --name ") + kName);
  CHECK_THAT(status.out, Catch::Contains("after CRC: of"));
  CHECK_THAT(
      status.out,
      Catch::Contains("corrupted " +
                      std::to_string(after_tcp["corrupted_after_crc"].get<std::uint64_t>())));

  // --stop-on-error: the server's first mismatch (a stream's receiver is the server) ends the
  // run through STOP within a fraction of a second, exit 1, and the report says why.
  const CommandResult stop =
      mtperf_cmd("run -T clip --testbed " + std::string(kName) +
                 " --verify -l 5 --warmup 0.3 -q --format json -w stream -p udp "
                 "--rate 20M --stop-on-error");
  CHECK(stop.rc == 1);
  const json stopped = json::parse(stop.out)["summary"];
  CHECK(stopped["stopped_early"]["cause"] == "verify");
  CHECK_THAT(stopped["stopped_early"]["reason"].get<std::string>(),
             Catch::StartsWith("server: flow 0"));
  CHECK(stopped["window_s"].get<double>() < 2);
  CHECK(stopped["verify"]["bad_receives"].get<std::uint64_t>() >= 1);
}

TEST_CASE("a clean emulated line passes --verify with zero") {
  const CommandResult r = mtperf_cmd(
      "run -T clip --atm-rate oc3 -w stream -p udp --rate 20M --verify -l 1 --warmup 0.2 -q "
      "--format json");
  REQUIRE(r.rc == 0);
  const json s = json::parse(r.out)["summary"];
  CHECK(s["verify"]["bytes_checked"].get<std::uint64_t>() > 1'000'000);
  CHECK(s["verify"]["bad_receives"] == 0);
  CHECK(s["verify"]["bad_bytes"] == 0);
  const json& flow = s["flows"][0]["udp"];
  CHECK(flow["duplicates"] == 0);
  CHECK(flow["reordered"] == 0);
  CHECK(flow["lost"] == 0);
}
