#pragma once
// A transport that runs a test against another tool's server on its own, because that tool's
// data phase is not mtperf's: the rdma transport against perftest's servers, which exchange
// queue-pair keys out of band and then count SENDs, WRITEs and READs in their own way. Its entry's
// `foreign` points at a ForeignPeerHook; the run layer (harness/peer_run.cpp, `mtperf run --peer
// NAME -T X -H HOST`) hands it the test as plain figures and shows what comes back beside the
// peer's own counts. Nothing outside transports/ knows the transport's types.
//
// Setup path: allocation and exceptions are fine. A hook is a static object; its functions may
// be called from any thread, one at a time.
#include <cstdint>
#include <string>
#include <string_view>

#include "platform/typed_options.hpp"
#include "stats/histogram.hpp"

namespace mtperf {

struct ForeignTest {
  std::string server;             // HOST[:PORT] as given (-H)
  bool request_response = false;  // rr: a latency program; else a bandwidth one
  bool server_sends = false;      // maerts: the data comes from the server (ib_read_bw)
  uint32_t size = 0;              // bytes per message, both ways for rr
  uint64_t count = 0;             // messages (stream) or round trips (rr): the server's iterations
  TransportParams params;         // the transport's -O options
  double timeout_s = 10;          // each step of the exchange; the data phase without progress
};

struct ForeignOutcome {
  std::string program;       // the peer's program that serves this test ("ib_write_bw")
  std::string peer_version;  // as the peer says it
  std::string settings;      // what was agreed, for the report ("rxe0 port 1, GID 1, MTU 1024")
  std::string witness;       // what the peer counts of this test, and where it says it
  uint64_t completed = 0;    // messages or round trips that completed here
  double seconds = 0;        // the first post to the last completion
  Histogram rtt;             // rr: each round trip, ns
  bool interrupted = false;
};

struct ForeignPeerHook {
  std::string_view peer;  // the --peer name ("perftest")
  uint16_t default_port = 0;
  uint64_t default_count = 0;  // iterations when --count is not given: the peer's own default
  // Why the transport cannot run t against the peer, or "" when it can; checked before anything
  // connects (-O options it does not take for this, a size or count out of range).
  std::string (*refusal)(const ForeignTest& t) = nullptr;
  // The command line the peer's server must be started with for t (its servers are one-shot
  // and must match the client), e.g. "ib_write_bw -n 1000 -s 65536 -F".
  std::string (*server_command)(const ForeignTest& t) = nullptr;
  // Runs t; throws std::runtime_error naming the step and what the peer said.
  ForeignOutcome (*run)(const ForeignTest& t) = nullptr;
};

}  // namespace mtperf
