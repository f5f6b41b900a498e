// A worker's engine is sized from the test alone (workloads/engine_config.hpp): sends in flight,
// buffers and their size, connections and queue depth, and which worker runs which flow. The
// figures below are those the header's rules give; set-up (flow_setup) and the runner (which
// deals flow i to worker i % workers) must agree on them flow by flow.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/engine_config.hpp"

using namespace mtperf;

namespace {

Caps outstanding(uint32_t n) {
  Caps c;
  c.max_outstanding = n;
  return c;
}

TestSpec spec_of(Workload w, uint32_t flows = 1, uint32_t threads = 0) {
  TestSpec s;
  s.workload = w;
  s.flows = flows;
  s.threads = threads;
  return s;
}

TestSpec rr(uint32_t req, uint32_t resp, uint32_t burst = 1, Proto p = Proto::tcp) {
  TestSpec s = spec_of(Workload::rr);
  s.req_size = req;
  s.resp_size = resp;
  s.burst = burst;
  s.proto = p;
  return s;
}

TestSpec stream(uint32_t msg, Proto p = Proto::tcp) {
  TestSpec s = spec_of(Workload::stream);
  s.msg_size = msg;
  s.proto = p;
  return s;
}

}  // namespace

TEST_CASE("stream_depth: an eighth of the engine's outstanding operations, 1 to 8", "[engine]") {
  CHECK(stream_depth(outstanding(0)) == 1);
  CHECK(stream_depth(outstanding(8)) == 1);
  CHECK(stream_depth(outstanding(15)) == 1);
  CHECK(stream_depth(outstanding(16)) == 2);
  CHECK(stream_depth(outstanding(24)) == 3);
  CHECK(stream_depth(outstanding(63)) == 7);
  CHECK(stream_depth(Caps{}) == 8);  // 64 by default
  CHECK(stream_depth(outstanding(4096)) == 8);
}

TEST_CASE("stream_depth: a transport's own, for streams only (rdma -O tx_depth)", "[engine]") {
  Caps deep;
  deep.stream_depth = 128;
  CHECK(stream_depth(deep) == 128);
  CHECK(buffers_per_flow(stream(0), deep) == 129);
  CHECK(buffers_per_flow(spec_of(Workload::bidir), deep) == 129);
  CHECK(engine_config(stream(0), 1, deep).queue_depth == 131);
  // request/response keeps its burst in flight: sized as before, not from the deep stream
  CHECK(buffers_per_flow(rr(1, 1), deep) == 2);
  CHECK(buffers_per_flow(spec_of(Workload::crr), deep) == 9);
  CHECK(engine_config(rr(1, 1), 1, deep).queue_depth == 11);
  CHECK(engine_config(rr(1, 1, 32), 1, deep).queue_depth == 34);
}

TEST_CASE("buffers_per_flow: sends in flight and one receive buffer", "[engine]") {
  CHECK(buffers_per_flow(rr(1, 1), Caps{}) == 2);
  CHECK(buffers_per_flow(rr(1, 1, 16), Caps{}) == 17);
  CHECK(buffers_per_flow(rr(1, 1, 16), outstanding(8)) == 17);  // rr: the burst, whatever caps
  CHECK(buffers_per_flow(stream(0), Caps{}) == 9);
  CHECK(buffers_per_flow(stream(0), outstanding(16)) == 3);
  CHECK(buffers_per_flow(spec_of(Workload::maerts), outstanding(8)) == 2);
  CHECK(buffers_per_flow(spec_of(Workload::bidir), outstanding(24)) == 4);
  // crr is sized as a stream is: the stream depth's sends, not the burst's.
  CHECK(buffers_per_flow(spec_of(Workload::crr), Caps{}) == 9);
  CHECK(buffers_per_flow(spec_of(Workload::crr), outstanding(8)) == 2);
}

