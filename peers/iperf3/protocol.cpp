#include "peers/iperf3/protocol.hpp"

#include <arpa/inet.h>

#include <cmath>
#include <cstring>
#include <random>

namespace mtperf::iperf3 {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad(std::string_view what, const std::string& why) {
  throw ProtocolError(std::string(what) + ": " + why);
}

// A whole number in [lo, hi]: cJSON hands iperf3 a double, so 1e3 and 1000 are the same; a
// fraction, a string or a bool is not a number here.
int64_t whole(const json& j, std::string_view what, int64_t lo, int64_t hi) {
  if (!j.is_number()) bad(what, std::string("expected a number, got ") + j.type_name());
  double v = j.get<double>();
  if (!std::isfinite(v) || v != std::floor(v) || v < double(lo) || v > double(hi))
    bad(what, "expected a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                  "], got " + j.dump());
  return int64_t(v);
}

// -1 as iperf3 3.12 writes it: its cJSON turns the int64 -1 into an unsigned 2^64
// (1.8446744073709552e+19) for sender_has_retransmits and a receiver's retransmits.
int64_t minus_one_or_whole(const json& j, std::string_view what, int64_t hi) {
  if (j.is_number() && j.get<double>() >= 18446744073709549568.0 &&
      j.get<double>() <= 18446744073709551616.0)
    return -1;
  return whole(j, what, -1, hi);
}

double real(const json& j, std::string_view what, double lo, double hi) {
  if (!j.is_number()) bad(what, std::string("expected a number, got ") + j.type_name());
  double v = j.get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) bad(what, "out of range: " + j.dump());
  return v;
}

std::string text(const json& j, std::string_view what, size_t max) {
  if (!j.is_string()) bad(what, std::string("expected a string, got ") + j.type_name());
  const std::string& s = j.get_ref<const std::string&>();
  if (s.size() > max) bad(what, "longer than " + std::to_string(max) + " bytes");
  return s;
}

// iperf3 sends its flags as `true` or as 1 (get_server_output, udp_counters_64bit); a server
// takes the field's presence. Anything but a bool or a number is refused.
bool flag(const json& j, std::string_view what) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number()) return j.get<double>() != 0;
  bad(what, std::string("expected true or a number, got ") + j.type_name());
}

const json* field(const json& j, const char* name) {
  auto it = j.find(name);
  return it == j.end() ? nullptr : &*it;
}

}  // namespace

std::string_view to_string(State s) {
  switch (s) {
    case State::test_start:
      return "TEST_START";
    case State::test_running:
      return "TEST_RUNNING";
    case State::test_end:
      return "TEST_END";
    case State::param_exchange:
      return "PARAM_EXCHANGE";
    case State::create_streams:
      return "CREATE_STREAMS";
    case State::server_terminate:
      return "SERVER_TERMINATE";
    case State::client_terminate:
      return "CLIENT_TERMINATE";
    case State::exchange_results:
      return "EXCHANGE_RESULTS";
    case State::display_results:
      return "DISPLAY_RESULTS";
    case State::iperf_start:
      return "IPERF_START";
    case State::iperf_done:
      return "IPERF_DONE";
    case State::access_denied:
      return "ACCESS_DENIED";
    case State::server_error:
      return "SERVER_ERROR";
  }
  return "?";
}

std::optional<State> state_of(uint8_t byte) {
  auto s = State(int8_t(byte));
  switch (s) {
    case State::test_start:
    case State::test_running:
    case State::test_end:
    case State::param_exchange:
    case State::create_streams:
    case State::server_terminate:
    case State::client_terminate:
    case State::exchange_results:
    case State::display_results:
    case State::iperf_start:
    case State::iperf_done:
    case State::access_denied:
    case State::server_error:
      return s;
  }
  return std::nullopt;
}

Cookie make_cookie() {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::random_device rd;
  Cookie c{};
  for (size_t i = 0; i + 1 < kCookieBytes; ++i)
    c[i] = uint8_t(kAlphabet[rd() % 32]);
  c[kCookieBytes - 1] = 0;
  return c;
}

bool valid_cookie(std::span<const uint8_t> bytes) {
  if (bytes.size() != kCookieBytes || bytes[kCookieBytes - 1] != 0) return false;
  for (size_t i = 0; i + 1 < kCookieBytes; ++i) {
    uint8_t b = bytes[i];
    if (!((b >= 'a' && b <= 'z') || (b >= '2' && b <= '7'))) return false;
  }
  return true;
}

int32_t stream_id(uint32_t index) {
  return index == 0 ? 1 : int32_t(index) + 2;
}

std::vector<uint8_t> frame_json(const json& j) {
  const std::string body = j.dump();
  const uint32_t n = htonl(uint32_t(body.size()));
  std::vector<uint8_t> out(4 + body.size());
  std::memcpy(out.data(), &n, 4);
  std::memcpy(out.data() + 4, body.data(), body.size());
  return out;
}

