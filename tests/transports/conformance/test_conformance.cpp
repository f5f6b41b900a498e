// The conformance cases of every registered transport that runs over loopback and whose probe
// says usable here: a transport gets these tests by registering (transports/api/registry.hpp).
// One case table — every workload of the table (workloads/kind.hpp) over TCP, UDP where the
// probe offers it, partial reads and writes with every byte checked, many flows on few
// threads, and the errors of a connect that cannot succeed — run end to end: an in-process
// control server on 127.0.0.1 (port 0) and the client in this process, both sides on the
// transport. The transports declared TEST_ONLY (tests/transports/<name>/, e.g. `memory`) are
// registered here too (this executable links the test registry). Transports that bring their own
// line (the emulated ATM line: clip, lane) run their cases over a line their hook builds in
// test_line_conformance.cpp, which needs root and namespaces; rdma runs
// tests/rdma_guest/rdma_conformance.sh in the soft-RoCE guest.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "bindings/workers.hpp"
#include "control/local_server.hpp"
#include "platform/clock.hpp"
#include "tests/support/conformance_case.hpp"
#include "transports/api/registry.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/kind.hpp"

using namespace mtperf;
using mtperf::test::Case;
using mtperf::test::run_case;

namespace {

// Every workload of the table over TCP, and over UDP those that carry datagrams; then the cases
// that stress a transport's edges.
std::vector<Case> cases(const ProbeResult& probe) {
  std::vector<Case> out;
  bool udp =
      std::find(probe.features.begin(), probe.features.end(), kFeatureUdp) != probe.features.end();
  for (const WorkloadKind* k : workload_kinds()) {
    out.push_back({.name = std::string(k->name), .workload = k->id});
    if (udp && !k->per_transaction) {
      Case c{.name = "udp " + std::string(k->name), .workload = k->id, .proto = Proto::udp};
      if (k->request_response) {
        c.req = 1024;
        c.resp = 2048;
      } else {
        c.rate_bps = 100e6;
      }
      out.push_back(c);
    }
  }
  // Sends far larger than a socket buffer: every send and receive is partial; every byte is
  // checked against the pattern it was sent with.
  out.push_back({.name = "stream of 1 MiB sends, verified", .msg = 1 << 20, .verify = true});
  out.push_back({.name = "bidir of 100 KB sends, verified",
                 .workload = Workload::bidir,
                 .msg = 100000,
                 .verify = true});
  // Requests and responses spanning many receives, both verified.
  out.push_back({.name = "rr 100000/300000, verified",
                 .workload = Workload::rr,
                 .req = 100000,
                 .resp = 300000,
                 .verify = true});
  out.push_back({.name = "rr burst 8", .workload = Workload::rr, .burst = 8});
  out.push_back(
      {.name = "rr 100 flows on 4 threads", .workload = Workload::rr, .flows = 100, .threads = 4});
  out.push_back({.name = "stream 16 flows on 2 threads", .flows = 16, .threads = 2});
  return out;
}

// The transports this binary runs: registered, usable here, over loopback.
std::vector<const TransportEntry*> loopback_transports() {
  std::vector<const TransportEntry*> out;
  for (const TransportEntry& e : transports()) {
    if (e.line) continue;  // runs over a line of its own (its hook), not loopback
    ProbeResult p = e.probe("/");
    if (!p.usable) {
      WARN("transport " << e.name << " is not usable here, its cases are not run: " << p.why);
      continue;
    }
    out.push_back(&e);
  }
  return out;
}

}  // namespace

TEST_CASE("conformance: the test build registers its test-only transports, each with its workload",
          "[conformance]") {
  // The test registry's objects must have taken the place of the product's registry and
  // bindings in this executable: the in-memory transport is listed, and every transport listed
  // usable here has its workload instantiation (else a run would fail with "no workload
  // instantiation").
  bool memory = false;
  for (const TransportEntry* e : loopback_transports()) {
    memory |= e->name == "memory";
    INFO(e->name);
    CHECK(runs_over(*e->create({})));
  }
  CHECK(memory);
}

TEST_CASE("conformance: every case over every usable transport", "[conformance]") {
  std::vector<const TransportEntry*> list = loopback_transports();
  REQUIRE_FALSE(list.empty());  // the default transport (kernel sockets) is usable everywhere
  control::LocalServer server;
  for (const TransportEntry* e : list) {
    for (const Case& c : cases(e->probe("/"))) {
      DYNAMIC_SECTION(e->name << ": " << c.name) {
        run_case(std::string(e->name), c, server.address());
      }
    }
  }
}

TEST_CASE("conformance: a connect nobody answers fails in time, naming the address",
          "[conformance]") {
  for (const TransportEntry* e : loopback_transports()) {
    DYNAMIC_SECTION(e->name) {
      std::unique_ptr<Transport> t = e->create({});
      TestSpec s;
      s.transport = std::string(e->name);
      validate(s);
      FlowSetup setup = flow_setup(s, 0, 1, t->caps());
      // A port that was just free: a listener on port 0 told its number, then closed.
      uint16_t port = 0;
      {
        std::unique_ptr<FlowListener> l = t->listen(numeric_address("127.0.0.1", 0), setup);
        port = l->port();
      }
      SockAddr to = numeric_address("127.0.0.1", port);
      int64_t start = now_ns();
      try {
        (void)t->connect(to, SockAddr{}, setup, deadline_in(2000));
        FAIL("connected to a closed port");
      } catch (const std::runtime_error& err) {
        CHECK_THAT(err.what(), Catch::Contains("127.0.0.1"));
      }
      CHECK(now_ns() - start < 3'000'000'000);
    }
  }
}
