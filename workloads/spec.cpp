#include "workloads/spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "workloads/json_field.hpp"
#include "workloads/kind.hpp"

namespace mtperf {

std::string_view to_string(Workload w) {
  return kind_of(w).name;
}

std::string_view to_string(Side s) {
  switch (s) {
    case Side::client:
      return "client";
    case Side::server:
      return "server";
  }
  return "?";
}

std::string_view to_string(Role r) {
  switch (r) {
    case Role::sender:
      return "sender";
    case Role::receiver:
      return "receiver";
    case Role::rr_client:
      return "rr_client";
    case Role::rr_server:
      return "rr_server";
    case Role::crr_client:
      return "crr_client";
    case Role::crr_server:
      return "crr_server";
  }
  return "?";
}

std::string_view to_string(Proto p) {
  switch (p) {
    case Proto::tcp:
      return "tcp";
    case Proto::udp:
      return "udp";
  }
  return "?";
}

std::string_view to_string(Wait w) {
  switch (w) {
    case Wait::spin:
      return "spin";
    case Wait::block:
      return "block";
    case Wait::none:
      return "none";
  }
  return "?";
}

Workload parse_workload(std::string_view s) {
  if (const WorkloadKind* k = find_kind(s)) return k->id;
  throw std::invalid_argument("unknown workload '" + std::string(s) + "' (" + workload_names(", ") +
                              ")");
}

Proto parse_proto(std::string_view s) {
  if (s == "tcp") return Proto::tcp;
  if (s == "udp") return Proto::udp;
  throw std::invalid_argument("unknown protocol '" + std::string(s) + "' (tcp, udp)");
}

Wait parse_wait(std::string_view s) {
  if (s == "spin") return Wait::spin;
  if (s == "block") return Wait::block;
  throw std::invalid_argument("unknown wait mode '" + std::string(s) + "' (spin, block)");
}

uint32_t TestSpec::stream_msg_size() const {
  if (msg_size != 0) return msg_size;
  return proto == Proto::tcp ? 64 * 1024 : 1472;
}

double TestSpec::stream_rate_bps() const {
  if (rate_bps > 0) return rate_bps;
  return proto == Proto::udp ? 1e9 : 0;
}

uint32_t TestSpec::threads_effective() const {
  if (threads != 0) return std::min(threads, flows_total());
  return std::min<uint32_t>(flows_total(), 64);
}

uint32_t TestSpec::flows_total() const {
  return kind_of(workload).flows_per_flow * flows;
}

Role role_of(const TestSpec& spec, uint32_t index, Side side) {
  return kind_of(spec.workload).role(index, spec.flows, side);
}

const char* to_string(SpecField f) {
  switch (f) {
    case SpecField::flows:
      return "flows";
    case SpecField::threads:
      return "threads";
    case SpecField::duration:
      return "duration";
    case SpecField::warmup:
      return "warmup";
    case SpecField::message_size:
      return "message size";
    case SpecField::request_size:
      return "request size";
    case SpecField::response_size:
      return "response size";
    case SpecField::rr_size:
      return "request/response size";
    case SpecField::burst:
      return "burst";
    case SpecField::conn_rate:
      return "conn_rate";
    case SpecField::rate:
      return "rate";
    case SpecField::interval:
      return "interval";
    case SpecField::udp_timeout:
      return "udp timeout";
    case SpecField::sndbuf:
      return "socket send buffer";
    case SpecField::rcvbuf:
      return "socket receive buffer";
    case SpecField::busy_poll:
      return "busy poll";
    case SpecField::congestion:
      return "congestion";
    case SpecField::bind_device:
      return "bind device";
    case SpecField::source:
      return "source";
    case SpecField::transport:
      return "transport";
    case SpecField::transport_options:
      return "transport options";
    case SpecField::wait:
      return "wait";
    case SpecField::workload:
      return "workload";
    case SpecField::mptcp:
      return "mptcp";
    case SpecField::server_cpus:
      return "server cpus";
    case SpecField::flow_servers:
      return "flow servers";
    case SpecField::mss:
      return "mss";
  }
  return "?";
}

namespace {

[[noreturn]] void bad(SpecField field, const std::string& why) {
  throw SpecError(field, why);
}

// A request's JSON that is not a test description at all (from_json).
[[noreturn]] void bad(const std::string& where, const std::string& why) {
  throw std::invalid_argument(where + ": " + why);
}

template <class T>
void check_range(SpecField field, T v, T lo, T hi) {
  if (!(v >= lo && v <= hi)) {
    bad(field, "value " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "]");
  }
}

void validate_udp(const TestSpec& s) {
  const WorkloadKind& kind = kind_of(s.workload);
  if (kind.per_transaction)
    bad(SpecField::workload,
        std::string(kind.name) + " needs a connection-oriented protocol (tcp)");
  uint32_t k = kUdpHeaderBytes;
  if (kind.request_response && (s.req_size < k || s.resp_size < k)) {
    bad(SpecField::rr_size, "UDP datagrams carry a " + std::to_string(k) +
                                "-byte sequence header; sizes must be at least " +
                                std::to_string(k) + " bytes");
  }
  if (!kind.request_response && s.stream_msg_size() < k) {
    bad(SpecField::message_size, "UDP datagrams must be at least " + std::to_string(k) + " bytes");
  }
  if (s.stream_msg_size() > 65507)
    bad(SpecField::message_size, "a UDP datagram carries at most 65507 bytes");
  if (s.req_size > 65507 || s.resp_size > 65507) {
    bad(SpecField::rr_size, "a UDP datagram carries at most 65507 bytes");
  }
}

void validate_pacing(const TestSpec& s) {
  check_range(SpecField::conn_rate, s.conn_rate, 0.0, kLimits.max_conn_rate);
  if (s.conn_rate > 0 && !kind_of(s.workload).per_transaction)
    bad(SpecField::conn_rate, "new connections per second pace crr only");
  if (s.conn_rate > 0 && s.conn_rate / s.flows < kLimits.min_conn_rate_per_flow) {
    bad(SpecField::conn_rate, std::to_string(s.conn_rate) + " connections/s over " +
                                  std::to_string(s.flows) + " flows is below " +
                                  std::to_string(kLimits.min_conn_rate_per_flow) + " per flow");
  }
  check_range(SpecField::rate, s.rate_bps, 0.0, kLimits.max_rate_bps);
  if (s.rate_bps == 0) return;
  uint32_t senders = kind_of(s.workload).request_response ? 0 : s.flows;
  if (senders > 0 && s.rate_bps / senders < kLimits.min_rate_per_flow_bps) {
    bad(SpecField::rate, std::to_string(s.rate_bps) + " bit/s over " + std::to_string(senders) +
                             " flows is below " + std::to_string(kLimits.min_rate_per_flow_bps) +
                             " bit/s per flow");
  }
}

void validate_interval(const TestSpec& s) {
  if (s.interval_s == 0) return;
  check_range(SpecField::interval, s.interval_s, kLimits.min_interval_s, kLimits.max_duration_s);
  if (s.duration_s / s.interval_s > kLimits.max_intervals) {
    bad(SpecField::interval, std::to_string(s.interval_s) + " s over a " +
                                 std::to_string(s.duration_s) + " s test makes more than " +
                                 std::to_string(kLimits.max_intervals) +
                                 " interim reports; choose a longer interval");
  }
}

void validate_names(const TestSpec& s) {
  if (s.sock.congestion.size() > 15) bad(SpecField::congestion, "name longer than 15 characters");
  for (char c : s.sock.congestion) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
      bad(SpecField::congestion, "name with a character other than a letter, digit, '_' or '-'");
  }
  if (s.sock.bind_device.size() > 15) bad(SpecField::bind_device, "name longer than 15 characters");
  if (s.sock.source.size() > 255) bad(SpecField::source, "longer than 255 characters");
  if (s.transport.empty() || s.transport.size() > 32) bad(SpecField::transport, "bad name");
  if (s.transport_params.size() > 64) bad(SpecField::transport_options, "more than 64");
  for (const auto& [k, v] : s.transport_params) {
    if (k.empty() || k.size() > kLimits.max_option_chars || v.size() > kLimits.max_option_chars)
      bad(SpecField::transport_options,
          "a key or value longer than " + std::to_string(kLimits.max_option_chars) + " characters");
  }
}

}  // namespace

