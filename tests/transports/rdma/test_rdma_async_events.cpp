// A device's asynchronous events: which end something, whom they touch, how they are named, and
// the board that carries them from the watcher to the workers (no device: events are built by
// hand, as ibv_get_async_event fills them).
#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "verbs/async_events.hpp"

using namespace mtperf::rdma;

namespace {

ibv_context* fake_ctx(uintptr_t n) {
  return reinterpret_cast<ibv_context*>(n);
}

}  // namespace

TEST_CASE("async events: a queue pair's fatal error ends that queue pair's connection") {
  ibv_qp qp{};
  qp.qp_num = 77;
  ibv_async_event ev{};
  ev.event_type = IBV_EVENT_QP_FATAL;
  ev.element.qp = &qp;
  Fault f;
  REQUIRE(fault_of(fake_ctx(0x1000), ev, f));
  CHECK(f.scope == FaultScope::qp);
  CHECK(f.id == 77);
  CHECK(fault_hits(f, 0x1000, 77, 1, 0xc0, 0));
  CHECK_FALSE(fault_hits(f, 0x1000, 78, 1, 0xc0, 0));  // another queue pair
  CHECK_FALSE(fault_hits(f, 0x2000, 77, 1, 0xc0, 0));  // the same number on another device
  CHECK_THAT(fault_text(f), Catch::StartsWith("asynchronous event IBV_EVENT_QP_FATAL (") &&
                                Catch::Contains(ibv_event_type_str(IBV_EVENT_QP_FATAL)));
}

TEST_CASE("async events: CQ, SRQ, port and device faults end every connection they serve") {
  Fault f;
  ibv_async_event ev{};
  ev.event_type = IBV_EVENT_CQ_ERR;
  ev.element.cq = reinterpret_cast<ibv_cq*>(0xc0);
  REQUIRE(fault_of(fake_ctx(0x1000), ev, f));
  CHECK(fault_hits(f, 0x1000, 5, 1, 0xc0, 0));
  CHECK_FALSE(fault_hits(f, 0x1000, 5, 1, 0xc8, 0));  // another worker's CQ
  ev.event_type = IBV_EVENT_SRQ_ERR;
  ev.element.srq = reinterpret_cast<ibv_srq*>(0x5a0);
  REQUIRE(fault_of(fake_ctx(0x1000), ev, f));
  CHECK(fault_hits(f, 0x1000, 5, 1, 0xc0, 0x5a0));
  CHECK_FALSE(fault_hits(f, 0x1000, 5, 1, 0xc0, 0));  // no SRQ
  ev.event_type = IBV_EVENT_PORT_ERR;
  ev.element.port_num = 2;
  REQUIRE(fault_of(fake_ctx(0x1000), ev, f));
  CHECK(fault_hits(f, 0x1000, 5, 2, 0xc0, 0));
  CHECK_FALSE(fault_hits(f, 0x1000, 5, 1, 0xc0, 0));
  CHECK_THAT(fault_text(f), Catch::Contains("IBV_EVENT_PORT_ERR") && Catch::EndsWith("port 2"));
  ev.event_type = IBV_EVENT_DEVICE_FATAL;
  REQUIRE(fault_of(fake_ctx(0x1000), ev, f));
  CHECK(fault_hits(f, 0x1000, 5, 1, 0xc0, 0));
  CHECK_FALSE(fault_hits(f, 0x2000, 5, 1, 0xc0, 0));
}

TEST_CASE("async events: those that end nothing are not faults") {
  Fault f;
  for (auto t : {IBV_EVENT_COMM_EST, IBV_EVENT_PORT_ACTIVE, IBV_EVENT_QP_LAST_WQE_REACHED,
                 IBV_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_LID_CHANGE, IBV_EVENT_GID_CHANGE}) {
    ibv_async_event ev{};
    ev.event_type = t;
    CHECK_FALSE(fault_of(fake_ctx(0x1000), ev, f));
  }
}

TEST_CASE("async events: LAST_WQE_REACHED is a notice for the queue pair, ending nothing") {
  ibv_qp qp{};
  qp.qp_num = 77;
  ibv_async_event ev{};
  ev.event_type = IBV_EVENT_QP_LAST_WQE_REACHED;
  ev.element.qp = &qp;
  Fault f;
  REQUIRE(drained_of(fake_ctx(0x1000), ev, f));
  CHECK(f.scope == FaultScope::last_wqe);
  CHECK(f.id == 77);
  CHECK(f.ctx == 0x1000);
  CHECK_FALSE(fault_hits(f, 0x1000, 77, 1, 0xc0, 0x5a0));  // a drained queue pair is no fault
  CHECK_THAT(fault_text(f), Catch::Contains("IBV_EVENT_QP_LAST_WQE_REACHED"));
  ev.event_type = IBV_EVENT_QP_FATAL;
  CHECK_FALSE(drained_of(fake_ctx(0x1000), ev, f));
  // through the board, as the watcher publishes it
  FaultBoard b;
  ev.event_type = IBV_EVENT_QP_LAST_WQE_REACHED;
  REQUIRE(drained_of(fake_ctx(0x1000), ev, f));
  b.publish(f);
  uint64_t seen = 0;
  std::vector<Fault> got;
  b.read_since(seen, [&](const Fault& g) { got.push_back(g); });
  REQUIRE(got.size() == 1);
  CHECK(got[0] == f);
}

TEST_CASE("fault board: every reader sees every fault, in order") {
  FaultBoard b;
  uint64_t r1 = 0, r2 = 0;
  for (uint64_t i = 0; i < 3; ++i)
    b.publish({FaultScope::qp, IBV_EVENT_QP_FATAL, 0x1000, 10 + i});
  std::vector<uint64_t> seen;
  CHECK(b.read_since(r1, [&](const Fault& f) { seen.push_back(f.id); }) == 0);
  CHECK(seen == std::vector<uint64_t>{10, 11, 12});
  CHECK(r1 == 3);
  CHECK(b.read_since(r1, [&](const Fault&) { FAIL("nothing new"); }) == 0);
  b.publish({FaultScope::port, IBV_EVENT_PORT_ERR, 0x1000, 1});
  int n = 0;
  CHECK(b.read_since(r2, [&](const Fault&) { ++n; }) == 0);
  CHECK(n == 4);
}

TEST_CASE("fault board: a reader far behind loses the oldest, and says how many") {
  FaultBoard b;
  uint64_t r = 0;
  for (uint64_t i = 0; i < FaultBoard::kSlots + 5; ++i)
    b.publish({FaultScope::qp, IBV_EVENT_QP_FATAL, 0x1000, i});
  std::vector<uint64_t> seen;
  CHECK(b.read_since(r, [&](const Fault& f) { seen.push_back(f.id); }) == 5);
  REQUIRE(seen.size() == FaultBoard::kSlots);
  CHECK(seen.front() == 5);
  CHECK(seen.back() == FaultBoard::kSlots + 4);
}

TEST_CASE("fault board: a reader on another thread sees whole faults only") {
  FaultBoard b;
  constexpr uint64_t kFaults = 20000;
  std::thread writer([&] {
    for (uint64_t i = 0; i < kFaults; ++i)
      b.publish({FaultScope::qp, IBV_EVENT_QP_FATAL, i, i});
  });
  uint64_t r = 0, got = 0, lost = 0;
  bool whole = true;
  while (r < kFaults) {
    lost += b.read_since(r, [&](const Fault& f) {
      whole = whole && f.ctx == f.id && f.scope == FaultScope::qp;
      ++got;
    });
  }
  writer.join();
  CHECK(whole);
  CHECK(got + lost == kFaults);
}
