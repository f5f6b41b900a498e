// The workload's roles (workloads/worker*.hpp) run by Worker<E> over test::MemoryEngine, an
// in-memory engine (tests/support/memory_engine.hpp): what a side counts is checked against
// what the other side counted, exactly, since nothing between them loses or holds bytes once
// both have ended. And how a flow ends when its peer goes away mid-test, as worker.hpp states
// it: the peer side is then played by the test through an engine of its own.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/support/memory_run.hpp"

using namespace mtperf;
using mtperf::test::MemoryEngine;
using mtperf::test::MemoryNetwork;
using mtperf::test::MemoryRun;

namespace {

constexpr double kWindowS = 0.3;

TestSpec spec_of(Workload w, uint32_t flows = 1, uint32_t threads = 0) {
  TestSpec s;
  s.workload = w;
  s.flows = flows;
  s.threads = threads;
  s.msg_size = 10000;  // neither a divisor of the pipe nor of the receive buffer
  s.req_size = 100;
  s.resp_size = 2000;
  s.verify_seed = 42;  // every received byte checked against what its sender wrote
  return s;
}

std::string error_of(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

// One direction of a stream: the receiver counts exactly what the sender counted, the sender's
// bytes are whole messages, and every byte arrived as sent.
void check_stream(MemoryRun& run, uint32_t flow, Side sender_side) {
  Side receiver_side = sender_side == Side::client ? Side::server : Side::client;
  FlowSlot& tx = run.slot(sender_side, flow);
  FlowSlot& rx = run.slot(receiver_side, flow);
  CAPTURE(flow, to_string(tx.role), to_string(rx.role));
  REQUIRE(tx.role == Role::sender);
  REQUIRE(rx.role == Role::receiver);
  CounterValues s = CounterValues::read(tx.counters), r = CounterValues::read(rx.counters);
  CHECK(s.bytes_sent > 0);
  CHECK(s.bytes_sent == s.msgs_sent * run.spec().msg_size);
  CHECK(r.bytes_recv == s.bytes_sent);
  CHECK(r.bytes_sent == 0);
  CHECK(s.bytes_recv == 0);
  // Each receive completes with 1..len bytes of the receiver's 64 KiB buffer.
  CHECK(r.msgs_recv >= (r.bytes_recv + 65535) / 65536);
  CHECK(r.msgs_recv <= r.bytes_recv);
  CHECK(s.errors + r.errors == 0);
  CHECK(rx.stats.verify.bytes_checked == r.bytes_recv);
  CHECK(rx.stats.verify.bad_receives == 0);
  CHECK(r.bad_receives == 0);
  CHECK(tx.stats.latency_count == 0);
}

// One rr or crr flow: both sides count the same transactions, each of whole requests and
// answers, and the client recorded a round trip for those of the measured window.
void check_transactions(MemoryRun& run, uint32_t flow) {
  const TestSpec& spec = run.spec();
  FlowSlot& client = run.slot(Side::client, flow);
  FlowSlot& server = run.slot(Side::server, flow);
  CounterValues c = CounterValues::read(client.counters);
  CounterValues s = CounterValues::read(server.counters);
  const uint64_t t = c.transactions;
  CAPTURE(flow, t);
  CHECK(t > 0);
  CHECK(s.transactions == t);
  CHECK(c.bytes_sent == t * spec.req_size);
  CHECK(c.msgs_sent == t);
  CHECK(s.bytes_recv == t * spec.req_size);
  CHECK(s.bytes_sent == t * spec.resp_size);
  CHECK(s.msgs_sent == t);
  CHECK(c.bytes_recv == t * spec.resp_size);
  CHECK(c.errors + s.errors == 0);
  CHECK(client.stats.latency_count > 0);
  CHECK(client.stats.latency_count <= t);
  CHECK(server.stats.latency_count == 0);
  CHECK(client.stats.verify.bytes_checked == c.bytes_recv);
  CHECK(server.stats.verify.bytes_checked == s.bytes_recv);
  CHECK(c.bad_receives + s.bad_receives == 0);
}

void run_whole(MemoryRun& run) {
  REQUIRE(run.run_for(kWindowS));
  CHECK(run.errors(Side::client) == "");
  CHECK(run.errors(Side::server) == "");
}

// The test's own end of one flow's link, driven one operation at a time.
class Peer {
 public:
  Peer(MemoryNetwork& net, Endpoint& ep) : e_(net, config()), conn_(e_.adopt(ep)) {}
  int conn() const { return conn_; }
  // Sends n bytes (one buffer at a time), each send waited for; the last status.
  int send(uint64_t n) {
    int rc = 0;
    while (n > 0 && rc >= 0) {
      Buf b = e_.pool().get(0);
      b.len = uint32_t(std::min<uint64_t>(n, b.len));
      rc = one(Op::send, b);
      n -= b.len;
    }
    return rc;
  }
  // Receives until n bytes have come or the peer has closed; how many came.
  uint64_t recv(uint64_t n) {
    uint64_t got = 0;
    while (got < n) {
      int rc = recv_once(uint32_t(std::min<uint64_t>(n - got, e_.pool().size())));
      if (rc <= 0) break;
      got += uint64_t(rc);
    }
    return got;
  }
  // One receive of at most len bytes: its status (bytes, 0 at EOF, -errno).
  int recv_once(uint32_t len) {
    Buf b = e_.pool().get(1);
    b.len = len;
    return one(Op::recv, b);
  }
  void shutdown_send() { e_.shutdown_send(conn_); }
  void close() { e_.close(conn_); }

 private:
  static EngineConfig config() {
    EngineConfig c;
    c.buffers = 2;
    c.buffer_size = 64 * 1024;
    return c;
  }
  // Posts one operation and waits for its completion, at most 10 s (-ETIMEDOUT).
  int one(Op op, Buf b) {
    WorkReq r;
    r.op = op;
    r.buf = b;
    if (e_.post(conn_, std::span<const WorkReq>(&r, 1)) != 1) return -ENOSPC;
    Completion c;
    int64_t until = now_ns() + 10'000'000'000;
    while (now_ns() < until) {
      if (e_.poll(std::span<Completion>(&c, 1), Wait::block, 10'000'000) == 1) return c.bytes;
    }
    return -ETIMEDOUT;
  }

  MemoryEngine e_;
  int conn_;
};

}  // namespace

TEST_CASE("the in-memory engine: completion semantics of transport.hpp", "[memory_engine]") {
  MemoryNetwork net(1, 0, 1000);
  auto ends = net.connect_pair();
  Peer a(net, *ends[0]), b(net, *ends[1]);
  REQUIRE(a.conn() >= 0);
  REQUIRE(b.conn() >= 0);
  // A receive completes with what is there (1..len), not with len.
  CHECK(a.send(300) == 300);
  CHECK(b.recv_once(1000) == 300);
  // A send larger than the pipe completes once the reader has made room for all of it.
  uint64_t got = 0;
  std::thread reader([&] { got = b.recv(2500); });  // Catch's checks stay on this thread
  CHECK(a.send(2500) == 2500);
  reader.join();
  CHECK(got == 2500);
  // A half-close: the bytes sent before it, then EOF, and EOF again.
  CHECK(a.send(10) == 10);
  a.shutdown_send();
  CHECK(b.recv_once(1000) == 10);
  CHECK(b.recv_once(1000) == 0);
  CHECK(b.recv_once(1000) == 0);
  CHECK(a.send(1) == -EPIPE);  // after its own shutdown
  // The other direction still works; a close: EOF there, and EPIPE for the closed end's peer.
  CHECK(b.send(7) == 7);
  CHECK(a.recv(7) == 7);
  a.close();
  CHECK(b.send(1) == -EPIPE);
}

TEST_CASE("the in-memory engine: a blocked poll returns at its timeout", "[memory_engine]") {
  MemoryNetwork net(1);
  auto ends = net.connect_pair();
  EngineConfig cfg;
  cfg.buffers = 1;
  cfg.buffer_size = 64;
  MemoryEngine e(net, cfg);
  int id = e.adopt(*ends[0]);
  REQUIRE(id >= 0);
  CHECK(e.adopt(*ends[0]) == -EINVAL);  // adopted once only
  WorkReq r;
  r.op = Op::recv;
  r.buf = e.pool().get(0);
  REQUIRE(e.post(id, std::span<const WorkReq>(&r, 1)) == 1);
  std::array<Completion, 4> out;
  for (Wait w : {Wait::none, Wait::spin}) {
    int64_t t0 = now_ns();
    CHECK(e.poll(out, w, 1'000'000'000) == 0);
    CHECK(now_ns() - t0 < 500'000'000);  // never sleeps
  }
  int64_t t0 = now_ns();
  CHECK(e.poll(out, Wait::block, 50'000'000) == 0);
  CHECK(now_ns() - t0 >= 50'000'000);
}

TEST_CASE("stream: the server receives exactly what the client sent", "[worker]") {
  MemoryRun run(spec_of(Workload::stream));
  run_whole(run);
  check_stream(run, 0, Side::client);
}

TEST_CASE("maerts: the client receives exactly what the server sent", "[worker]") {
  MemoryRun run(spec_of(Workload::maerts));
  run_whole(run);
  check_stream(run, 0, Side::server);
}

TEST_CASE("bidir: both directions, exactly, on one worker a side", "[worker]") {
  MemoryRun run(spec_of(Workload::bidir, 1, 1));
  run_whole(run);
  check_stream(run, 0, Side::client);  // the first half of the flows: client -> server
  check_stream(run, 1, Side::server);
}

TEST_CASE("stream: three flows over two workers a side", "[worker]") {
  MemoryRun run(spec_of(Workload::stream, 3, 2));
  run_whole(run);
  for (uint32_t i = 0; i < 3; ++i)
    check_stream(run, i, Side::client);
}

TEST_CASE("rr -r 100,2000: transactions equal on both sides, sizes respected", "[worker]") {
  uint32_t burst = GENERATE(1u, 4u);
  CAPTURE(burst);
  TestSpec spec = spec_of(Workload::rr);
  spec.burst = burst;
  MemoryRun run(spec);
  run_whole(run);
  check_transactions(run, 0);
}

TEST_CASE("rr under every wait mode", "[worker]") {
  Wait wait = GENERATE(Wait::block, Wait::spin, Wait::none);
  CAPTURE(to_string(wait));
  TestSpec spec = spec_of(Workload::rr, 2, 1);
  spec.wait = wait;
  MemoryRun run(spec);
  run_whole(run);
  check_transactions(run, 0);
  check_transactions(run, 1);
}

TEST_CASE("crr -r 100,2000: a connection per transaction, counted alike", "[worker]") {
  MemoryRun run(spec_of(Workload::crr));
  run_whole(run);
  check_transactions(run, 0);
}

TEST_CASE("crr: failed connects are counted by cause and tried again; the flow goes on",
          "[worker]") {
  MemoryRun run(spec_of(Workload::crr));
  run.network().fail_connects(5, EADDRNOTAVAIL);  // as when TIME_WAIT holds every local port
  run_whole(run);
  check_transactions(run, 0);
  const ConnectFailures& cf = run.slot(Side::client, 0).stats.connect_failures;
  CHECK(cf.no_port == 5);
  CHECK(cf.total() == 5);
  // Every connect of the measured window was timed.
  const WorkerJob& job = run.job(Side::client, 0);
  REQUIRE(job.connect_latency);
  CHECK(job.connect_latency->count() > 0);
  CHECK(job.connect_latency->count() <=
        run.counters(Side::client, 0).transactions + 1);  // +1: the last one opened
  CHECK_FALSE(run.job(Side::server, 0).connect_latency);
}

TEST_CASE("crr: connects failing for 2 s fail the flow, naming the error", "[worker]") {
  MemoryRun run(spec_of(Workload::crr));
  run.network().fail_connects(1u << 30, ECONNREFUSED);
  run.start();
  run.clock().phase.store(Phase::measure);
  CHECK(run.wait_ended(Side::client, 10));  // it gives up after 2 s of failures
  run.end();
  CHECK(run.errors(Side::client) ==
        "flow 0: " + error_of("crr connect (every try for 2 s)", ECONNREFUSED) + "\n");
  CHECK(run.slot(Side::client, 0).stats.connect_failures.refused > 100);  // retried each 1 ms
  CHECK(run.counters(Side::client, 0).transactions == 0);
}

TEST_CASE("crr --rate: each flow opens its connections at its share of the rate", "[worker]") {
  TestSpec spec = spec_of(Workload::crr, 2, 1);
  spec.conn_rate = 400;  // 200 a second a flow: one every 5 ms
  MemoryRun run(spec);
  const int64_t t0 = now_ns();
  run_whole(run);
  const double elapsed_s = double(now_ns() - t0) / 1e9;
  for (uint32_t i = 0; i < 2; ++i) {
    check_transactions(run, i);
    const double t = double(run.counters(Side::client, i).transactions);
    INFO("flow " << i << ": " << t << " transactions in " << elapsed_s << " s");
    CHECK(t <= 200 * elapsed_s + 3);  // one at the start, and the catch-up credit (10 ms)
    CHECK(t >= 200 * (elapsed_s - 0.1) * 0.5);
  }
}

TEST_CASE("a stream's receiver closing mid-test fails the sender's next send", "[worker]") {
  MemoryRun run(spec_of(Workload::stream));
  Peer receiver(run.network(), *run.slot(Side::server, 0).endpoint);
  run.start(Side::client);
  const uint64_t read = receiver.recv(300'000);
  CHECK(read == 300'000);
  receiver.close();
  // Not the end of the test: the sender's flow fails ("send", EPIPE) and its worker returns.
  REQUIRE(run.wait_ended(Side::client));
  run.join(Side::client);
  FlowSlot& f = run.slot(Side::client, 0);
  CounterValues c = CounterValues::read(f.counters);
  CHECK(f.stats.error == error_of("send", EPIPE));
  CHECK(c.errors == 1);
  // Only sends whole in the pipe count: what the peer read, and at most a pipe more.
  CHECK(c.bytes_sent == c.msgs_sent * run.spec().msg_size);
  CHECK(c.bytes_sent >= read);
  CHECK(c.bytes_sent <= read + MemoryNetwork::kDefaultPipeBytes);
  CHECK(run.clock().phase.load() == Phase::warmup);
}

TEST_CASE("a stream's sender half-closing mid-test ends the receiver cleanly", "[worker]") {
  TestSpec spec = spec_of(Workload::stream);
  spec.verify_seed = 0;  // the test's own bytes follow no pattern
  MemoryRun run(spec);
  Peer sender(run.network(), *run.slot(Side::client, 0).endpoint);
  run.start(Side::server);
  run.clock().phase.store(Phase::measure);
  CHECK(sender.send(123'457) > 0);
  sender.shutdown_send();
  // The receiver ends on EOF, in the middle of the window, and half-closes its side in turn.
  REQUIRE(run.wait_ended(Side::server));
  run.join(Side::server);
  CounterValues r = run.counters(Side::server, 0);
  CHECK(r.bytes_recv == 123'457);
  CHECK(r.errors == 0);
  CHECK(run.errors(Side::server) == "");
  CHECK(run.clock().phase.load() == Phase::measure);
  CHECK(sender.recv_once(100) == 0);
}

TEST_CASE("an rr server closing mid-test fails the client's flow", "[worker]") {
  TestSpec spec = spec_of(Workload::rr);
  spec.verify_seed = 0;
  MemoryRun run(spec);
  Peer server(run.network(), *run.slot(Side::server, 0).endpoint);
  run.start(Side::client);
  for (int i = 0; i < 5; ++i) {
    REQUIRE(server.recv(100) == 100);
    REQUIRE(server.send(2000) == 2000);
  }
  REQUIRE(server.recv(100) == 100);  // the sixth request, whole: then the server goes away
  server.close();
  REQUIRE(run.wait_ended(Side::client));
  run.join(Side::client);
  FlowSlot& f = run.slot(Side::client, 0);
  CounterValues c = CounterValues::read(f.counters);
  CHECK(f.stats.error == error_of("the server closed the connection during the test", ECONNRESET));
  CHECK(c.errors == 1);
  CHECK(c.transactions == 5);
  CHECK(c.msgs_sent == 6);
  CHECK(c.bytes_sent == 600);
  CHECK(c.bytes_recv == 10'000);
  CHECK(run.clock().phase.load() == Phase::warmup);
}

TEST_CASE("an rr server answers whole requests only, and ends on the client's EOF", "[worker]") {
  TestSpec spec = spec_of(Workload::rr);
  spec.verify_seed = 0;
  MemoryRun run(spec);
  Peer client(run.network(), *run.slot(Side::client, 0).endpoint);
  run.start(Side::server);
  auto& ctr = run.slot(Side::server, 0).counters;
  // 60 bytes of a 100-byte request: taken in, not answered.
  REQUIRE(client.send(60) == 60);
  int64_t until = now_ns() + 10'000'000'000;
  while (ctr.bytes_recv.load() < 60 && now_ns() < until)
    test::sleep_s(0.001);
  test::sleep_s(0.02);
  CHECK(ctr.bytes_recv.load() == 60);
  CHECK(ctr.transactions.load() == 0);
  CHECK(ctr.bytes_sent.load() == 0);
  // The rest of it: one answer of exactly 2000 bytes; then two requests in one send: two.
  REQUIRE(client.send(40) == 40);
  CHECK(client.recv(2000) == 2000);
  REQUIRE(client.send(200) == 200);
  CHECK(client.recv(4000) == 4000);
  client.shutdown_send();
  CHECK(client.recv_once(100) == 0);  // nothing more: the server half-closed in turn
  REQUIRE(run.wait_ended(Side::server));
  run.join(Side::server);
  CounterValues s = run.counters(Side::server, 0);
  CHECK(s.transactions == 3);
  CHECK(s.bytes_recv == 300);
  CHECK(s.bytes_sent == 6000);
  CHECK(s.msgs_sent == 3);
  CHECK(s.errors == 0);
  CHECK(run.errors(Side::server) == "");
  CHECK(run.clock().phase.load() == Phase::warmup);
}
