// Accepts that fail, over FakeVerbs: crr's accepts on the data path (the engine's listener) and
// a flow's accept at set-up (setup.hpp). Each failure is rejected, so that the client hears at
// once, and leaves no queue pair, id or event behind; teardown leaves nothing alive.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "tests/transports/rdma/fake_flows.hpp"
#include "tests/transports/rdma/fake_verbs.hpp"
#include "transports/rdma/engine.hpp"
#include "transports/rdma/setup.hpp"
#include "verbs/cm.hpp"

using namespace mtperf;
using namespace mtperf::rdma;
using namespace mtperf::rdma::test;

namespace {

RdmaSettings settings(SrqMode srq) {
  RdmaSettings s;
  s.srq = srq;
  return s;
}

bool has_cookie(const std::vector<Completion>& got, uint64_t cookie) {
  return std::any_of(got.begin(), got.end(),
                     [&](const Completion& c) { return c.cookie == cookie && c.bytes >= 0; });
}

}  // namespace

TEST_CASE("crr: a failed accept is rejected and gives back its queue pair, id and entry") {
  const SrqMode srq = GENERATE(SrqMode::off, SrqMode::on);
  FakeVerbs f;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, true);
  auto res = std::make_shared<WorkerRes>(cfg, settings(srq), true, f);
  std::unique_ptr<FlowListener> listener = rdma_listen(fake_address(), setup, res);
  std::unique_ptr<Endpoint> ep = listener->release();
  rdma_cm_id* listen_id = static_cast<RdmaEndpoint&>(*ep).id;
  std::vector<uint8_t> pd = peer_pd(setup, Verb::send);
  {
    RdmaEngine engine(res, EngineMode{});
    int lid = engine.listen_adopt(*ep);
    REQUIRE(lid >= 0);
    WorkReq acc;
    acc.op = Op::accept;
    acc.cookie = 42;
    REQUIRE(engine.post(lid, std::span<const WorkReq>(&acc, 1)) == 1);

    SECTION("rdma_create_qp fails") {
      f.fail(Call::cm_create_qp);
    }
    SECTION("rdma_accept fails") {
      f.fail(Call::accept);
    }
    SECTION("posting the receives fails") {
      // With a shared receive queue the connection posts none of its own: rdma_accept instead.
      srq == SrqMode::off ? f.fail(Call::post_recv, 2) : f.fail(Call::accept);
    }
    SECTION("a stranger's request") {
      FlowSetup other = setup;
      other.cookie = kCookie + 1;
      pd = peer_pd(other, Verb::send);
    }
    f.connect_request(listen_id, pd.data(), pd.size());
    std::vector<Completion> got = turn(engine);
    CHECK(f.rejects == 1);
    CHECK(f.accepts == 0);
    CHECK_FALSE(has_cookie(got, 42));
    INFO("alive: " << f.live_text());
    CHECK(f.live(Obj::qp) == 0);
    CHECK(f.live(Obj::cm_id) == 1);  // the listener's alone
    CHECK(f.live(Obj::cm_event) == 0);

    // The next request is accepted: the accept still armed, the table not short of an entry.
    f.heal();
    pd = peer_pd(setup, Verb::send);
    f.connect_request(listen_id, pd.data(), pd.size());
    got = turn(engine);
    CHECK(f.accepts == 1);
    CHECK(has_cookie(got, 42));
    CHECK(f.live(Obj::qp) == 1);
    CHECK(f.live(Obj::cm_id) == 2);
  }
  ep.reset();
  listener.reset();
  res.reset();
  CHECK(f.leftovers() == "");
}

