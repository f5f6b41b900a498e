#pragma once
// The client side of a test: connects to an mtperf server, sends the test, opens the data
// connections, runs its flows and collects the server's figures.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workloads/runner.hpp"
#include "workloads/spec.hpp"

namespace mtperf::control {

struct ClientOptions {
  std::string server = "127.0.0.1";  // HOST or HOST:PORT
  std::string key;                   // pre-shared key, when the server wants one
  int connect_timeout_ms = 5000;
  std::vector<int> cpus;  // worker CPUs on the client, empty = not pinned
  // Multi-adapter tests: the local address each flow leaves from (flow i uses entry i % size);
  // each goes to the server's address on the same subnet. Empty: every flow from any address
  // to the server's control address.
  std::vector<std::string> flow_sources;
  // Memory this side's share of a test may take (workloads/memory.hpp), bytes; 0 = the default
  // (1 GiB, or a quarter of this host's memory when that is less).
  uint64_t max_memory = 0;
  // The server runs in this process (mtperf run without -H): its connections count against
  // this process's file limit too.
  bool server_in_process = false;
  // Every flow must connect (mtperf run --need-all): a flow that cannot fails the test before
  // any traffic. Without it the test goes on with the flows that connected, and names the others.
  bool need_all = false;
};

// A flow whose data connection could not be made: its id and why.
struct FlowFailure {
  uint32_t flow = 0;
  std::string error;
};

struct TestOutcome {
  SideResult client;
  std::optional<SideResult> server;
  std::string server_address;
  // Per flow (flows_total()), when flow_sources were given: where it left from and went to.
  std::vector<std::string> flow_sources, flow_servers;
  // What the client's transport used after probing and fallbacks (empty for plain sockets).
  std::map<std::string, std::string> transport_settings;
  // From the TEST request to the last flow connected: the server's listeners and the client's
  // connections, s.
  double setup_s = 0;
  // The flows asked for (TestSpec::flows_total()) and those of them that did not connect,
  // ascending by id; client and server ran the others, under their own ids.
  uint32_t flows_asked = 0;
  std::vector<FlowFailure> not_connected;
};

// Runs one test. Throws std::runtime_error (ProtocolError) with one clear line: unreachable
// server, refused connection, transport not usable, a field the server rejected, no flow
// connected (or, with need_all, one flow that did not: "flow 17: connect to ...").
TestOutcome run_test(const TestSpec& spec, const ClientOptions& opts,
                     IntervalCallback on_interval = {});

}  // namespace mtperf::control
