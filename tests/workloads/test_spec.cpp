// The test description on the wire: it survives a JSON round trip, and the server's checks name
// the field that broke a rule.
#include <limits>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "workloads/spec.hpp"

using namespace mtperf;

namespace {

TestSpec a_spec() {
  TestSpec s;
  s.workload = Workload::bidir;
  s.proto = Proto::tcp;
  s.transport = "socket";
  s.transport_params = {{"depth", "8"}};
  s.duration_s = 2.5;
  s.warmup_s = 0.25;
  s.flows = 3;
  s.threads = 2;
  s.msg_size = 8192;
  s.req_size = 100;
  s.resp_size = 2000;
  s.burst = 4;
  s.rate_bps = 5e8;
  s.wait = Wait::spin;
  s.interval_s = 0.5;
  s.udp_timeout_s = 0.2;
  s.sock.sndbuf = 1 << 20;
  s.sock.rcvbuf = 1 << 21;
  s.sock.nodelay = false;
  s.sock.congestion = "cubic";
  s.sock.busy_poll_us = 50;
  return s;
}

TestSpec from(const nlohmann::json& j) {
  TestSpec s;
  from_json(j, s);
  return s;
}

// Checks that validate() throws and that the message names `field`.
void rejects(TestSpec s, const std::string& field) {
  CAPTURE(field);
  CHECK_THROWS_AS(validate(s), std::invalid_argument);
  CHECK_THROWS_WITH(validate(s), Catch::StartsWith(field + ":"));
}

}  // namespace

TEST_CASE("a test description survives a JSON round trip", "[spec]") {
  const TestSpec s = a_spec();
  nlohmann::json j = s;
  TestSpec back = from(nlohmann::json::parse(j.dump()));
  CHECK(back.workload == s.workload);
  CHECK(back.proto == s.proto);
  CHECK(back.transport == s.transport);
  CHECK(back.transport_params == s.transport_params);
  CHECK(back.duration_s == s.duration_s);
  CHECK(back.warmup_s == s.warmup_s);
  CHECK(back.flows == s.flows);
  CHECK(back.threads == s.threads);
  CHECK(back.msg_size == s.msg_size);
  CHECK(back.req_size == s.req_size);
  CHECK(back.resp_size == s.resp_size);
  CHECK(back.burst == s.burst);
  CHECK(back.rate_bps == s.rate_bps);
  CHECK(back.wait == s.wait);
  CHECK(back.interval_s == s.interval_s);
  CHECK(back.udp_timeout_s == s.udp_timeout_s);
  CHECK(back.sock.sndbuf == s.sock.sndbuf);
  CHECK(back.sock.rcvbuf == s.sock.rcvbuf);
  CHECK(back.sock.nodelay == s.sock.nodelay);
  CHECK(back.sock.congestion == s.sock.congestion);
  CHECK(back.sock.mptcp == s.sock.mptcp);
  CHECK(back.sock.busy_poll_us == s.sock.busy_poll_us);
  CHECK(nlohmann::json(back) == j);
}

TEST_CASE("every workload and protocol name round-trips", "[spec]") {
  for (auto w :
       {Workload::stream, Workload::maerts, Workload::bidir, Workload::rr, Workload::crr}) {
    CHECK(parse_workload(to_string(w)) == w);
  }
  CHECK(parse_proto("udp") == Proto::udp);
  CHECK(parse_proto(to_string(Proto::tcp)) == Proto::tcp);
  CHECK_THROWS_WITH(parse_workload("flood"), Catch::Contains("'flood'"));
  CHECK_THROWS_WITH(parse_proto("sctp"), Catch::Contains("'sctp'"));
}

TEST_CASE("the default message size goes on the wire as the size used", "[spec]") {
  TestSpec s;
  nlohmann::json j = s;
  CHECK(j.at("message_size") == 64 * 1024);
  s.proto = Proto::udp;
  j = s;
  CHECK(j.at("message_size") == 1472);
}