TEST_CASE("buffer_size: rr and crr hold a whole request and answer, and a burst's", "[engine]") {
  CHECK(buffer_size(rr(1, 1)) == 64);  // never under 64 bytes
  CHECK(buffer_size(rr(100, 2000)) == 2000);
  CHECK(buffer_size(rr(2000, 100)) == 2000);
  CHECK(buffer_size(rr(100, 2000, 4)) == 8000);               // TCP gathers the burst
  CHECK(buffer_size(rr(100, 2000, 4, Proto::udp)) == 2000);   // a datagram at a time
  CHECK(buffer_size(rr(1u << 20, 1, 4)) == kMaxGatherBytes);  // the gathering stops at 1 MiB
  CHECK(buffer_size(rr(1, 300'000, 8)) == kMaxGatherBytes);   // 2.4 MB of a burst: 1 MiB
  CHECK(buffer_size(rr(3u << 20, 1, 2)) == 3u << 20);         // but a message is always whole
  CHECK(buffer_size(rr(1, 16u << 20, 1024)) == 16u << 20);
  TestSpec crr = rr(100, 5000);
  crr.workload = Workload::crr;
  CHECK(buffer_size(crr) == 5000);
}

TEST_CASE("buffer_size: a stream's message, TCP reads of at least 64 KiB", "[engine]") {
  CHECK(buffer_size(stream(0)) == 64 * 1024);  // the TCP default message
  CHECK(buffer_size(stream(8192)) == 64 * 1024);
  CHECK(buffer_size(stream(128 * 1024)) == 128 * 1024);
  CHECK(buffer_size(stream(0, Proto::udp)) == 1472);  // the UDP default datagram
  CHECK(buffer_size(stream(8192, Proto::udp)) == 8192);
  CHECK(buffer_size(stream(32, Proto::udp)) == 64);
  TestSpec m = stream(1000);
  m.workload = Workload::maerts;
  CHECK(buffer_size(m) == 64 * 1024);
  m.workload = Workload::bidir;
  m.proto = Proto::udp;
  CHECK(buffer_size(m) == 1000);
}

TEST_CASE("engine_config: one stream flow", "[engine]") {
  TestSpec s = stream(0);
  s.wait = Wait::spin;
  EngineConfig c = engine_config(s, 1, Caps{});
  CHECK(c.max_conns == 1);
  CHECK(c.queue_depth == 11);          // max(burst 1 + 2, depth 8 + 3)
  CHECK(c.buffers == kSharedBuffers);  // a TCP stream without --verify: shared
  s.verify_seed = 1;
  CHECK(engine_config(s, 1, Caps{}).buffers == 9);
  CHECK(c.buffer_size == 64 * 1024);
  CHECK(c.wait == Wait::spin);
  CHECK(c.single_flow);
  CHECK(c.sock == &s.sock);
  CHECK_FALSE(c.request_response);
  CHECK(c.stream_msg_size == 64 * 1024);  // the TCP default message
  CHECK(c.worker == 0);
}

TEST_CASE("engine_config: several rr and crr flows", "[engine]") {
  TestSpec s = rr(100, 2000, 16);
  EngineConfig c = engine_config(s, 3, outstanding(8));
  CHECK(c.max_conns == 3);
  CHECK(c.queue_depth == 18);  // max(16 + 2, 1 + 3)
  CHECK(c.buffers == 3 * 17);
  CHECK(c.buffer_size == 32000);
  CHECK(c.wait == Wait::block);
  CHECK_FALSE(c.single_flow);
  CHECK(c.request_response);

  TestSpec x = rr(100, 2000);
  x.workload = Workload::crr;
  EngineConfig k = engine_config(x, 2, Caps{});
  CHECK(k.max_conns == 8);  // a listener, the connection under way and one closing, each flow
  CHECK(k.queue_depth == 11);
  CHECK(k.buffers == 2 * 9);
  CHECK(k.buffer_size == 2000);
  CHECK_FALSE(k.single_flow);
  CHECK(k.request_response);
}

TEST_CASE("engine_config of a job: its spec and its number of flows", "[engine]") {
  TestSpec s = rr(10, 10, 2);
  std::vector<FlowSlot> flows(3);
  WorkerJob job;
  job.index = 5;
  job.spec = &s;
  for (FlowSlot& f : flows)
    job.flows.push_back(&f);
  EngineConfig a = engine_config(job, outstanding(32));
  EngineConfig b = engine_config(s, 3, outstanding(32));
  CHECK(a.max_conns == b.max_conns);
  CHECK(a.queue_depth == 7);  // max(2 + 2, 4 + 3)
  CHECK(a.queue_depth == b.queue_depth);
  CHECK(a.buffers == 9);
  CHECK(a.buffers == b.buffers);
  CHECK(a.buffer_size == b.buffer_size);
  CHECK(a.single_flow == b.single_flow);
  CHECK(a.worker == 5);  // the job's: an RDMA engine finds the worker's connections by it
  CHECK(b.worker == 0);
}

TEST_CASE("worker_count and worker_of: flows dealt round-robin", "[engine]") {
  // threads 0: a worker per flow, up to 64.
  CHECK(worker_count(spec_of(Workload::stream, 4), 4) == 4);
  CHECK(worker_count(spec_of(Workload::stream, 100), 100) == 64);
  CHECK(worker_of(spec_of(Workload::stream, 100), 100, 70) == 6);
  // threads: at most the test's flows, at most the flows counted.
  TestSpec two = spec_of(Workload::stream, 5, 2);
  CHECK(worker_count(two, 5) == 2);
  std::vector<uint32_t> dealt;
  for (uint32_t i = 0; i < 5; ++i)
    dealt.push_back(worker_of(two, 5, i));
  CHECK(dealt == std::vector<uint32_t>{0, 1, 0, 1, 0});
  CHECK(worker_count(spec_of(Workload::rr, 3, 8), 3) == 3);
  CHECK(worker_count(spec_of(Workload::rr, 8, 8), 2) == 2);
  CHECK(worker_count(spec_of(Workload::rr, 3), 0) == 1);  // never none
  // bidir: flows per direction, so twice the flows.
  TestSpec bidir = spec_of(Workload::bidir, 3, 4);
  CHECK(worker_count(bidir, bidir.flows_total()) == 4);
  CHECK(worker_of(bidir, 6, 5) == 1);
  CHECK(worker_count(spec_of(Workload::bidir, 40), 80) == 64);
}

TEST_CASE("flow_setup: what set-up is told of a flow", "[engine]") {
  TestSpec s = spec_of(Workload::stream, 5, 2);
  FlowSetup f3 = flow_setup(s, 3, 0xabcdef, Caps{});
  CHECK(f3.flow == 3);
  CHECK(f3.cookie == 0xabcdef);
  CHECK(f3.proto == Proto::tcp);
  CHECK_FALSE(f3.per_transaction);
  CHECK_FALSE(f3.request_response);
  CHECK(f3.sock == &s.sock);
  CHECK(f3.worker == 1);
  CHECK(f3.engine.worker == 1);
  CHECK(f3.engine.max_conns == 2);  // worker 1 runs flows 1 and 3
  CHECK_FALSE(f3.engine.single_flow);
  FlowSetup f4 = flow_setup(s, 4, 1, Caps{});
  CHECK(f4.worker == 0);
  CHECK(f4.engine.max_conns == 3);  // worker 0 runs flows 0, 2 and 4
  CHECK(f4.engine.buffers == kSharedBuffers);

  TestSpec x = rr(100, 2000);
  x.workload = Workload::crr;
  FlowSetup c = flow_setup(x, 0, 7, Caps{});
  CHECK(c.per_transaction);
  CHECK(c.request_response);
  CHECK(c.worker == 0);
  CHECK(c.engine.max_conns == 4);
  CHECK(c.engine.single_flow);

  FlowSetup u = flow_setup(rr(100, 2000, 1, Proto::udp), 0, 7, Caps{});
  CHECK(u.proto == Proto::udp);
  CHECK(u.request_response);
  CHECK_FALSE(u.per_transaction);
  CHECK(u.engine.buffer_size == 2000);
  // A UDP rr client must see a lost answer after --udp-timeout, even blocked in a receive.
  CHECK(u.engine.max_block_ns == 100'000'000);
  CHECK(c.engine.max_block_ns == 0);
  CHECK(flow_setup(rr(100, 2000), 0, 7, Caps{}).engine.max_block_ns == 0);
  CHECK(flow_setup(stream(1000, Proto::udp), 0, 7, Caps{}).engine.max_block_ns == 0);
}

TEST_CASE("flow_setup sizes each flow's engine as the runner's dealing fills it", "[engine]") {
  for (Workload w : {Workload::stream, Workload::bidir, Workload::rr}) {
    for (uint32_t flows : {1u, 2u, 5u, 7u, 70u}) {
      for (uint32_t threads : {0u, 1u, 3u, 4u, 9u}) {
        TestSpec s = spec_of(w, flows, threads);
        const uint32_t n = s.flows_total();
        const uint32_t workers = worker_count(s, n);
        CAPTURE(to_string(w), flows, threads);
        // The runner's dealing: flow i to job i % workers.
        std::vector<uint32_t> on(workers, 0);
        for (uint32_t i = 0; i < n; ++i)
          ++on[i % workers];
        for (uint32_t i = 0; i < n; ++i) {
          FlowSetup f = flow_setup(s, i, 0, Caps{});
          REQUIRE(f.worker == i % workers);
          EngineConfig want = engine_config(s, on[f.worker], Caps{});
          REQUIRE(f.engine.max_conns == want.max_conns);
          REQUIRE(f.engine.buffers == want.buffers);
          REQUIRE(f.engine.single_flow == want.single_flow);
        }
      }
    }
  }
}