uint32_t frame_length(std::span<const uint8_t, 4> head, uint32_t cap, std::string_view what) {
  uint32_t n;
  std::memcpy(&n, head.data(), 4);
  n = ntohl(n);
  if (n > cap)
    bad(what,
        "announces " + std::to_string(n) + " bytes, over the bound of " + std::to_string(cap));
  return n;
}

json parse_object(std::string_view body, std::string_view what) {
  json j = json::parse(body.begin(), body.end(), nullptr, false);
  if (j.is_discarded()) bad(what, "not valid JSON");
  if (!j.is_object()) bad(what, std::string("expected a JSON object, got ") + j.type_name());
  return j;
}

json to_json(const Params& p) {
  json j = json::object();
  j[p.udp ? "udp" : "tcp"] = true;
  j["omit"] = p.omit_s;
  j["time"] = p.time_s;
  j["num"] = p.num;
  j["blockcount"] = p.blockcount;
  if (p.mss) j["MSS"] = p.mss;
  if (p.nodelay) j["nodelay"] = true;
  j["parallel"] = p.parallel;
  if (p.reverse) j["reverse"] = true;
  if (p.bidirectional) j["bidirectional"] = true;
  if (p.window) j["window"] = p.window;
  if (p.len) j["len"] = p.len;
  if (p.bandwidth) j["bandwidth"] = p.bandwidth;
  if (!p.congestion.empty()) j["congestion"] = p.congestion;
  if (p.get_server_output) j["get_server_output"] = 1;
  if (p.udp_counters_64bit) j["udp_counters_64bit"] = 1;
  j["client_version"] = p.client_version;
  return j;
}

Params params_from_json(const json& j) {
  Params p;
  const json* f = nullptr;
  const bool tcp = (f = field(j, "tcp")) && flag(*f, "parameter tcp");
  p.udp = (f = field(j, "udp")) && flag(*f, "parameter udp");
  if ((f = field(j, "sctp")) && flag(*f, "parameter sctp"))
    bad("parameter sctp", "SCTP is not served here (TCP and UDP are)");
  if (tcp && p.udp) bad("parameters", "both tcp and udp");
  if ((f = field(j, "omit"))) p.omit_s = whole(*f, "parameter omit", 0, kMaxOmitS);
  if ((f = field(j, "time"))) p.time_s = whole(*f, "parameter time", 0, kMaxTimeS);
  if ((f = field(j, "num"))) p.num = uint64_t(whole(*f, "parameter num", 0, int64_t(1) << 50));
  if ((f = field(j, "blockcount")))
    p.blockcount = uint64_t(whole(*f, "parameter blockcount", 0, int64_t(1) << 40));
  if ((f = field(j, "MSS"))) p.mss = whole(*f, "parameter MSS", 0, 9216);
  if ((f = field(j, "nodelay"))) p.nodelay = flag(*f, "parameter nodelay");
  if ((f = field(j, "parallel"))) p.parallel = whole(*f, "parameter parallel", 1, kMaxStreams);
  if ((f = field(j, "reverse"))) p.reverse = flag(*f, "parameter reverse");
  if ((f = field(j, "bidirectional"))) p.bidirectional = flag(*f, "parameter bidirectional");
  if (p.reverse && p.bidirectional) bad("parameters", "both reverse and bidirectional");
  if ((f = field(j, "window"))) p.window = whole(*f, "parameter window", 0, 512 << 20);
  if ((f = field(j, "len"))) p.len = whole(*f, "parameter len", 0, 16 << 20);
  if ((f = field(j, "bandwidth")))
    p.bandwidth = uint64_t(whole(*f, "parameter bandwidth", 0, int64_t(1e13)));
  if ((f = field(j, "congestion"))) p.congestion = text(*f, "parameter congestion", 16);
  if ((f = field(j, "get_server_output")))
    p.get_server_output = flag(*f, "parameter get_server_output");
  if ((f = field(j, "udp_counters_64bit")))
    p.udp_counters_64bit = flag(*f, "parameter udp_counters_64bit");
  if ((f = field(j, "client_version"))) p.client_version = text(*f, "parameter client_version", 64);
  if ((f = field(j, "authtoken"))) {
    text(*f, "parameter authtoken", 4096);
    p.authtoken = true;
  }
  return p;
}

json to_json(const Results& r) {
  json j = json::object();
  j["cpu_util_total"] = r.cpu_util_total;
  j["cpu_util_user"] = r.cpu_util_user;
  j["cpu_util_system"] = r.cpu_util_system;
  j["sender_has_retransmits"] = r.sender_has_retransmits;
  if (!r.congestion_used.empty()) j["congestion_used"] = r.congestion_used;
  json streams = json::array();
  for (const StreamResult& s : r.streams) {
    streams.push_back({{"id", s.id},
                       {"bytes", s.bytes},
                       {"retransmits", s.retransmits},
                       {"jitter", s.jitter_s},
                       {"errors", s.errors},
                       {"packets", s.packets},
                       {"start_time", s.start_time},
                       {"end_time", s.end_time}});
  }
  j["streams"] = std::move(streams);
  if (!r.server_output_text.empty()) j["server_output_text"] = r.server_output_text;
  return j;
}

