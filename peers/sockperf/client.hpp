#pragma once
// `mtperf run --peer sockperf -H HOST[:PORT]`: a test against an unmodified sockperf server
// (`sockperf sr`, port 11111 by default). sockperf has no control protocol, so this side only
// sends its messages (protocol.hpp) and times the pongs:
//   rr      sockperf's ping-pong: every message asks for a pong, one in flight; the round trips
//           are the latency figures;
//   rr at --rate  sockperf's under-load mode (`sockperf ul`): messages paced at --rate (bits/s),
//           every 100th asking for a pong (sockperf ul's default --reply-every), the others
//           counted silently; the pongs' round trips are the latency figures. A pong is awaited
//           before the next message goes (sockperf ul keeps sending meanwhile): at a rate whose
//           gap between messages is under a round trip, the schedule falls behind;
//   stream  sockperf's throughput mode: no message asks for a pong; the server counts them.
// TCP or UDP (-u), one flow, messages of -r SIZE (rr) or -m SIZE (stream) bytes (14, sockperf's
// default and smallest, unless given). sockperf sr tells its clients nothing: the witness on this
// side is the pongs (each one a message the server counted); the server prints its own total when
// it exits.
#include <cstdint>
#include <string>

#include "stats/histogram.hpp"
#include "workloads/spec.hpp"

namespace mtperf::sockperf {

inline constexpr const char* kCanDo =
    "a sockperf server (sockperf sr) runs rr (ping-pong) and stream (throughput, no pongs) over "
    "TCP or UDP, rr also under load at --rate (every 100th message asks for a pong), one flow, "
    "messages of 14..65507 bytes (rr: -r SIZE, stream: -m SIZE), over kernel sockets";

// Throws RequestError (exit 2, before anything connects) for what sockperf cannot do.
void check_request(const TestSpec& spec);
// The message size the test uses, bytes: rr's request size, stream's message size, or 14.
uint32_t message_size(const TestSpec& spec);

// Under load (rr at --rate): one message in this many asks for a pong (sockperf ul's default).
inline constexpr uint64_t kReplyEvery = 100;

struct Outcome {
  uint32_t msg_size = 0;       // bytes, header included
  uint64_t sent = 0;           // messages sent, warm-up included (all counted by sockperf sr)
  uint64_t pong_requests = 0;  // of them, those that asked for a pong
  uint64_t pongs = 0;          // pongs received (rr)
  uint64_t lost = 0;           // UDP rr: pongs not back within spec.udp_timeout_s
  double window_s = 0;         // the measured window, s
  uint64_t window_sent = 0, window_pongs = 0;
  Histogram latency;  // round trips in the window, ns
  bool interrupted = false;
};

// Runs one test against the sockperf server at server ("HOST[:PORT]"). The connect waits at most
// connect_timeout_ms, every send and every pong at most step_timeout_ms (TCP; a UDP pong
// spec.udp_timeout_s). Throws ProtocolError naming what the server sent wrong or did not send,
// std::runtime_error when it cannot be reached.
Outcome run_test(const TestSpec& spec, const std::string& server, int connect_timeout_ms = 5000,
                 int step_timeout_ms = 5000);

}  // namespace mtperf::sockperf
