// Multi-adapter runs on a real namespace testbed: four veth links, two stream flows on each,
// workers pinned by `--bind irq` semantics falling back to the given CPUs (veth has no IRQ).
// Checks that every link carried its share (the interface counters of each veth moved by at
// least what mtperf says went over it), that per-adapter figures add up to the total, that the
// placement is in the report, and that `mtperf sweep` prints its table. Needs root; skipped
// (exit 77) otherwise.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <string>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli/run_options.hpp"
#include "control/routes.hpp"
#include "harness/hosts_run.hpp"
#include "harness/run.hpp"
#include "platform/affinity.hpp"
#include "platform/netns.hpp"
#include "report/render.hpp"
#include "tests/support/command.hpp"
#include "tests/support/namespaces.hpp"

MTPERF_TEST_REQUIRES(mtperf::test::why_no_namespaces("multi-adapter testbeds"));

namespace {

std::map<std::string, mtperf::LinkCounters> counters_in(const std::string& ns) {
  std::map<std::string, mtperf::LinkCounters> out;
  mtperf::run_in(ns, [&] { out = mtperf::link_counters(); });
  return out;
}

bool namespace_exists(const std::string& name) {
  for (const auto& ns : mtperf::list_namespaces())
    if (ns == name) return true;
  return false;
}

}  // namespace

TEST_CASE("stream -P 2 over four testbed adapters uses every link and adds up") {
  std::vector<int> cpus = mtperf::online_cpus();
  REQUIRE(!cpus.empty());
  std::string near, far;
  {
    mtperf::TestbedOptions options;
    options.adapters = 4;
    options.tag = "adapters";
    mtperf::Testbed bed(options);
    near = bed.near_ns();
    far = bed.far_ns();
    auto before = counters_in(bed.near_ns());

    auto o = mtperf::cli::parse_run_options(
        {"-w", "stream", "-P", "2", "--adapters", "auto:4", "--bind", "irq", "--cpus",
         mtperf::format_cpu_list(cpus), "-l", "1", "--warmup", "0.2", "-q"});
    REQUIRE(o.spec.flows == 8);
    mtperf::Report r = mtperf::run_on_hosts(o, bed.hosts());
    auto after = counters_in(bed.near_ns());

    REQUIRE(r.summary.errors.empty());
    REQUIRE(r.placement);
    REQUIRE(r.placement->adapters.size() == 4);
    REQUIRE(r.placement->flows.size() == 8);
    for (const auto& f : r.placement->flows) {
      // veth has no IRQs: the flow fell back to the given CPUs, and says so.
      CHECK(f.irq_cpus.empty());
      CHECK(std::find(cpus.begin(), cpus.end(), f.worker_cpu) != cpus.end());
      CHECK(f.reason.find("fallback") != std::string::npos);
    }

    const mtperf::Summary& s = r.summary;
    REQUIRE(s.flows.size() == 8);
    REQUIRE(s.adapters.size() == 4);
    double sum = 0;
    for (const auto& g : s.adapters) {
      CHECK(g.flows.size() == 2);
      CHECK(g.throughput_bps > 0);
      sum += g.throughput_bps;
    }
    CHECK(sum == Approx(s.throughput_bps).epsilon(1e-9));

    for (const auto& link : bed.hosts().links) {
      // Every flow of this adapter left from its address to the far end of its link.
      uint64_t sent_here = 0;
      for (const auto& f : s.flows) {
        if (f.adapter != link.near_if) continue;
        CHECK(f.local_address == link.near_addr);
        CHECK(f.remote_address == link.far_addr);
        sent_here += f.client_total.bytes_sent;
      }
      REQUIRE(sent_here > 0);
      // The link carried at least the payload mtperf counts for it (headers come on top).
      uint64_t moved = after.at(link.near_if).tx_bytes - before.at(link.near_if).tx_bytes;
      INFO(link.near_if << " moved " << moved << " bytes; mtperf sent " << sent_here);
      CHECK(moved >= sent_here);
    }

    nlohmann::json j = mtperf::report_json(r);
    CHECK(j["placement"]["flows"].size() == 8);
    CHECK(j["summary"]["adapters"].size() == 4);
    CHECK(j["summary"]["flows"][0]["local_address"].is_string());
    std::string text = mtperf::report_text(r);
    CHECK(text.find("placement: 4 adapter(s), 8 flow(s), pin irq") != std::string::npos);
  }
  // The testbed is gone with everything in it.
  CHECK_FALSE(namespace_exists(near));
  CHECK_FALSE(namespace_exists(far));
}

TEST_CASE("a flow's source must be on a subnet the server has") {
  mtperf::TestbedOptions options;
  options.adapters = 1;
  options.tag = "route";
  mtperf::Testbed bed(options);
  std::vector<mtperf::InterfaceAddress> far;
  mtperf::run_in(bed.far_ns(), [&] { far = mtperf::interface_addresses(); });
  mtperf::InterfaceAddress near{"mtperf0n", AF_INET, "10.231.0.1", 24};
  CHECK(mtperf::control::server_address_for(near, far) == "10.231.0.2");
  mtperf::InterfaceAddress elsewhere{"x", AF_INET, "10.231.9.1", 24};
  CHECK_THROWS_WITH(mtperf::control::server_address_for(elsewhere, far),
                    Catch::Contains("no address on the subnet of 10.231.9.1/24"));
}

TEST_CASE("mtperf sweep --adapters 1..2 on a testbed prints the scalability table") {
  const mtperf::test::CommandResult r = mtperf::test::mtperf_cmd(
      "sweep --adapters 1..2 --testbed itsweep -w outbound -w rr"
      " -l 0.5 --warmup 0.1 --cpus 0 --format json 2>/dev/null");
  REQUIRE(r.rc == 0);
  auto j = nlohmann::json::parse(r.out);
  const auto& sweep = j.at("sweep");
  CHECK(sweep["axis"] == nlohmann::json({{"name", "adapters"}, {"values", {1, 2}}}));
  REQUIRE(sweep["rows"].size() == 2);
  CHECK(sweep["rows"][0]["name"] == "outbound");
  CHECK(sweep["rows"][1]["name"] == "tcp-rr");  // asked for by run's workload name, -w rr
  for (const auto& row : sweep["rows"]) {
    REQUIRE(row["cells"].size() == 2);
    for (const auto& c : row["cells"]) {
      CHECK(c[row["figure"].get<std::string>()].get<double>() > 0);
      CHECK(c["local_cpu_percent"].is_number());
    }
    CHECK(row["cells"][0]["scaling_efficiency"].get<double>() == Approx(1.0));
    CHECK(row["cells"][1]["scaling_efficiency"].is_number());
  }
  // The temporary testbed went with the sweep.
  for (const auto& ns : mtperf::list_namespaces())
    CHECK(ns.find("-itsweep-") == std::string::npos);
}
