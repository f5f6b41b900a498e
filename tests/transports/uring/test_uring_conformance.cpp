// Every workload over -T uring, end to end, under each combination of its options (its defaults
// run the conformance table with every other transport: tests/transports/conformance/): an
// in-process control server on 127.0.0.1 (port 0) and the client in this process, both sides on
// io_uring.
#include <catch2/catch.hpp>

#include <thread>

#include "control/client.hpp"
#include "control/local_server.hpp"
#include "control/server.hpp"
#include "report/summary.hpp"
#include "tests/support/skip.hpp"
#include "tests/transports/uring/uring_test_support.hpp"
#include "transports/uring/register.hpp"

using namespace mtperf;

MTPERF_TEST_REQUIRES(mtperf::test::why_no_uring({"multishot_recv", "link_cqe_skip"}));

namespace {

struct Case {
  const char* name;
  Workload workload;
  Proto proto = Proto::tcp;
  uint32_t flows = 1, threads = 0, burst = 1, req = 1, resp = 1;
  double rate_bps = 0;
};

void run_case(const Case& c, const std::string& server, const TransportParams& params = {}) {
  TestSpec s;
  s.workload = c.workload;
  s.proto = c.proto;
  s.transport = "uring";
  s.transport_params = params;
  s.duration_s = 0.5;
  s.warmup_s = 0.1;
  s.flows = c.flows;
  s.threads = c.threads;
  s.burst = c.burst;
  s.req_size = c.req;
  s.resp_size = c.resp;
  s.rate_bps = c.rate_bps;
  validate(s);
  control::ClientOptions o;
  o.server = server;
  control::TestOutcome out = control::run_test(s, o);
  Summary sum = summarize(s, out);
  std::string errors;
  for (auto& e : sum.errors)
    errors += "\n  error: " + e;
  INFO(c.name << errors);
  CHECK(sum.errors.empty());
  CHECK(out.client.errors.empty());
  REQUIRE(out.server.has_value());
  CHECK(out.server->errors.empty());
  if (c.workload == Workload::rr || c.workload == Workload::crr) {
    CHECK(sum.transactions > 0);
    CHECK(sum.transaction_rate > 0);
  } else {
    CHECK(sum.throughput_bps > 0);
  }
}

const Case kCases[] = {
    {"stream", Workload::stream},
    {"maerts", Workload::maerts},
    {"bidir", Workload::bidir},
    {"rr", Workload::rr},
    {"rr burst 8", Workload::rr, Proto::tcp, 1, 0, 8},
    {"crr", Workload::crr},
    {"udp stream 100M", Workload::stream, Proto::udp, 1, 0, 1, 1, 1, 100e6},
    {"udp rr 1024/2048", Workload::rr, Proto::udp, 1, 0, 1, 1024, 2048},
    {"rr 100 flows on 4 threads", Workload::rr, Proto::tcp, 100, 4},
};

void every_workload(const TransportParams& params) {
  control::LocalServer server;
  for (const Case& c : kCases) {
    SECTION(c.name) {
      run_case(c, server.address(), params);
    }
  }
}

}  // namespace

TEST_CASE("every workload with multishot receive and linked send->recv") {
  every_workload({{"multishot", "1"}, {"link", "1"}});
}

TEST_CASE("every workload with plain single receives, nothing linked") {
  every_workload({{"multishot", "0"}, {"link", "0"}, {"cqe_skip", "0"}});
}

TEST_CASE("every workload with single receives and linked send->recv") {
  every_workload({{"multishot", "0"}, {"link", "1"}});
}

TEST_CASE("every workload with multishot receive, sends signaled (cqe_skip off)") {
  every_workload({{"multishot", "1"}, {"cqe_skip", "0"}});
}

TEST_CASE("every workload with unsignaled sends over single receives, nothing linked") {
  every_workload({{"multishot", "0"}, {"link", "0"}, {"cqe_skip", "1"}});
}

TEST_CASE("every workload with unsignaled sends and linked send->recv, single receives") {
  every_workload({{"multishot", "0"}, {"link", "1"}, {"cqe_skip", "1"}});
}

TEST_CASE("every workload with a two-buffer multishot ring: receives keep running dry") {
  every_workload({{"multishot", "1"}, {"buf_ring", "2"}, {"link", "0"}});
}

TEST_CASE("options: zero-copy, fixed files and buffers, no single issuer") {
  control::LocalServer server;
  TransportParams params{
      {"zerocopy", "1"}, {"fixed_buffers", "1"}, {"fixed_files", "1"}, {"single_issuer", "0"}};
  SECTION("stream") {
    run_case({"stream", Workload::stream}, server.address(), params);
  }
  SECTION("crr") {
    run_case({"crr", Workload::crr}, server.address(), params);
  }
  SECTION("rr 16 flows 2 threads") {
    run_case({"rr", Workload::rr, Proto::tcp, 16, 2}, server.address(), params);
  }
}
