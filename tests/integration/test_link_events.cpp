// A link taken down and up in the middle of a run on a veth testbed shows as a gap, not as a
// silent average: interim intervals at zero, the longest stall about as long as the outage,
// TCP retransmits, and the throughput back after it. Needs root; skipped (exit 77) otherwise.
// About 4 s.
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli/run_options.hpp"
#include "harness/hosts_run.hpp"
#include "platform/link_mtu.hpp"
#include "platform/netns.hpp"
#include "report/render.hpp"
#include "tests/support/namespaces.hpp"

MTPERF_TEST_REQUIRES(mtperf::test::why_no_namespaces("link events on a veth testbed"));

namespace {

constexpr double kOutageS = 0.6;

}  // namespace

TEST_CASE("a veth link down for 0.6 s mid-run shows as zero intervals and a stall") {
  mtperf::TestbedOptions options;
  options.adapters = 1;
  options.tag = "linkev";
  mtperf::Testbed bed(options);
  const mtperf::TestbedLink& link = bed.links().at(0);

  auto o = mtperf::cli::parse_run_options(
      {"-w", "stream", "-l", "3", "--warmup", "0.2", "--interval", "0.2", "-q"});
  auto run = std::async(std::launch::async, [&] { return mtperf::run_on_hosts(o, bed.hosts()); });
  // Set-up takes a few tens of ms, then 0.2 s of warm-up: the link goes down about 1 s into
  // the 3 s window and comes back 0.6 s later, leaving over a second to recover.
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  mtperf::set_link_up(bed.far_ns(), link.far_if, false);
  std::this_thread::sleep_for(std::chrono::milliseconds(int(kOutageS * 1000)));
  mtperf::set_link_up(bed.far_ns(), link.far_if, true);
  mtperf::Report r = run.get();

  const mtperf::Summary& s = r.summary;
  INFO(mtperf::report_text(r));
  REQUIRE(s.errors.empty());
  REQUIRE(s.intervals.size() >= 14);
  // The outage: intervals with nothing sent (two of 0.2 s fit in 0.6 s; at least one on a
  // loaded host), and a stall about as long as the link was down. The stall is the time between
  // two of the clock thread's samples that saw the same counts, so it may come short by up to a
  // sample at each end (50 ms, more on a loaded host); TCP's retransmission timer may add up to
  // one more backoff after the link is back.
  int zero = 0;
  for (const auto& i : s.intervals)
    zero += i.sum.bytes_sent == 0;
  CHECK(zero >= 1);
  CHECK(s.longest_stall_s >= kOutageS - 0.2);
  CHECK(s.longest_stall_s <= kOutageS + 1.2);
  CHECK(s.longest_stall_start_s > 0.3);
  CHECK(s.longest_stall_start_s < 2.0);
  // It recovered: the last interval moved data again.
  CHECK(s.intervals.back().sum.bytes_sent > 0);
  CHECK(s.longest_stall_start_s + s.longest_stall_s < s.intervals.back().start_s);
  // TCP retransmitted what the dead link dropped.
  uint64_t retrans = 0;
  for (const auto& f : s.flows)
    retrans += f.retransmits.value_or(0);
  CHECK(retrans > 0);

  nlohmann::json j = mtperf::report_json(r);
  CHECK(j["summary"]["longest_stall_s"].get<double>() == Approx(s.longest_stall_s));
  CHECK(mtperf::report_text(r).find("longest stall") != std::string::npos);
}
