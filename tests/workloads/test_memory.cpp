// Buffers are sized from the test itself, and the memory a test takes is known before anything
// is allocated: the figure follows the engine's own sizing, and a test over its budget is
// refused with a message that names the figure and the limit.
#include <string>

#include <catch2/catch.hpp>

#include "stats/histogram.hpp"
#include "transports/api/registry.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/memory.hpp"

using namespace mtperf;

namespace {

TestSpec rr(uint32_t req, uint32_t resp, uint32_t burst = 1, Proto p = Proto::tcp) {
  TestSpec s;
  s.workload = Workload::rr;
  s.proto = p;
  s.req_size = req;
  s.resp_size = resp;
  s.burst = burst;
  validate(s);
  return s;
}

std::unique_ptr<Transport> sockets() {
  return find_transport("socket").create({});
}

}  // namespace

TEST_CASE("every rr buffer holds a whole request and a whole response", "[memory]") {
  // -r 1,8M used to pass validation with 1 MiB buffers: the server sent 8 MiB from past its
  // buffer ("server flow 0: send: Bad address").
  CHECK(buffer_size(rr(1, 8u << 20)) >= 8u << 20);
  CHECK(buffer_size(rr(16u << 20, 1)) >= 16u << 20);
  CHECK(buffer_size(rr(kLimits.max_msg_size, kLimits.max_msg_size, 4)) >= kLimits.max_msg_size);
  TestSpec crr = rr(3u << 20, 5u << 20);
  crr.workload = Workload::crr;
  CHECK(buffer_size(crr) >= 5u << 20);
  // A burst over TCP gathers several answers per receive, up to the gather bound.
  CHECK(buffer_size(rr(1000, 1000, 8)) == 8000);
  CHECK(buffer_size(rr(512u << 10, 512u << 10, 64)) == kMaxGatherBytes);
  CHECK(buffer_size(rr(1000, 2000, 8, Proto::udp)) == 2000);
}

TEST_CASE("a stream's buffers hold its messages", "[memory]") {
  TestSpec s;
  s.msg_size = 4u << 20;
  validate(s);
  CHECK(buffer_size(s) == 4u << 20);
  s.proto = Proto::udp;
  s.msg_size = 9000;
  validate(s);
  CHECK(buffer_size(s) == 9000);
}

TEST_CASE("the memory figure follows the engine's sizing", "[memory]") {
  auto t = sockets();
  TestSpec s;
  s.flows = 8;
  s.threads = 3;  // 8 flows dealt over 3 workers: 3, 3, 2
  validate(s);
  // A TCP stream without --verify: each worker's flows share a send and a receive buffer.
  REQUIRE(shares_buffers(s, t->caps()));
  CHECK(test_memory(s, *t).buffers == 3 * kSharedBuffers * buffer_size(s));
  s.verify_seed = 1;  // --verify writes and checks every flow's own buffers
  REQUIRE_FALSE(shares_buffers(s, t->caps()));
  MemoryFigure m = test_memory(s, *t);
  uint64_t per_flow = uint64_t(buffers_per_flow(s, t->caps())) * buffer_size(s);
  CHECK(m.buffers == 8 * per_flow);
  CHECK(m.engines > 0);
  // A latency histogram per worker and the side's merged one, none per flow by default.
  CHECK(m.flow_state >= 4 * Histogram::kStorageBytes);
  CHECK(m.flow_state < 4 * Histogram::kStorageBytes + 8 * 16 * 1024);
  CHECK(m.threads > 0);
  CHECK(m.total() == m.buffers + m.engines + m.flow_state + m.threads);
  // More flows, more memory; the buffers scale with them exactly.
  s.flows = 16;
  MemoryFigure m2 = test_memory(s, *t);
  CHECK(m2.buffers == 2 * m.buffers);
  CHECK(m2.total() > m.total());
}

TEST_CASE("ten thousand stream flows share their workers' buffers", "[memory]") {
  auto t = sockets();
  TestSpec s;
  s.flows = 10000;
  s.threads = 2;
  validate(s);
  MemoryFigure m = test_memory(s, *t);
  CHECK(m.buffers == 2 * kSharedBuffers * buffer_size(s));
  CAPTURE(m.buffers, m.engines, m.flow_state, m.threads);
  CHECK(2 * m.total() / s.flows <= 32 * 1024);
  CHECK_THAT(m.describe(s, t->caps()), Catch::Contains("2 workers x 2 shared x 64 KiB"));
  s.proto = Proto::udp;  // UDP writes its header into every send: per flow again
  CHECK_FALSE(shares_buffers(s, t->caps()));
}