void validate(TestSpec& s) {
  check_range(SpecField::flows, s.flows, 1u, kLimits.max_flows);
  check_range(SpecField::threads, s.threads, 0u, kLimits.max_threads);
  check_range(SpecField::duration, s.duration_s, 0.05, kLimits.max_duration_s);
  check_range(SpecField::warmup, s.warmup_s, 0.0, kLimits.max_warmup_s);
  check_range(SpecField::message_size, s.msg_size, 0u, kLimits.max_msg_size);
  check_range(SpecField::request_size, s.req_size, 1u, kLimits.max_msg_size);
  check_range(SpecField::response_size, s.resp_size, 1u, kLimits.max_msg_size);
  check_range(SpecField::burst, s.burst, 1u, kLimits.max_burst);
  validate_pacing(s);
  validate_interval(s);
  check_range(SpecField::udp_timeout, s.udp_timeout_s, 0.001, 10.0);
  check_range(SpecField::sndbuf, s.sock.sndbuf, 0, 1 << 30);
  check_range(SpecField::rcvbuf, s.sock.rcvbuf, 0, 1 << 30);
  check_range(SpecField::busy_poll, s.sock.busy_poll_us, 0, 1000000);
  // TCP's least segment (Linux's TCP_MIN_MSS) up to a 9 KiB jumbo frame's, as iperf3 takes it.
  if (s.sock.mss != 0) check_range(SpecField::mss, s.sock.mss, 88, 9216);
  if (s.sock.mss != 0 && s.proto == Proto::udp) bad(SpecField::mss, "a TCP option");
  validate_names(s);
  if (s.wait == Wait::none) bad(SpecField::wait, "must be spin or block");
  if (s.proto == Proto::udp) validate_udp(s);
  if (s.proto == Proto::udp && s.sock.mptcp) bad(SpecField::mptcp, "MPTCP is a TCP option");
  if (s.server_cpus.size() > kLimits.max_threads)
    bad(SpecField::server_cpus, "more than " + std::to_string(kLimits.max_threads));
  for (int cpu : s.server_cpus)
    check_range(SpecField::server_cpus, cpu, 0, 4095);
  if (!s.flow_servers.empty()) {
    if (s.flow_servers.size() != s.flows_total())
      bad(SpecField::flow_servers, std::to_string(s.flow_servers.size()) + " addresses for " +
                                       std::to_string(s.flows_total()) + " flows");
    for (const auto& a : s.flow_servers) {
      try {
        numeric_address(a, 0);
      } catch (const std::invalid_argument&) {
        bad(SpecField::flow_servers, "'" + a.substr(0, 64) + "' is not a numeric IP address");
      }
    }
  }
}

