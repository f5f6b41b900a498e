#pragma once
// iperf3's control protocol, as its 3.x servers and clients speak it (read from esnet/iperf's
// iperf_api.c, iperf_client_api.c, iperf_server_api.c, iperf_tcp.c, iperf_udp.c; checked
// against Debian 12's iperf3 3.12). Pure: bytes in, messages and bytes out, no socket here.
//
//   client                                            server (port 5201)
//   connect, TCP_NODELAY
//   cookie: 36 of [a-z2-7] + NUL (37 bytes)  ------->
//                                            <-------  PARAM_EXCHANGE (9)   one signed byte
//   u32 BE length + params JSON               ------->
//                                            <-------  CREATE_STREAMS (10)
//   per stream: connect, the same cookie      ------->  (bidir: -P senders, then -P receivers)
//                                            <-------  TEST_START (1), TEST_RUNNING (2)
//   ... data: stream ids 1, 3, 4, 5 ... in the order the streams connected ...
//   TEST_END (4), also when the server sends  ------->
//                                            <-------  EXCHANGE_RESULTS (13)
//   u32 BE length + results JSON             ------->
//                                            <-------  u32 BE length + results JSON
//                                            <-------  DISPLAY_RESULTS (14)
//   IPERF_DONE (16), close                    ------->
//
// Refusals, at any point: ACCESS_DENIED (-1: "the server is busy running a test", or a data
// connection with a wrong cookie), SERVER_ERROR (-2) followed by two BE int32, iperf3's own
// error number and the system's errno; SERVER_TERMINATE (11) when the server is stopped.
//
// Hostile input: every JSON frame's length is capped before anything is allocated (iperf3's
// CVE-2023-38403 was a length of 0xffffffff wrapping to a zero-byte buffer), every field is
// type-checked and bounded (CVE-2024-53580: a string where a number was expected), and the
// callers read with deadlines (CVE-2023-7250: a peer that sends part of a message and waits).
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mtperf::iperf3 {

inline constexpr uint16_t kDefaultPort = 5201;
inline constexpr size_t kCookieBytes = 37;  // 36 characters of [a-z2-7] and a NUL
// iperf3 caps a stream count at 128 (-P).
inline constexpr uint32_t kMaxStreams = 128;
// Parameters: iperf3's own bound (MAX_PARAMS_JSON_STRING, 8 KiB).
inline constexpr uint32_t kMaxParamsBytes = 8 * 1024;
// Results without the server's output: a few hundred bytes a stream, 256 streams (bidir at -P
// 128) well inside. With --get-server-output they carry the server's whole report.
inline constexpr uint32_t kMaxResultsBytes = 256 * 1024;
inline constexpr uint32_t kMaxResultsWithOutputBytes = 4 * 1024 * 1024;
// A test's length and warm-up as a server accepts them, s.
inline constexpr int64_t kMaxTimeS = 86400;
inline constexpr int64_t kMaxOmitS = 600;
// UDP streams: the 4-byte greeting each way (host order on the wire, as iperf3 writes an int).
inline constexpr uint32_t kUdpConnectMsg = 0x36373839;
inline constexpr uint32_t kUdpConnectReply = 0x39383736;
inline constexpr uint32_t kLegacyUdpConnectReply = 987654321;

struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The state bytes (signed chars on the wire).
enum class State : int8_t {
  test_start = 1,
  test_running = 2,
  test_end = 4,
  param_exchange = 9,
  create_streams = 10,
  server_terminate = 11,
  client_terminate = 12,
  exchange_results = 13,
  display_results = 14,
  iperf_start = 15,
  iperf_done = 16,
  access_denied = -1,
  server_error = -2,
};
std::string_view to_string(State s);
// The state a byte names; nullopt for a byte that names none.
std::optional<State> state_of(uint8_t byte);
inline uint8_t byte_of(State s) {
  return uint8_t(int8_t(s));
}

using Cookie = std::array<uint8_t, kCookieBytes>;
// A fresh cookie from the system's random source.
Cookie make_cookie();
// 36 characters of [a-z2-7] and a NUL.
bool valid_cookie(std::span<const uint8_t> bytes);

// The id iperf3 gives the stream created index-th (0-based) on either side: 1, 3, 4, 5, ...
// (iperf_add_stream starts counting the second at 3; every 3.x keeps it for compatibility).
int32_t stream_id(uint32_t index);

// A JSON message: 4-byte big-endian length, then the text (cJSON_PrintUnformatted's).
std::vector<uint8_t> frame_json(const nlohmann::json& j);
// The length in a frame's first 4 bytes; throws ProtocolError naming `what` when over `cap`.
uint32_t frame_length(std::span<const uint8_t, 4> head, uint32_t cap, std::string_view what);
// The JSON object in `text`; throws ProtocolError naming `what` when it is not one.
nlohmann::json parse_object(std::string_view text, std::string_view what);

// The client's parameters (send_parameters/get_parameters). Absent fields are iperf3's
// defaults; flags are sent only when set, as iperf3 does.
struct Params {
  bool udp = false;
  int64_t omit_s = 0;
  int64_t time_s = 10;
  uint64_t num = 0, blockcount = 0;  // a byte or block count instead of a time (server side)
  int64_t mss = 0;                   // 0: the kernel's
  bool nodelay = false;
  int64_t parallel = 1;
  bool reverse = false, bidirectional = false;
  int64_t window = 0;      // socket buffers, bytes; 0: the kernel's
  int64_t len = 0;         // bytes per send (blksize); 0: iperf3's default (128 KiB TCP)
  uint64_t bandwidth = 0;  // bits/s; 0: unpaced TCP, 1 Mbit/s UDP
  std::string congestion;
  bool get_server_output = false;
  bool udp_counters_64bit = false;
  std::string client_version;
  bool authtoken = false;  // the client asked for authentication (its token is not kept)
};
nlohmann::json to_json(const Params& p);
// Strict: a field of the wrong type or out of its bound throws ProtocolError naming it; unknown
// fields are ignored, as 3.x servers ignore them.
Params params_from_json(const nlohmann::json& j);

// One stream of a side's results (send_results): bytes it sent (a sender, warm-up excluded) or
// received (a receiver).
struct StreamResult {
  int32_t id = 0;
  uint64_t bytes = 0;
  int64_t retransmits = -1;  // -1: not a sender, or no TCP_INFO
  double jitter_s = 0;
  int64_t errors = 0;   // UDP: datagrams lost
  int64_t packets = 0;  // UDP: datagrams
  double start_time = 0, end_time = 0;
};

struct Results {
  double cpu_util_total = 0, cpu_util_user = 0, cpu_util_system = 0;  // % of one CPU
  int32_t sender_has_retransmits = -1;
  std::string congestion_used;
  std::vector<StreamResult> streams;
  std::string server_output_text;  // --get-server-output, text form
  bool has_server_output_json = false;
};
nlohmann::json to_json(const Results& r);
// Strict, as params_from_json; at most 2 x kMaxStreams streams.
Results results_from_json(const nlohmann::json& j);

// iperf3's words for the error number a SERVER_ERROR carries (iperf_error.c's table, in our
// words for the codes a server sends), with the system's errno when it is set.
std::string server_error_text(int32_t iperf_errno, int32_t sys_errno);

}  // namespace mtperf::iperf3
