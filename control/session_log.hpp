#pragma once
// The line `mtperf serve` logs for each connection when it ends (to stderr, which systemd sends
// to the journal), in key=value form so that a log reader can pick fields out:
//
//   client=10.0.0.7:41234 workload=rr proto=tcp transport=tcp flows=4 bytes_sent=4096
//   bytes_recv=4096 transactions=4096 result=ok
//   client=10.0.0.9:5120 result=refused reason="authentication failed: ..."
//   client=10.0.0.7:41236 workload=stream ... flows=1000 not_connected=3 ... result=ok
//
// (one line each). Values with a space, a quote, '=' or a backslash are quoted, with '"' and '\'
// escaped; control characters become spaces. Fields the server never learned are left out.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "workloads/spec.hpp"

namespace mtperf::control {

struct TestLog {
  enum class Result : uint8_t { ok, error, refused };
  std::string client;  // the peer's address and port
  // The peer protocol the test came in on (peers/: "iperf3"); empty: mtperf's own.
  std::string_view protocol;
  std::optional<TestSpec> spec;  // once the TEST was read
  uint64_t bytes_sent = 0;       // bytes, as the server's flows counted them (warm-up included)
  uint64_t bytes_recv = 0;
  uint64_t transactions = 0;  // rr and crr only
  bool counted = false;       // the test ran: the counts above are the server's
  uint64_t flow_errors = 0;   // errors the server's side of a finished test reported
  // Flows the client's START named as not connected: the test ran without them (not errors).
  uint32_t not_connected = 0;
  Result result = Result::ok;
  std::string why;  // the error, or why the test was refused
  // A refusal's step, for counting (metrics): allow (not from --allow), pending (dropped under
  // --max-pending), handshake (the exchange itself: a malformed frame, the deadline), auth (the
  // key), test (an invalid test description), transport (unknown or not usable here), limits
  // (over the server's policy or memory for one test), busy (no room beside the running tests).
  std::string_view refused_at;
};

std::string_view to_string(TestLog::Result r);

// The log line, without a trailing newline.
std::string format_test_log(const TestLog& log);

// `value` as a key=value value: bare when it can be, quoted otherwise.
std::string log_value(std::string_view value);

}  // namespace mtperf::control