TEST_CASE("crr: many accepted, some refused, then teardown leaves nothing alive") {
  FakeVerbs f;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, true);
  auto res = std::make_shared<WorkerRes>(cfg, settings(SrqMode::automatic), true, f);
  std::unique_ptr<FlowListener> listener = rdma_listen(fake_address(), setup, res);
  std::unique_ptr<Endpoint> ep = listener->release();
  rdma_cm_id* listen_id = static_cast<RdmaEndpoint&>(*ep).id;
  std::vector<uint8_t> pd = peer_pd(setup, Verb::send);
  {
    RdmaEngine engine(res, EngineMode{});
    int lid = engine.listen_adopt(*ep);
    REQUIRE(lid >= 0);
    int accepted = 0;
    for (int i = 0; i < 40; ++i) {
      if (i % 3 == 1) f.fail(i % 2 ? Call::accept : Call::cm_create_qp);
      f.connect_request(listen_id, pd.data(), pd.size());
      turn(engine, 1);
      int id = engine.accept(lid);
      if (id >= 0) {
        ++accepted;
        engine.close(id);
      }
    }
    CHECK(accepted == f.accepts);
    CHECK(f.rejects == 40 - accepted);
    CHECK(f.rejects >= 13);
    INFO("alive: " << f.live_text());
    CHECK(f.live(Obj::qp) == 0);
    CHECK(f.live(Obj::cm_id) == 1);
  }
  ep.reset();
  listener.reset();
  res.reset();
  CHECK(f.leftovers() == "");
}

TEST_CASE("setup: a flow's failed accept is rejected and leaves nothing alive") {
  FakeVerbs f;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, false);
  auto res = std::make_shared<WorkerRes>(cfg, settings(SrqMode::off), false, f);
  std::unique_ptr<FlowListener> listener = rdma_listen(fake_address(), setup, res);
  REQUIRE(f.last_listener != nullptr);

  SECTION("its event channel cannot be made") {
    f.fail(Call::create_event_channel);
  }
  SECTION("rdma_migrate_id fails") {
    f.fail(Call::migrate_id);
  }
  SECTION("rdma_create_qp fails") {
    f.fail(Call::cm_create_qp);
  }
  SECTION("posting the receives fails") {
    f.fail(Call::post_recv, 3);
  }
  SECTION("rdma_accept fails") {
    f.fail(Call::accept);
  }
  std::vector<uint8_t> pd = peer_pd(setup, Verb::send);
  f.connect_request(f.last_listener, pd.data(), pd.size());
  CHECK_THROWS_AS(listener->accept(monotonic_ns() + 1'000'000'000), std::runtime_error);
  CHECK(f.rejects == 1);
  INFO("alive: " << f.live_text());
  CHECK(f.live(Obj::qp) == 0);
  CHECK(f.live(Obj::cm_id) == 1);  // the listener's
  CHECK(f.live(Obj::event_channel) == 1);
  CHECK(f.bad_destroys() == 0);
  listener.reset();
  res.reset();
  CHECK(f.leftovers() == "");
}

TEST_CASE("setup: a flow accepted and torn down leaves nothing alive") {
  FakeVerbs f;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, false);
  auto res = std::make_shared<WorkerRes>(cfg, settings(SrqMode::off), false, f);
  std::unique_ptr<FlowListener> listener = rdma_listen(fake_address(), setup, res);
  std::vector<uint8_t> pd = peer_pd(setup, Verb::send);
  f.connect_request(f.last_listener, pd.data(), pd.size());
  std::unique_ptr<Endpoint> ep = listener->accept(monotonic_ns() + 1'000'000'000);
  REQUIRE(ep != nullptr);
  CHECK(f.accepts == 1);
  CHECK(f.rejects == 0);
  CHECK(f.live(Obj::qp) == 1);
  {
    RdmaEngine engine(res, EngineMode{});
    CHECK(engine.adopt(*ep) >= 0);
  }
  ep.reset();
  listener.reset();
  res.reset();
  CHECK(f.leftovers() == "");
}

TEST_CASE("setup: a listener whose set-up fails partway leaves nothing alive") {
  const Call step = GENERATE(Call::create_event_channel, Call::create_id, Call::bind_addr,
                             Call::listen, Call::alloc_pd);
  FakeVerbs f;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, false);
  auto res = std::make_shared<WorkerRes>(cfg, settings(SrqMode::off), false, f);
  f.fail(step);
  CHECK_THROWS_AS(rdma_listen(fake_address(), setup, res), std::runtime_error);
  CHECK(f.leftovers() == "");
}
