#pragma once
// `mtperf run --peer iperf3`: a test against an unmodified iperf3 3.x server. The control
// conversation is iperf3's (client_machine.hpp); the flows are mtperf's own, run by the same
// runner over the same transports, greeted with iperf3's cookie instead of mtperf's hello. The
// outcome holds both sides as `mtperf run` against `mtperf serve` does, the server's side made
// from iperf3's results (its per-stream bytes, retransmits and process CPU).
#include <optional>
#include <string>

#include "control/client.hpp"
#include "peers/iperf3/protocol.hpp"
#include "workloads/runner.hpp"
#include "workloads/spec.hpp"

namespace mtperf::iperf3 {

// What iperf3 can do with mtperf (the text of every refusal): for docs and errors.
inline constexpr const char* kCanDo =
    "an iperf3 server runs stream, maerts (-R) and bidir (--bidir) over TCP, and over UDP "
    "(-p udp, each sender paced at --rate), up to 128 flows (-P), over kernel sockets or "
    "io_uring";

// Throws RequestError (bad usage: exit 2, before anything connects) when iperf3 cannot run the
// test: rr, crr, a transport that is not a plain kernel socket on this
// host's stack, more than 128 flows, a warm-up that is not whole seconds, options iperf3 has no
// field for.
void check_request(const TestSpec& spec);

// How this client presents itself and how long it waits.
struct ClientSettings {
  std::string client_version = "mtperf";  // params' client_version
  int step_timeout_ms = 10000;            // each step of the conversation, and the connects
  // UDP: the datagrams' sequence numbers 64 bits wide (iperf3's udp_counters_64bit) or 32;
  // unset: 32, iperf3's default, unless the test may send 2^31 datagrams a stream.
  std::optional<bool> udp_counters_64bit;
  // Ask the server for its own report of the test (iperf3's --get-server-output): it comes back
  // in the results (Results::server_output_text).
  bool get_server_output = false;
};

struct Outcome {
  control::TestOutcome test;  // client: this side's runner; server: from iperf3's results
  Results server;             // the server's results as it sent them
  Params params;              // what was asked of the server
};

// Runs one test against the iperf3 server at opts.server (HOST[:PORT], port 5201 by default).
// Every step has a deadline; throws ProtocolError with the server's words when it refuses
// (busy: "the server is busy running a test"), std::runtime_error when it cannot be reached.
Outcome run_test(const TestSpec& spec, const control::ClientOptions& opts,
                 const ClientSettings& settings = {}, IntervalCallback on_interval = {});

}  // namespace mtperf::iperf3
