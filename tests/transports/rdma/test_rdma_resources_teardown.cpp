// A worker's device resources (resources.hpp) over FakeVerbs: a set-up that fails at any step
// destroys what it had made, and a worker's teardown leaves nothing alive.
#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <string>

#include "tests/transports/rdma/fake_flows.hpp"
#include "tests/transports/rdma/fake_verbs.hpp"
#include "transports/rdma/resources.hpp"
#include "verbs/device_rules.hpp"

using namespace mtperf;
using namespace mtperf::rdma;
using namespace mtperf::rdma::test;

namespace {

RdmaSettings with_srq(SrqMode m) {
  RdmaSettings s;
  s.srq = m;
  return s;
}

}  // namespace

TEST_CASE("resources: a device set up and torn down leaves nothing alive") {
  FakeVerbs f;
  SrqMode srq = GENERATE(SrqMode::off, SrqMode::on);
  {
    WorkerRes res(fake_config(false), with_srq(srq), false, f);
    DeviceRes& d = res.device(f.context());
    CHECK(d.pd != nullptr);
    CHECK(d.cq != nullptr);
    CHECK((d.srq != nullptr) == (srq == SrqMode::on));
    CHECK(d.max_inline > 0);
    CHECK(f.live(Obj::pd) == 1);
    CHECK(f.live(Obj::cq) == 1);
    CHECK(f.live(Obj::comp_channel) == 1);
    // The pool, the area, and one region per connection of the table.
    CHECK(f.live(Obj::mr) == 2 + int(res.layout().conns));
    CHECK(f.live(Obj::qp) == 0);  // the queue pair that found the inline size is gone
  }
  CHECK(f.leftovers() == "");
}

TEST_CASE("resources: a device set-up failing at any step destroys what it made") {
  struct Step {
    Call call;
    int nth;
    bool always;
    SrqMode srq;
    const char* names;  // what the error names
  };
  const Step step =
      GENERATE(Step{Call::query_device, 1, false, SrqMode::off, "ibv_query_device"},
               Step{Call::alloc_pd, 1, false, SrqMode::off, "ibv_alloc_pd"},
               Step{Call::create_comp_channel, 1, false, SrqMode::off, "ibv_create_comp_channel"},
               Step{Call::create_cq, 1, false, SrqMode::off, "ibv_create_cq"},
               Step{Call::reg_mr, 1, false, SrqMode::off, "buffer pool"},
               Step{Call::reg_mr, 2, false, SrqMode::off, "receive area"},
               Step{Call::reg_mr, 3, false, SrqMode::off, "connection 0"},
               Step{Call::reg_mr, 4, false, SrqMode::off, "connection 1"},
               Step{Call::create_srq, 1, false, SrqMode::on, "ibv_create_srq"},
               Step{Call::post_srq_recv, 5, false, SrqMode::on, "ibv_post_srq_recv"},
               Step{Call::create_qp, 1, true, SrqMode::off, "ibv_create_qp"},
               Step{Call::create_qp, 1, true, SrqMode::on, "ibv_create_qp"});
  FakeVerbs f;
  {
    WorkerRes res(fake_config(false), with_srq(step.srq), false, f);
    step.always ? f.fail_always(step.call) : f.fail(step.call, step.nth);
    std::string what;
    try {
      res.device(f.context());
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    INFO("error: " << what);
    CHECK(what.find(step.names) != std::string::npos);
    // Nothing of the failed set-up is left, before the worker itself goes.
    INFO("alive: " << f.live_text());
    CHECK(f.live_total() == 0);
    CHECK(res.devices().empty());
    // A later try, the device healed, makes it whole.
    f.heal();
    res.device(f.context());
    CHECK(f.live(Obj::pd) == 1);
  }
  CHECK(f.leftovers() == "");
}

TEST_CASE(
    "resources: a device refusing the inline size asked gets a smaller one, probed at set-up") {
  FakeVerbs f;
  f.fail(Call::create_qp, 1, EINVAL);  // the first size asked
  {
    WorkerRes res(fake_config(false), with_srq(SrqMode::off), false, f);
    DeviceRes& d = res.device(f.context());
    CHECK(d.max_inline > 0);
    CHECK(d.max_inline < inline_wanted(kInlineAuto, Verb::send));
    CHECK(f.live(Obj::qp) == 0);  // every probe's queue pair destroyed
  }
  CHECK(f.leftovers() == "");
}
