// Every workload over -T uring, end to end, under each combination of its options (its defaults
// run the conformance table with every other transport: tests/transports/conformance/): an
// in-process control server on 127.0.0.1 (port 0) and the client in this process, both sides on
// io_uring.
#include <catch2/catch.hpp>

#include <thread>

#include "control/local_server.hpp"
#include "control/server.hpp"
#include "tests/support/conformance_case.hpp"
#include "tests/support/skip.hpp"
#include "tests/transports/uring/uring_test_support.hpp"
#include "transports/uring/register.hpp"

using namespace mtperf;
using mtperf::test::Case;
using mtperf::test::run_case;

MTPERF_TEST_REQUIRES(mtperf::test::why_no_uring({"multishot_recv", "link_cqe_skip"}));

namespace {

const Case kCases[] = {
    {.name = "stream", .workload = Workload::stream},
    {.name = "maerts", .workload = Workload::maerts},
    {.name = "bidir", .workload = Workload::bidir},
    {.name = "rr", .workload = Workload::rr},
    {.name = "rr burst 8", .workload = Workload::rr, .burst = 8},
    {.name = "crr", .workload = Workload::crr},
    {.name = "udp stream 100M",
     .workload = Workload::stream,
     .proto = Proto::udp,
     .rate_bps = 100e6},
    {.name = "udp rr 1024/2048",
     .workload = Workload::rr,
     .proto = Proto::udp,
     .req = 1024,
     .resp = 2048},
    {.name = "rr 100 flows on 4 threads", .workload = Workload::rr, .flows = 100, .threads = 4},
};

void every_workload(const TransportParams& params) {
  control::LocalServer server;
  for (const Case& c : kCases) {
    SECTION(c.name) {
      run_case("uring", c, server.address(), params, 0.5);
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
    run_case("uring", {.name = "stream", .workload = Workload::stream}, server.address(), params,
             0.5);
  }
  SECTION("crr") {
    run_case("uring", {.name = "crr", .workload = Workload::crr}, server.address(), params, 0.5);
  }
  SECTION("rr 16 flows 2 threads") {
    run_case("uring", {.name = "rr", .workload = Workload::rr, .flows = 16, .threads = 2},
             server.address(), params, 0.5);
  }
}