TEST_CASE("absent fields keep their defaults", "[spec]") {
  TestSpec s = from(nlohmann::json::object({{"workload", "rr"}}));
  CHECK(s.workload == Workload::rr);
  CHECK(s.flows == TestSpec{}.flows);
  CHECK(s.duration_s == TestSpec{}.duration_s);
}

TEST_CASE("from_json rejects unknown fields, naming them", "[spec]") {
  CHECK_THROWS_WITH(from({{"flows", 1}, {"colour", "red"}}), Catch::Contains("test.colour"));
  CHECK_THROWS_WITH(from({{"socket", {{"window", 1}}}}), Catch::Contains("test.socket.window"));
  CHECK_THROWS_WITH(from(nlohmann::json::array()), Catch::Contains("object"));
  CHECK_THROWS_WITH(from({{"socket", 5}}), Catch::Contains("test.socket"));
}

TEST_CASE("from_json rejects wrong types, naming the field", "[spec]") {
  CHECK_THROWS_WITH(from({{"flows", "four"}}), Catch::Contains("test.flows"));
  CHECK_THROWS_WITH(from({{"duration_s", "long"}}), Catch::Contains("test.duration_s"));
  CHECK_THROWS_WITH(from({{"workload", 3}}), Catch::Contains("test.workload"));
  CHECK_THROWS_WITH(from({{"transport_options", {1, 2}}}),
                    Catch::Contains("test.transport_options"));
  CHECK_THROWS_WITH(from({{"socket", {{"nodelay", "yes"}}}}),
                    Catch::Contains("test.socket.nodelay"));
  CHECK_THROWS_WITH(from({{"workload", "flood"}}), Catch::Contains("flood"));
  CHECK_THROWS_AS(from({{"flows", "four"}}), std::invalid_argument);
}

TEST_CASE("a negative count is refused as it is read", "[spec]") {
  CHECK_THROWS_WITH(from({{"flows", -1}}), Catch::StartsWith("test.flows:"));
  CHECK_THROWS_WITH(from({{"burst", -5}}), Catch::StartsWith("test.burst:"));
}

TEST_CASE("integers are read without narrowing", "[spec]") {
  // 2^32 + 1 used to become 1 flow.
  CHECK_THROWS_WITH(from({{"flows", (uint64_t(1) << 32) + 1}}),
                    Catch::StartsWith("test.flows:") && Catch::Contains("out of range"));
  CHECK_THROWS_WITH(from({{"request_size", uint64_t(1) << 40}}),
                    Catch::StartsWith("test.request_size:"));
  CHECK_THROWS_WITH(from({{"socket", {{"sndbuf", int64_t(1) << 33}}}}),
                    Catch::StartsWith("test.socket.sndbuf:"));
  CHECK_THROWS_WITH(from({{"server_cpus", {0, int64_t(1) << 31}}}),
                    Catch::StartsWith("test.server_cpus[1]:"));
  // A fraction where an integer belongs is refused, not truncated.
  CHECK_THROWS_WITH(from({{"threads", 2.5}}),
                    Catch::StartsWith("test.threads:") && Catch::Contains("integer"));
  CHECK_THROWS_WITH(from({{"burst", 1.0}}), Catch::StartsWith("test.burst:"));
  CHECK_THROWS_AS(from({{"flows", (uint64_t(1) << 32) + 1}}), std::invalid_argument);
  // In range, every integer type reads exactly.
  CHECK(from({{"flows", 4000000000u}}).flows == 4000000000u);
  CHECK(from({{"socket", {{"busy_poll_us", -3}}}}).sock.busy_poll_us == -3);
}

TEST_CASE("a number out of a double's range is refused", "[spec]") {
  // The parser refuses 1e999; a JSON value built otherwise may still hold an infinity.
  CHECK_THROWS(nlohmann::json::parse(R"({"duration_s": 1e999})"));
  nlohmann::json j = {{"duration_s", std::numeric_limits<double>::infinity()}};
  CHECK_THROWS_WITH(from(j), Catch::StartsWith("test.duration_s:") && Catch::Contains("finite"));
  CHECK_THROWS_WITH(from({{"rate_bps", true}}), Catch::StartsWith("test.rate_bps:"));
}

