// A workload kind that lives in this file alone: added to the table when the test starts, then
// run, summed, drawn and reported by the code every workload goes through. Nothing outside
// workloads/ names a workload, so nothing else needs an edit for a new one.
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "control/local_server.hpp"
#include "harness/run.hpp"
#include "report/html.hpp"
#include "report/render.hpp"
#include "workloads/kind.hpp"

using namespace mtperf;

namespace {

// "alternate": of -P flows, the even ones send from the client, the odd ones from the server.
const WorkloadKind kAlternate{
    .id = Workload(200),
    .name = "alternate",
    .summary = "even flows send from the client, odd flows from the server",
    .headline = Headline::throughput,
    .request_response = false,
    .per_transaction = false,
    .flows_per_flow = 1,
    .conns_per_flow = 1,
    .options = "message-size, rate",
    .role =
        [](uint32_t index, uint32_t, Side side) {
          const bool client_sends = index % 2 == 0;
          return client_sends == (side == Side::client) ? Role::sender : Role::receiver;
        },
    .sends_in_flight = [](const TestSpec&, const Caps& caps) { return stream_depth(caps); },
    .buffer_size = stream_buffer_size,
};

}  // namespace

TEST_CASE("a throwaway workload kind is run, summed and reported with no edit outside its file",
          "[harness][kinds]") {
  add_workload_kind(kAlternate);
  CHECK_THROWS_AS(add_workload_kind(kAlternate), std::invalid_argument);
  REQUIRE(find_kind("alternate") == &kAlternate);
  CHECK(workload_names(" | ").find("crr | alternate") != std::string::npos);

  RunRequest r;
  r.spec.workload = kAlternate.id;
  r.spec.flows = 2;
  r.spec.duration_s = 0.3;
  r.spec.warmup_s = 0.05;
  r.quiet = true;
  // The test description goes to the server by name, and comes back as the same kind.
  TestSpec back = nlohmann::json(r.spec).get<TestSpec>();
  CHECK(back.workload == kAlternate.id);

  std::unique_ptr<control::LocalServer> local;
  const Report rep = run_where_told(r, local);
  const Summary& s = rep.summary;
  INFO((s.errors.empty() ? "" : s.errors.front()));
  REQUIRE(s.errors.empty());
  // Summed: flow 0's bytes go client to server, flow 1's back; the headline is both together.
  CHECK(s.throughput_c2s_bps > 0);
  CHECK(s.throughput_s2c_bps > 0);
  CHECK(s.throughput_bps == Approx(s.throughput_c2s_bps + s.throughput_s2c_bps).epsilon(1e-9));
  CHECK_FALSE(s.transaction_rate > 0);

  const std::string text = report_text(rep);
  CHECK_THAT(text, Catch::Contains("alternate") && Catch::Contains("throughput") &&
                       Catch::Contains("Mbit/s"));
  CHECK_THAT(text, !Catch::Contains("transaction rate"));

  const nlohmann::json doc = report_json(rep);
  CHECK(doc.at("test").at("workload") == "alternate");
  CHECK(doc.at("summary").at("throughput_bps").get<double>() > 0);

  // Drawn as throughput: the page's headline is in bits/s, not transactions.
  const std::string page = html_report({{"alternate.json", doc}});
  CHECK_THAT(page, Catch::Contains("alternate") && Catch::Contains("bit/s"));
  CHECK_THAT(page, !Catch::Contains("trans/s"));
}