// The request's object of kernel-socket options (TestSpec::sock): named for the sockets they set,
// whatever the transport.
constexpr const char* kSocketOptionsKey = "socket";  // not a transport name

void to_json(nlohmann::json& j, const TestSpec& s) {
  j = nlohmann::json{
      {"workload", to_string(s.workload)},
      {"protocol", to_string(s.proto)},
      {"transport", s.transport},
      {"transport_options", s.transport_params},
      {"duration_s", s.duration_s},
      {"warmup_s", s.warmup_s},
      {"flows", s.flows},
      {"threads", s.threads},
      {"message_size", s.stream_msg_size()},
      {"request_size", s.req_size},
      {"response_size", s.resp_size},
      {"burst", s.burst},
      {"rate_bps", s.rate_bps},
      {"wait", to_string(s.wait)},
      {"interval_s", s.interval_s},
      {"udp_timeout_s", s.udp_timeout_s},
      {kSocketOptionsKey,
       {{"sndbuf", s.sock.sndbuf},
        {"rcvbuf", s.sock.rcvbuf},
        {"nodelay", s.sock.nodelay},
        {"congestion", s.sock.congestion},
        {"mptcp", s.sock.mptcp},
        {"busy_poll_us", s.sock.busy_poll_us}}},
  };
  if (!s.flow_servers.empty()) j["flow_servers"] = s.flow_servers;
  // Only when set: a server that predates it still takes every other request.
  if (s.sock.mss != 0) j[kSocketOptionsKey]["mss"] = s.sock.mss;
  if (!s.measure) j["measure"] = false;
  if (!s.server_cpus.empty()) j["server_cpus"] = s.server_cpus;
  if (s.verify_seed != 0) j["verify_seed"] = s.verify_seed;
  if (s.stop_on_error) j["stop_on_error"] = true;
  if (s.per_flow_latency) j["per_flow_latency"] = true;
  if (s.conn_rate > 0) j["conn_rate"] = s.conn_rate;
}

