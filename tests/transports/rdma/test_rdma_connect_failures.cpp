// crr's connections made on the data path (the engine's open), over FakeVerbs: a connection
// whose set-up fails at any step ends with an error the workload sees, and once closed leaves no
// queue pair or id; teardown leaves nothing alive.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "tests/transports/rdma/fake_flows.hpp"
#include "tests/transports/rdma/fake_verbs.hpp"
#include "transports/rdma/engine.hpp"
#include "transports/rdma/setup.hpp"
#include "verbs/cm.hpp"

using namespace mtperf;
using namespace mtperf::rdma;
using namespace mtperf::rdma::test;

TEST_CASE("crr: a connection failing in its set-up ends in error and, closed, leaves nothing") {
  FakeVerbs f;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, true);
  RdmaSettings s;
  s.srq = GENERATE(SrqMode::off, SrqMode::on);
  auto res = std::make_shared<WorkerRes>(cfg, s, true, f);
  std::unique_ptr<Endpoint> target =
      rdma_connect(fake_address(), SockAddr{}, setup, res, monotonic_ns() + 1'000'000'000);
  REQUIRE(target != nullptr);
  CHECK(f.live(Obj::cm_id) == 0);  // a target keeps no id: each transaction makes its own
  f.reply_pd = peer_pd(setup, Verb::send);
  bool fails = true;
  {
    RdmaEngine engine(res, EngineMode{});
    SECTION("rdma_resolve_route fails") {
      f.fail(Call::resolve_route);
    }
    SECTION("rdma_create_qp fails") {
      f.fail(Call::cm_create_qp);
    }
    SECTION("posting the receives fails") {
      s.srq == SrqMode::off ? f.fail(Call::post_recv, 2) : f.fail(Call::connect);
    }
    SECTION("rdma_connect fails") {
      f.fail(Call::connect);
    }
    SECTION("the server rejects") {
      f.reply_pd.clear();
    }
    SECTION("the server answers for another flow") {
      FlowSetup other = setup;
      other.flow = setup.flow + 1;
      f.reply_pd = peer_pd(other, Verb::send);
    }
    SECTION("it connects") {
      fails = false;
    }
    int id = engine.open(*target);
    REQUIRE(id >= 0);
    WorkReq arm;
    arm.op = Op::recv;
    arm.cookie = 9;
    REQUIRE(engine.post(id, std::span<const WorkReq>(&arm, 1)) == 1);
    std::vector<Completion> got = turn(engine);
    bool failed = std::any_of(got.begin(), got.end(), [](const Completion& c) {
      return c.cookie == 9 && c.bytes < 0 && (c.flags & kCompError);
    });
    CHECK(failed == fails);
    CHECK((engine.error_text(id) != nullptr) == fails);
    engine.close(id);
    // A queue pair on the shared receive queue drains first (the device's
    // IBV_EVENT_QP_LAST_WQE_REACHED, which this device never raises, or 100 ms).
    turn(engine, s.srq == SrqMode::off ? 1 : 60);
    INFO("alive after close: " << f.live_text());
    CHECK(f.live(Obj::qp) == 0);
    CHECK(f.live(Obj::cm_id) == 0);
  }
  target.reset();
  res.reset();
  CHECK(f.leftovers() == "");
}

TEST_CASE("crr: a connection whose address does not resolve takes no entry and no id") {
  FakeVerbs f;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, true);
  auto res = std::make_shared<WorkerRes>(cfg, RdmaSettings{}, true, f);
  std::unique_ptr<Endpoint> target =
      rdma_connect(fake_address(), SockAddr{}, setup, res, monotonic_ns() + 1'000'000'000);
  {
    RdmaEngine engine(res, EngineMode{});
    f.fail(Call::resolve_addr, 1, ENETUNREACH);
    CHECK(engine.open(*target) == -ENETUNREACH);
    f.fail(Call::create_id, 1, ENOMEM);
    CHECK(engine.open(*target) == -ENOMEM);
    CHECK(f.live(Obj::cm_id) == 0);
  }
  target.reset();
  res.reset();
  CHECK(f.leftovers() == "");
}