TEST_CASE("strings and lists from the network are bounded", "[spec]") {
  CHECK_THROWS_WITH(from({{"transport", std::string(5000, 'x')}}),
                    Catch::StartsWith("test.transport:"));
  CHECK_THROWS_WITH(from({{"flow_servers", std::vector<std::string>(5000, "10.0.0.1")}}),
                    Catch::StartsWith("test.flow_servers:"));
  TestSpec s;
  s.transport_params = {{"k", std::string(300, 'v')}};
  rejects(s, "transport options");
  s = {};
  s.sock.congestion = "cubic;rm";
  rejects(s, "congestion");
}

TEST_CASE("interim reports have a lower bound and a bounded count", "[spec]") {
  TestSpec s;
  s.interval_s = 1e-6;  // used to spin the clock thread and grow the list without bound
  rejects(s, "interval");
  s.interval_s = kLimits.min_interval_s;
  s.duration_s = kLimits.max_duration_s;
  rejects(s, "interval");
  s.duration_s = 10;
  CHECK_NOTHROW(validate(s));
  s.interval_s = 0;
  CHECK_NOTHROW(validate(s));
}

TEST_CASE("a tiny positive rate is refused before any conversion", "[spec]") {
  TestSpec s;
  s.rate_bps = 1e-300;  // the gap between sends would overflow the worker's nanoseconds
  rejects(s, "rate");
  s.rate_bps = 500;
  rejects(s, "rate");
  s.flows = 4;
  s.rate_bps = 4 * kLimits.min_rate_per_flow_bps;
  CHECK_NOTHROW(validate(s));
  s.rate_bps = 4 * kLimits.min_rate_per_flow_bps - 1;
  rejects(s, "rate");
  // rr paces nothing: its rate is not looked at beyond the range.
  s.workload = Workload::rr;
  CHECK_NOTHROW(validate(s));
}

TEST_CASE("crr's connection rate: crr only, bounded, and on the wire when set", "[spec]") {
  TestSpec s;
  s.workload = Workload::crr;
  s.flows = 4;
  s.conn_rate = 1000;
  CHECK_NOTHROW(validate(s));
  TestSpec back = from(nlohmann::json::parse(nlohmann::json(s).dump()));
  CHECK(back.conn_rate == 1000);
  CHECK_FALSE(nlohmann::json(TestSpec{}).contains("conn_rate"));
  s.conn_rate = 4 * kLimits.min_conn_rate_per_flow / 2;  // below the least a flow may have
  rejects(s, "conn_rate");
  s.conn_rate = kLimits.max_conn_rate * 2;
  rejects(s, "conn_rate");
  s.conn_rate = -1;
  rejects(s, "conn_rate");
  s.conn_rate = 100;
  s.workload = Workload::rr;
  rejects(s, "conn_rate");
}

TEST_CASE("validate accepts the defaults and each workload", "[spec]") {
  for (auto w :
       {Workload::stream, Workload::maerts, Workload::bidir, Workload::rr, Workload::crr}) {
    TestSpec s;
    s.workload = w;
    CHECK_NOTHROW(validate(s));
  }
  TestSpec udp;
  udp.proto = Proto::udp;
  udp.workload = Workload::rr;
  udp.req_size = udp.resp_size = kUdpHeaderBytes;
  CHECK_NOTHROW(validate(udp));
}

