// bindings/: a transport reaches the workload through the EngineHost of its engine type. The
// worker's engine is built from the job's sizing (its worker index among it), run, and handed
// back; a transport that hosts no engine this build instantiates is refused by name.
#include <catch2/catch.hpp>

#include "bindings/workers.hpp"
#include "tests/support/scripted_transport.hpp"
#include "transports/api/engine_host.hpp"
#include "transports/socket/socket_engine.hpp"
#include "workloads/spec.hpp"

using namespace mtperf;

namespace {

class SocketHost final : public test::NoSetupTransport, public EngineHost<SocketEngine> {
 public:
  std::unique_ptr<SocketEngine> make_engine(const EngineConfig& cfg) override {
    made = cfg;
    ++makes;
    return std::make_unique<SocketEngine>(cfg);
  }
  void engine_done(const SocketEngine&) override { ++dones; }

  EngineConfig made;
  int makes = 0, dones = 0;
};

}  // namespace

TEST_CASE("run_worker builds the job's engine through the transport, runs it, hands it back") {
  TestSpec spec;
  spec.workload = Workload::rr;
  spec.req_size = 300;
  spec.resp_size = 5000;
  PhaseClock clock;
  WorkerJob job;
  job.index = 3;
  job.spec = &spec;
  job.clock = &clock;  // no flows: the worker ends as soon as it has started
  SocketHost host;
  run_worker(host, job);
  CHECK(host.makes == 1);
  CHECK(host.dones == 1);
  CHECK(host.made.worker == 3);
  CHECK(host.made.request_response);
  CHECK(host.made.buffer_size == 5000);
  CHECK(job.error.empty());
}

TEST_CASE("run_worker refuses a transport whose engine has no instantiation") {
  TestSpec spec;
  PhaseClock clock;
  WorkerJob job;
  job.spec = &spec;
  job.clock = &clock;
  test::NoSetupTransport none;
  CHECK_THROWS_AS(run_worker(none, job), std::logic_error);
  CHECK_THROWS_WITH(run_worker(none, job), Catch::Contains("no workload instantiation"));
}

TEST_CASE("every registered transport hosts an engine this build instantiates") {
  for (const TransportEntry& e : transports()) {
    INFO("transport " << e.name);
    std::unique_ptr<Transport> t = e.create({});
    REQUIRE(t);
    CHECK(runs_over(*t));
  }
  test::NoSetupTransport none;
  CHECK_FALSE(runs_over(none));
}
