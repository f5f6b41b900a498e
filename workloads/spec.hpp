#pragma once
// A test, described once: the client builds it from the command line, sends it to the server in
// the control request, and both sides run it. Every field has a bound (kLimits) that the server
// checks before it sets anything up.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "transports/api/registry.hpp"
#include "transports/api/transport.hpp"

namespace mtperf {

enum class Workload : uint8_t { stream, maerts, bidir, rr, crr };
enum class Side : uint8_t { client, server };
// What a flow does on one side. Stream, maerts and bidir are roles given to flows.
enum class Role : uint8_t { sender, receiver, rr_client, rr_server, crr_client, crr_server };

std::string_view to_string(Workload w);
std::string_view to_string(Side s);
std::string_view to_string(Role r);
std::string_view to_string(Proto p);
std::string_view to_string(Wait w);
Workload parse_workload(std::string_view s);  // throws std::invalid_argument naming the value
Proto parse_proto(std::string_view s);
Wait parse_wait(std::string_view s);

struct Limits {
  // -P: flows per direction. The memory budget (workloads/memory.hpp) and the file and port
  // limits (platform/file_limit.hpp) bound a run well before this on most hosts.
  uint32_t max_flows = 100000;
  // Connections one side opens: bidir runs -P flows each way.
  uint32_t max_flows_total = 2 * max_flows;
  uint32_t max_threads = 256;
  uint32_t max_msg_size = 16u << 20;  // bytes
  uint32_t max_burst = 1024;
  double max_duration_s = 3600;
  double max_warmup_s = 600;
  double max_rate_bps = 1e13;
  // crr's --rate, connections/s over all flows, and the least a flow may be given (one every
  // 100 s: a longer gap would be a test without transactions).
  double max_conn_rate = 1e7;
  double min_conn_rate_per_flow = 0.01;
  uint32_t max_iterations = 100;
  // Interim reports: none (0) or at least this far apart, and at most max_intervals of them, so
  // the clock thread neither spins nor grows its list without bound.
  double min_interval_s = 0.05;
  uint32_t max_intervals = 10000;
  // A paced stream's rate per sending flow, when paced: below it the gap between two sends of
  // the largest message would not fit the worker's nanosecond clock arithmetic.
  double min_rate_per_flow_bps = 1000;
  size_t max_option_chars = 256;  // transport option keys and values
};
inline constexpr Limits kLimits{};
inline constexpr uint32_t kUdpHeaderBytes = 16;  // sequence number + send timestamp

struct TestSpec {
  Workload workload = Workload::stream;
  Proto proto = Proto::tcp;
  std::string transport{kDefaultTransport};
  TransportParams transport_params;
  double duration_s = 10;  // measured window
  double warmup_s = 0.5;   // excluded from the figures
  uint32_t flows = 1;      // per direction for bidir
  uint32_t threads = 0;    // worker threads per side; 0 = one per flow up to 64
  uint32_t msg_size = 0;   // stream send size, bytes; 0 = 64 KiB (TCP), 1472 (UDP)
  uint32_t req_size = 1;   // rr/crr request, bytes
  uint32_t resp_size = 1;  // rr/crr response, bytes
  uint32_t burst = 1;      // rr transactions in flight per flow
  double rate_bps = 0;     // stream pacing, bits/s over all flows; 0 = unpaced (UDP: 1 Gbit/s)
  double conn_rate = 0;    // crr pacing: new connections per second over all flows; 0 = unpaced
  Wait wait = Wait::block;
  SocketOptions sock;          // applied on both ends
  double interval_s = 0;       // interim reports; 0 = none
  double udp_timeout_s = 0.1;  // a UDP rr request unanswered this long is lost
  // The server address each flow's data socket listens on (numeric IPv4/IPv6, one per flow of
  // flows_total()), for tests over several adapters; empty: the address the client reached the
  // server by.
  std::vector<std::string> flow_servers;
  // false: counters only — no latency samples, no CPU, interrupt or TCP_INFO readings; for
  // measuring what the measurement costs (bench/measure_cost.sh).
  bool measure = true;
  // CPUs the server pins its workers to (worker i to entry i % size), as netperf's -T ,rcpu;
  // empty: not pinned.
  std::vector<int> server_cpus;
  // --verify: the seed of every flow's payload pattern (workloads/verify.hpp); both ends fill
  // what they send and check every byte they receive. 0 = no verification.
  uint64_t verify_seed = 0;
  // --stop-on-error: the server's runner also ends its window at its flows' first error or
  // --verify mismatch, and tells the client (STOP, control/protocol.hpp).
  bool stop_on_error = false;
  // --per-flow-latency: each flow keeps its own latency histogram (58 KiB a flow) for its own
  // percentiles; without it the latency histograms are per worker and merged, which gives the
  // same summary figures from the same samples.
  bool per_flow_latency = false;

  uint32_t flows_total() const;
  uint32_t stream_msg_size() const;
  double stream_rate_bps() const;
  uint32_t threads_effective() const;
};

// Role of flow `index` on `side`.
Role role_of(const TestSpec& spec, uint32_t index, Side side);
// The fields validate() checks. A front end names each by the option that sets it (`mtperf
// run`: cli/run_options.cpp), so an error never shows a field's internal name to a user.
enum class SpecField : uint8_t {
  flows,
  threads,
  duration,
  warmup,
  message_size,
  request_size,
  response_size,
  rr_size,  // request and response together (UDP's bounds)
  burst,
  conn_rate,
  rate,
  interval,
  udp_timeout,
  sndbuf,
  rcvbuf,
  busy_poll,
  congestion,
  bind_device,
  source,
  transport,
  transport_options,
  wait,
  workload,  // the workload against the protocol
  mptcp,
  server_cpus,
  flow_servers,
  mss,
};
inline constexpr SpecField kLastSpecField = SpecField::mss;
// The field's name in messages: "message size", "request/response size".
const char* to_string(SpecField f);

// What validate() throws: what() is "<to_string(field)>: <why>".
struct SpecError : std::invalid_argument {
  SpecError(SpecField f, const std::string& why_text)
      : std::invalid_argument(std::string(to_string(f)) + ": " + why_text),
        field(f),
        why(why_text) {}
  SpecField field;
  std::string why;
};

// Fills defaults and checks every field against kLimits and its neighbours; throws SpecError
// (a std::invalid_argument) with the field's name and the bound it broke.
void validate(TestSpec& spec);

void to_json(nlohmann::json& j, const TestSpec& s);
// Strict: unknown or mistyped fields throw std::invalid_argument naming the field.
void from_json(const nlohmann::json& j, TestSpec& s);

}  // namespace mtperf