Results results_from_json(const json& j) {
  Results r;
  auto need = [&](const char* name) -> const json& {
    const json* f = field(j, name);
    if (!f) bad("results", std::string("no ") + name);
    return *f;
  };
  r.cpu_util_total = real(need("cpu_util_total"), "results cpu_util_total", 0, 1e6);
  r.cpu_util_user = real(need("cpu_util_user"), "results cpu_util_user", 0, 1e6);
  r.cpu_util_system = real(need("cpu_util_system"), "results cpu_util_system", 0, 1e6);
  r.sender_has_retransmits = int32_t(
      minus_one_or_whole(need("sender_has_retransmits"), "results sender_has_retransmits", 1));
  if (const json* f = field(j, "congestion_used"))
    r.congestion_used = text(*f, "results congestion_used", 16);
  const json& streams = need("streams");
  if (!streams.is_array())
    bad("results streams", std::string("expected an array, got ") + streams.type_name());
  if (streams.size() > 2 * kMaxStreams)
    bad("results streams", std::to_string(streams.size()) + " streams, over the bound of " +
                               std::to_string(2 * kMaxStreams));
  for (const json& s : streams) {
    if (!s.is_object())
      bad("results stream", std::string("expected an object, got ") + s.type_name());
    auto get = [&](const char* name) -> const json& {
      const json* f = field(s, name);
      if (!f) bad("results stream", std::string("no ") + name);
      return *f;
    };
    StreamResult x;
    x.id = int32_t(whole(get("id"), "results stream id", 1, 1 << 20));
    x.bytes = uint64_t(whole(get("bytes"), "results stream bytes", 0, int64_t(1) << 62));
    x.retransmits =
        minus_one_or_whole(get("retransmits"), "results stream retransmits", int64_t(1) << 40);
    x.jitter_s = real(get("jitter"), "results stream jitter", 0, 1e6);
    x.errors = whole(get("errors"), "results stream errors", -1, int64_t(1) << 62);
    x.packets = whole(get("packets"), "results stream packets", 0, int64_t(1) << 62);
    if (const json* f = field(s, "start_time"))
      x.start_time = real(*f, "results stream start_time", 0, 1e9);
    if (const json* f = field(s, "end_time"))
      x.end_time = real(*f, "results stream end_time", 0, 1e9);
    r.streams.push_back(x);
  }
  if (const json* f = field(j, "server_output_text"))
    r.server_output_text = text(*f, "results server_output_text", kMaxResultsWithOutputBytes);
  if (const json* f = field(j, "server_output_json")) {
    if (!f->is_object()) bad("results server_output_json", "expected an object");
    r.has_server_output_json = true;
  }
  return r;
}

namespace {

// What iperf3's error numbers (iperf_api.h) a server answers with mean, for a user.
struct ServerError {
  int32_t code;
  const char* what;
};
constexpr ServerError kServerErrors[] = {
    {5, "the test is too long for the server"},
    {6, "too many parallel streams for the server"},
    {7, "the block size (-m) is out of the server's range"},
    {20, "the block size (-m) is out of the server's range"},
    {8, "the socket buffer (--window) is too large for the server"},
    {10, "the MSS is too large for the server"},
    {27, "the total rate is over the server's limit"},
    {102, "the server cannot listen for connections"},
    {104, "the server cannot accept the connection"},
    {106, "the server could not read the cookie"},
    {114, "the server could not read the parameters"},
    {117, "the server could not read the results"},
    {121, "the server is busy running a test, try again later"},
    {123, "the server cannot set the MSS"},
    {124, "the server cannot set the socket buffer size"},
    {130, "the server cannot set the socket buffer size"},
    {141, "the server cannot set the socket buffer size"},
    {134, "the server cannot set the congestion control"},
    {142, "the test's authorization failed (the server wants a user name and password)"},
    {144, "the server received nothing for too long"},
    {200, "the server cannot create a stream"},
    {202, "the server cannot listen for the streams"},
    {204, "the server cannot accept a stream"},
    {206, "the server cannot read from a stream"},
};

}  // namespace

std::string server_error_text(int32_t iperf_errno, int32_t sys_errno) {
  std::string what = "iperf3 error " + std::to_string(iperf_errno);
  for (const ServerError& e : kServerErrors)
    if (e.code == iperf_errno) what = e.what;
  what += " (SERVER_ERROR " + std::to_string(iperf_errno);
  if (sys_errno > 0 && sys_errno < 4096) what += ", " + std::string(std::strerror(sys_errno));
  return what + ")";
}

}  // namespace mtperf::iperf3