namespace {

void check_keys(const nlohmann::json& j, std::span<const std::string_view> known,
                const char* where) {
  for (auto& [k, v] : j.items()) {
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      bad(std::string(where) + "." + k.substr(0, 64), "unknown field");
    }
  }
}

// The fields a test's JSON may hold (to_json's): any other is refused.
constexpr std::string_view kTestKeys[] = {"workload",
                                          "protocol",
                                          "transport",
                                          "transport_options",
                                          "duration_s",
                                          "warmup_s",
                                          "flows",
                                          "threads",
                                          "message_size",
                                          "request_size",
                                          "response_size",
                                          "burst",
                                          "rate_bps",
                                          "wait",
                                          "interval_s",
                                          "udp_timeout_s",
                                          kSocketOptionsKey,
                                          "flow_servers",
                                          "measure",
                                          "server_cpus",
                                          "verify_seed",
                                          "stop_on_error",
                                          "per_flow_latency",
                                          "conn_rate"};
constexpr std::string_view kSocketKeys[] = {"sndbuf", "rcvbuf",       "nodelay", "congestion",
                                            "mptcp",  "busy_poll_us", "mss"};

void socket_from_json(const nlohmann::json& j, SocketOptions& sock) {
  namespace jf = json_field;
  if (!j.is_object()) bad("test.socket", "must be an object");
  check_keys(j, kSocketKeys, "test.socket");
  const std::string so = "test.socket";
  jf::optional(j, so, "sndbuf", sock.sndbuf);
  jf::optional(j, so, "rcvbuf", sock.rcvbuf);
  jf::optional(j, so, "nodelay", sock.nodelay);
  jf::optional(j, so, "congestion", sock.congestion);
  jf::optional(j, so, "mptcp", sock.mptcp);
  jf::optional(j, so, "busy_poll_us", sock.busy_poll_us);
  jf::optional(j, so, "mss", sock.mss);
}

}  // namespace

void from_json(const nlohmann::json& j, TestSpec& s) {
  namespace jf = json_field;
  if (!j.is_object()) bad("test", "must be an object");
  check_keys(j, kTestKeys, "test");
  const std::string t = "test";
  std::string w = "stream", p = "tcp", wait = "block";
  jf::optional(j, t, "workload", w);
  jf::optional(j, t, "protocol", p);
  jf::optional(j, t, "wait", wait);
  s.workload = parse_workload(w.substr(0, 64));
  s.proto = parse_proto(p.substr(0, 64));
  s.wait = parse_wait(wait.substr(0, 64));
  jf::optional(j, t, "transport", s.transport);
  jf::optional(j, t, "transport_options", s.transport_params);
  jf::optional(j, t, "duration_s", s.duration_s);
  jf::optional(j, t, "warmup_s", s.warmup_s);
  jf::optional(j, t, "flows", s.flows);
  jf::optional(j, t, "threads", s.threads);
  jf::optional(j, t, "message_size", s.msg_size);
  jf::optional(j, t, "request_size", s.req_size);
  jf::optional(j, t, "response_size", s.resp_size);
  jf::optional(j, t, "burst", s.burst);
  jf::optional(j, t, "rate_bps", s.rate_bps);
  jf::optional(j, t, "interval_s", s.interval_s);
  jf::optional(j, t, "udp_timeout_s", s.udp_timeout_s);
  jf::optional(j, t, "flow_servers", s.flow_servers);
  jf::optional(j, t, "measure", s.measure);
  jf::optional(j, t, "server_cpus", s.server_cpus);
  jf::optional(j, t, "verify_seed", s.verify_seed);
  jf::optional(j, t, "stop_on_error", s.stop_on_error);
  jf::optional(j, t, "per_flow_latency", s.per_flow_latency);
  jf::optional(j, t, "conn_rate", s.conn_rate);
  if (auto it = j.find(kSocketOptionsKey); it != j.end()) socket_from_json(*it, s.sock);
}

}  // namespace mtperf
