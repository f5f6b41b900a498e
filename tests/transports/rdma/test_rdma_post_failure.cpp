// A chain of sends that ibv_post_send takes only partly, over FakeVerbs: the queue pair goes to
// the error state, so that the requests it took complete (flushed), signalled or not, and every
// send the workload asked for completes with the error; teardown leaves nothing alive.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "tests/transports/rdma/fake_flows.hpp"
#include "tests/transports/rdma/fake_verbs.hpp"
#include "transports/rdma/engine.hpp"
#include "transports/rdma/setup.hpp"
#include "verbs/cm.hpp"

using namespace mtperf;
using namespace mtperf::rdma;
using namespace mtperf::rdma::test;

TEST_CASE("post: a chain failing partway moves the queue pair to error and fails every send") {
  const bool rr = GENERATE(false, true);
  FakeVerbs f;
  EngineConfig cfg = fake_config(rr);
  FlowSetup setup = fake_flow(cfg, false);
  RdmaSettings s;
  s.srq = SrqMode::off;
  auto res = std::make_shared<WorkerRes>(cfg, s, false, f);
  f.reply_pd = peer_pd(setup, Verb::send);
  std::unique_ptr<Endpoint> ep =
      rdma_connect(fake_address(), SockAddr{}, setup, res, monotonic_ns() + 1'000'000'000);
  REQUIRE(ep != nullptr);
  uint32_t qpn = f.last_qp_num;
  {
    RdmaEngine engine(res, EngineMode{1024, false});
    int id = engine.adopt(*ep);
    REQUIRE(id >= 0);
    constexpr int kSends = 6;
    WorkReq sends[kSends];
    for (int i = 0; i < kSends; ++i) {
      sends[i].op = Op::send;
      sends[i].buf = engine.pool().get(uint32_t(i));
      sends[i].cookie = 100 + uint64_t(i);
      sends[i].signal = true;
    }
    REQUIRE(engine.post(id, std::span<const WorkReq>(sends, kSends)) == kSends);
    f.fail_post_send(2, ENOMEM);  // the first two are taken, the rest refused
    engine.flush();
    CHECK(f.posted_sends == 2);
    CHECK(f.qp_state(qpn) == IBV_QPS_ERR);

    std::vector<Completion> got = turn(engine);
    std::map<uint64_t, int> seen;
    for (const Completion& c : got) {
      if (c.cookie >= 100 && c.cookie < 100 + kSends) {
        ++seen[c.cookie];
        CHECK(c.bytes < 0);
        CHECK((c.flags & kCompError) != 0);
      }
    }
    for (int i = 0; i < kSends; ++i) {
      INFO("send " << i);
      CHECK(seen[100 + uint64_t(i)] == 1);
    }
    const char* why = engine.error_text(id);
    REQUIRE(why != nullptr);
    CHECK(std::strstr(why, "ibv_post_send") != nullptr);
  }
  ep.reset();
  res.reset();
  CHECK(f.leftovers() == "");
}