TEST_CASE("validate rejects each bound, naming the field", "[spec]") {
  TestSpec s;
  s.flows = 0;
  rejects(s, "flows");
  s.flows = kLimits.max_flows + 1;
  rejects(s, "flows");
  s.flows = 1000000;
  rejects(s, "flows");

  s = {};
  s.msg_size = kLimits.max_msg_size + 1;
  rejects(s, "message size");
  s = {};
  s.req_size = 0;
  rejects(s, "request size");
  s = {};
  s.resp_size = kLimits.max_msg_size + 1;
  rejects(s, "response size");
  s = {};
  s.burst = 0;
  rejects(s, "burst");
  s.burst = kLimits.max_burst + 1;
  rejects(s, "burst");
  s = {};
  s.threads = kLimits.max_threads + 1;
  rejects(s, "threads");
  s = {};
  s.duration_s = 0;
  rejects(s, "duration");
  s.duration_s = kLimits.max_duration_s * 2;
  rejects(s, "duration");
  s = {};
  s.warmup_s = -1;
  rejects(s, "warmup");
  s = {};
  s.rate_bps = kLimits.max_rate_bps * 10;
  rejects(s, "rate");
  s = {};
  s.transport = "";
  rejects(s, "transport");
  s = {};
  s.sock.congestion = std::string(16, 'c');
  rejects(s, "congestion");
}

TEST_CASE("validate rejects a NaN instead of letting it through", "[spec]") {
  TestSpec s;
  s.duration_s = std::numeric_limits<double>::quiet_NaN();
  rejects(s, "duration");
}

TEST_CASE("validate applies the UDP rules", "[spec]") {
  TestSpec s;
  s.proto = Proto::udp;
  s.workload = Workload::rr;
  s.req_size = kUdpHeaderBytes - 1;
  s.resp_size = 1024;
  rejects(s, "request/response size");
  s.req_size = 1024;
  s.resp_size = kUdpHeaderBytes - 1;
  rejects(s, "request/response size");
  s.resp_size = 70000;
  rejects(s, "request/response size");

  s = {};
  s.proto = Proto::udp;
  s.workload = Workload::crr;
  CHECK_THROWS_WITH(validate(s), Catch::StartsWith("workload:") && Catch::Contains("crr"));

  s = {};
  s.proto = Proto::udp;
  s.msg_size = 8;
  rejects(s, "message size");
  s.msg_size = 65508;
  rejects(s, "message size");

  s = {};
  s.proto = Proto::udp;
  s.sock.mptcp = true;
  rejects(s, "mptcp");
}

TEST_CASE("roles follow the workload", "[spec]") {
  TestSpec s;
  s.workload = Workload::bidir;
  s.flows = 2;
  CHECK(s.flows_total() == 4);
  CHECK(role_of(s, 0, Side::client) == Role::sender);
  CHECK(role_of(s, 0, Side::server) == Role::receiver);
  CHECK(role_of(s, 3, Side::client) == Role::receiver);
  CHECK(role_of(s, 3, Side::server) == Role::sender);
  s.workload = Workload::maerts;
  CHECK(role_of(s, 0, Side::client) == Role::receiver);
  s.workload = Workload::crr;
  CHECK(role_of(s, 0, Side::server) == Role::crr_server);
}

TEST_CASE("stop_on_error goes on the wire only when set", "[spec]") {
  TestSpec s;
  CHECK_FALSE(nlohmann::json(s).contains("stop_on_error"));  // an older server reads the rest
  s.stop_on_error = true;
  nlohmann::json j = s;
  CHECK(j.at("stop_on_error") == true);
  CHECK(from(j).stop_on_error);
}

TEST_CASE("the MSS: TCP only, 88..9216, and on the wire only when set", "[spec]") {
  TestSpec s;
  CHECK_FALSE(nlohmann::json(s).at("socket").contains("mss"));  // an older server reads the rest
  s.sock.mss = 1000;
  nlohmann::json j = s;
  CHECK(j.at("socket").at("mss") == 1000);
  CHECK(from(j).sock.mss == 1000);
  CHECK_NOTHROW(validate(s));
  s.sock.mss = 87;
  CHECK_THROWS_WITH(validate(s), Catch::StartsWith("mss: "));
  s.sock.mss = 9217;
  CHECK_THROWS_WITH(validate(s), Catch::StartsWith("mss: "));
  s.sock.mss = 1000;
  s.proto = Proto::udp;
  CHECK_THROWS_WITH(validate(s), "mss: a TCP option");
}