TEST_CASE("where the engine provides the receive buffers, stream flows share the send buffer",
          "[memory]") {
  // io_uring with its buffer ring (multishot, the default): 10,000 flows fit in 32 KiB each.
  bool built = false;
  for (const TransportEntry& e : transports())
    built |= e.name == "uring";
  if (!built) return;  // a build without the io_uring transport
  auto t = find_transport("uring").create({});
  REQUIRE(t->caps().provides_recv_buffers);
  TestSpec s;
  s.transport = "uring";
  s.flows = 10000;
  s.threads = 2;
  validate(s);
  REQUIRE(shares_buffers(s, t->caps()));
  MemoryFigure m = test_memory(s, *t);
  CAPTURE(m.buffers, m.engines, m.flow_state, m.threads);
  CHECK(m.buffers == 2 * kSharedBuffers * buffer_size(s));
  CHECK(2 * m.total() / s.flows <= 32 * 1024);
}

TEST_CASE("a flow's own latency histogram is priced only when asked for", "[memory]") {
  auto t = sockets();
  TestSpec s = rr(1, 1);
  s.flows = 100;
  s.threads = 2;
  validate(s);
  MemoryFigure shared = test_memory(s, *t);
  s.per_flow_latency = true;
  MemoryFigure own = test_memory(s, *t);
  CHECK(own.flow_state - shared.flow_state == 100 * Histogram::kStorageBytes);
  CHECK(own.buffers == shared.buffers);
}

TEST_CASE("ten thousand rr flows fit in 32 KiB a flow, both sides together", "[memory]") {
  auto t = sockets();
  TestSpec s = rr(1, 1);
  s.flows = 10000;
  s.threads = 2;
  validate(s);
  MemoryFigure m = test_memory(s, *t);
  CAPTURE(m.buffers, m.engines, m.flow_state, m.threads);
  CHECK(2 * m.total() / s.flows <= 32 * 1024);
}

TEST_CASE("an rr test's memory counts every burst buffer of every flow", "[memory]") {
  auto t = sockets();
  TestSpec s = rr(16u << 20, 16u << 20, 1024);
  s.flows = 2048;
  validate(s);
  MemoryFigure m = test_memory(s, *t);
  // 4096 flows (the limit) x 1025 buffers x 16 MiB: far past any host.
  CHECK(m.buffers == uint64_t(2048) * 1025 * (16u << 20));
  CHECK_THROWS_WITH(check_memory(m, uint64_t(1) << 30, s, t->caps(), "on the server",
                                 "mtperf serve --max-memory"),
                    Catch::Contains("needs 32") && Catch::Contains("TiB") &&
                        Catch::Contains("on the server") && Catch::Contains("limit of 1 GiB") &&
                        Catch::Contains("--max-memory"));
  TestSpec small = rr(1, 1);
  CHECK_NOTHROW(check_memory(test_memory(small, *t), uint64_t(1) << 30, small, t->caps(), "here",
                             "mtperf run --max-memory"));
}

TEST_CASE("the default budgets: 1 GiB a test, 2 GiB in all, less on a small host", "[memory]") {
  const uint64_t GiB = uint64_t(1) << 30;
  CHECK(default_test_memory(64 * GiB) == GiB);
  CHECK(default_total_memory(64 * GiB) == 2 * GiB);
  CHECK(default_test_memory(2 * GiB) == GiB / 2);
  CHECK(default_total_memory(2 * GiB) == GiB);
  CHECK(default_test_memory(0) == GiB);  // unknown host memory
}

TEST_CASE("sizes read and print in binary units", "[memory]") {
  CHECK(parse_bytes("1G") == uint64_t(1) << 30);
  CHECK(parse_bytes("512M") == uint64_t(512) << 20);
  CHECK(parse_bytes("1.5K") == 1536);
  CHECK(parse_bytes("65536") == 65536);
  CHECK_THROWS_AS(parse_bytes("lots"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bytes("-1G"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bytes("1Q"), std::invalid_argument);
  CHECK(format_bytes(512) == "512 bytes");
  CHECK(format_bytes(uint64_t(1) << 30) == "1 GiB");
  CHECK(format_bytes(uint64_t(3) << 29) == "1.5 GiB");
}
