// The conformance cases of every registered transport that brings its own line (its entry's line
// hook, transports/api/line.hpp: the emulated ATM line of clip and lane), run over a line its hook
// builds: one adapter pair between two network namespaces, the server on a thread in the far one,
// the client in the near one, as `mtperf run -T NAME` does. A shorter table than the loopback
// one (test_conformance.cpp): every workload of the table over TCP, a UDP stream and a verified
// stream, a few seconds per transport; the line's own behaviour (rates, faults, captures) is
// tests/integration/test_atm*.cpp's. Needs root and network namespaces; skipped otherwise.
#include <catch2/catch.hpp>

#include <string>

#include "control/local_server.hpp"
#include "platform/netns.hpp"
#include "tests/support/conformance_case.hpp"
#include "tests/support/namespaces.hpp"
#include "transports/api/line.hpp"
#include "transports/api/registry.hpp"
#include "workloads/kind.hpp"

using namespace mtperf;
using mtperf::test::Case;
using mtperf::test::run_case;

MTPERF_TEST_REQUIRES(mtperf::test::why_no_namespaces("the line transports' conformance cases"));

namespace {

std::vector<Case> line_cases() {
  std::vector<Case> out;
  for (const WorkloadKind* k : workload_kinds())
    out.push_back({.name = std::string(k->name), .workload = k->id});
  out.push_back({.name = "udp stream", .proto = Proto::udp, .rate_bps = 50e6});
  out.push_back({.name = "stream of 100 KB sends, verified", .msg = 100000, .verify = true});
  return out;
}

}  // namespace

TEST_CASE("conformance: every transport with a line of its own, over a line its hook builds",
          "[conformance]") {
  int ran = 0;
  for (const TransportEntry& e : transports()) {
    if (!e.line) continue;
    const ProbeResult p = e.probe("/");
    if (!p.usable) {
      WARN("transport " << e.name << " is not usable here, its cases are not run: " << p.why);
      continue;
    }
    const std::string name(e.name);
    INFO(name);
    const Line line = e.line->build(name, 1, {});  // removed with the last copy
    REQUIRE_FALSE(line.hosts.links.empty());
    control::NamespaceServer server(line.hosts.far_ns);
    const std::string address = line.hosts.links[0].far_addr + ":" + std::to_string(server.port());
    // One line for all the cases (a section would build it again for each).
    for (const Case& c : line_cases()) {
      INFO(name << ": " << c.name);
      run_in(line.hosts.near_ns, [&] { run_case(name, c, address, {}, 0.3); });
    }
    ++ran;
  }
  if (ran == 0) WARN("no transport with a line of its own is usable here");
}
