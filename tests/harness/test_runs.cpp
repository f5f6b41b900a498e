// The run layer against an in-process server on loopback: compare's interleaved runs and a sweep
// on this host, each a few short tests.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "harness/compare_run.hpp"
#include "harness/run.hpp"
#include "harness/sweep_run.hpp"

using namespace mtperf;

namespace {

RunRequest short_test(Workload w) {
  RunRequest r;
  r.spec.workload = w;
  r.spec.duration_s = 0.2;
  r.spec.warmup_s = 0.05;
  r.quiet = true;
  return r;
}

}  // namespace

TEST_CASE("compare runs every cell once per iteration and keeps each figure", "[harness]") {
  Compare c;
  c.configs = {{"a", {}}, {"b", {}}};
  c.iterations = 2;
  RunRequest rr = short_test(Workload::rr);
  RunRequest stream = short_test(Workload::stream);
  run_compare(c, {{rr, rr}, {stream, stream}});
  REQUIRE(c.rows.size() == 2);
  CHECK(c.rows[0].workload == "rr");
  CHECK(c.rows[0].figure == CompareFigure::transaction_rate);
  CHECK(c.rows[0].demand_unit == "us/transaction");
  CHECK(c.rows[1].figure == CompareFigure::throughput);
  for (const auto& row : c.rows) {
    REQUIRE(row.cells.size() == 2);
    for (const auto& cell : row.cells) {
      REQUIRE(cell.samples.size() == 2);
      for (const auto& s : cell.samples) {
        INFO(row.workload << (s.errors.empty() ? "" : ": " + s.errors.front()));
        CHECK(s.errors.empty());
        REQUIRE(s.value);
        CHECK(*s.value > 0);
        CHECK_FALSE(s.remote_demand);  // one process: no second host to report
      }
    }
  }
  const CellStats b = cell_stats(c, c.rows[0], 1);
  CHECK(b.measured == 2);
  CHECK(b.verdict != Verdict::too_few);
}

TEST_CASE("a sweep on this host fills every cell of its layout", "[harness]") {
  SweepRequest q;
  q.layout.axis = SweepAxis::flows;
  q.layout.axis_values = {1, 2};
  q.layout.rows.push_back({"tcp-rr", "TCP rr 1 byte", SweepFigure::transaction_rate, {}});
  for (int flows : {1, 2}) {
    RunRequest r = short_test(Workload::rr);
    r.spec.flows = uint32_t(flows);
    q.runs.push_back({r});
  }
  const Sweep s = run_sweep(q);
  REQUIRE(s.rows.size() == 1);
  REQUIRE(s.rows[0].cells.size() == 2);
  CHECK(s.rows[0].cells[0].at == 1);
  CHECK(s.rows[0].cells[1].at == 2);
  for (const auto& cell : s.rows[0].cells) {
    INFO((cell.errors.empty() ? "" : cell.errors.front()));
    CHECK(cell.errors.empty());
    REQUIRE(cell.value);
    CHECK(*cell.value > 0);
    CHECK(cell.latency_p99_us);
  }
  CHECK(s.transport == "socket");
  CHECK(s.hosts == "this host -> an in-process server");
}

TEST_CASE("where a request runs, in words", "[harness]") {
  RunRequest r;
  CHECK(where_told(r) == "loopback, an in-process server");
  r.embedded = false;
  r.client.server = "127.0.0.2:12865";
  CHECK(where_told(r) == "server 127.0.0.2:12865");
  r.testbed = "tb";
  CHECK(where_told(r) == "testbed tb");
}
