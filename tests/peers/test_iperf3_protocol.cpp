// iperf3's control protocol without a network: the cookie, the frames, the parameters and
// results (strict types and bounds), the client's state machine on transcripts, and the inputs
// behind iperf3's own CVEs.
#include <arpa/inet.h>

#include <cstring>

#include <catch2/catch.hpp>

#include "peers/iperf3/client_machine.hpp"
#include "peers/iperf3/protocol.hpp"

using namespace mtperf::iperf3;
using Event = ClientMachine::Event;
using nlohmann::json;

namespace {

std::vector<uint8_t> bytes_of(std::initializer_list<State> states) {
  std::vector<uint8_t> v;
  for (State s : states)
    v.push_back(byte_of(s));
  return v;
}

std::vector<uint8_t> frame_with_length(uint32_t n, const std::string& body) {
  std::vector<uint8_t> v = {uint8_t(n >> 24), uint8_t(n >> 16), uint8_t(n >> 8), uint8_t(n)};
  for (char c : body)
    v.push_back(uint8_t(c));
  return v;
}

Results some_results() {
  Results r;
  r.cpu_util_total = 12.5;
  r.cpu_util_user = 2.5;
  r.cpu_util_system = 10;
  r.sender_has_retransmits = 1;
  r.streams.push_back({1, 123456, 3, 0, 0, 0, 0, 1.0});
  return r;
}

// A machine driven to the point where the test runs.
ClientMachine running_machine(Params p = {}) {
  ClientMachine m(p, make_cookie());
  (void)m.take_output();
  REQUIRE(m.feed(bytes_of({State::param_exchange, State::create_streams})) ==
          Event::create_streams);
  REQUIRE(m.feed(bytes_of({State::test_start})) == Event::test_start);
  REQUIRE(m.feed(bytes_of({State::test_running})) == Event::test_running);
  return m;
}

}  // namespace

TEST_CASE("cookie: 36 characters of [a-z2-7] and a NUL, fresh each time") {
  Cookie a = make_cookie(), b = make_cookie();
  CHECK(valid_cookie(a));
  CHECK(a != b);
  Cookie bad = a;
  bad[3] = '8';
  CHECK_FALSE(valid_cookie(bad));
  bad = a;
  bad[36] = 'a';
  CHECK_FALSE(valid_cookie(bad));
  CHECK_FALSE(valid_cookie(std::span<const uint8_t>(a.data(), 36)));
}

TEST_CASE("stream ids as iperf3 numbers them: 1, 3, 4, 5") {
  CHECK(stream_id(0) == 1);
  CHECK(stream_id(1) == 3);
  CHECK(stream_id(2) == 4);
  CHECK(stream_id(255) == 257);
}

TEST_CASE("state bytes: signed, unknown ones named as such") {
  CHECK(byte_of(State::access_denied) == 0xff);
  CHECK(byte_of(State::server_error) == 0xfe);
  CHECK(state_of(0xff) == State::access_denied);
  CHECK(state_of(9) == State::param_exchange);
  CHECK_FALSE(state_of(3).has_value());
  CHECK_FALSE(state_of(0x80).has_value());
  CHECK(to_string(State::exchange_results) == "EXCHANGE_RESULTS");
}

TEST_CASE("a conversation from cookie to IPERF_DONE") {
  Params p;
  p.parallel = 2;
  p.reverse = true;
  p.len = 8192;
  ClientMachine m(p, make_cookie());
  auto first = m.take_output();
  REQUIRE(first.size() == kCookieBytes);
  CHECK(valid_cookie(first));
  CHECK(m.feed(bytes_of({State::param_exchange})) == Event::none);
  auto params = m.take_output();
  REQUIRE(params.size() > 4);
  uint32_t n = frame_length(std::span<const uint8_t, 4>(params.data(), 4), kMaxParamsBytes, "x");
  REQUIRE(n == params.size() - 4);
  json j = parse_object({reinterpret_cast<const char*>(params.data() + 4), n}, "params");
  CHECK(j.at("tcp") == true);
  CHECK(j.at("parallel") == 2);
  CHECK(j.at("reverse") == true);
  CHECK(j.at("len") == 8192);
  CHECK(params_from_json(j).parallel == 2);
  CHECK(m.feed(bytes_of({State::create_streams})) == Event::create_streams);
  // Two states in one read: each comes out in turn.
  CHECK(m.feed(bytes_of({State::test_start, State::test_running})) == Event::test_start);
  CHECK(m.feed({}) == Event::test_running);
  m.end_test();
  CHECK(m.take_output() == bytes_of({State::test_end}));
  CHECK(m.feed(bytes_of({State::exchange_results})) == Event::results_wanted);
  m.give_results(some_results());
  CHECK(m.take_output().size() > 4);
  auto res = frame_json(to_json(some_results()));
  // The server's results split anywhere arrive whole.
  CHECK(m.feed({res.data(), 3}) == Event::none);
  CHECK(m.feed({res.data() + 3, res.size() - 3}) == Event::none);
  CHECK(m.feed(bytes_of({State::display_results})) == Event::done);
  CHECK(m.take_output() == bytes_of({State::iperf_done}));
  CHECK(m.results().streams.at(0).bytes == 123456);
  CHECK(m.results().streams.at(0).retransmits == 3);
  CHECK(m.finished());
}

TEST_CASE("refusals carry the server's words") {
  ClientMachine m(Params{}, make_cookie());
  CHECK_THROWS_WITH(m.feed(bytes_of({State::access_denied})),
                    Catch::Contains("the server is busy running a test"));
  ClientMachine e(Params{}, make_cookie());
  std::vector<uint8_t> err = bytes_of({State::server_error});
  for (uint32_t code : {142u, 0u}) {
    uint32_t be = htonl(code);
    auto* b = reinterpret_cast<uint8_t*>(&be);
    err.insert(err.end(), b, b + 4);
  }
  CHECK(e.feed({err.data(), 5}) == Event::none);  // its codes come in pieces
  CHECK_THROWS_WITH(e.feed({err.data() + 5, err.size() - 5}),
                    Catch::Contains("authorization failed") && Catch::Contains("SERVER_ERROR 142"));
  auto r = running_machine();
  CHECK_THROWS_WITH(r.feed(bytes_of({State::server_terminate})),
                    Catch::Contains("SERVER_TERMINATE"));
}

TEST_CASE("a state out of turn, or a byte that is no state, is named") {
  ClientMachine m(Params{}, make_cookie());
  CHECK_THROWS_WITH(m.feed(bytes_of({State::test_running})),
                    Catch::Contains("TEST_RUNNING") && Catch::Contains("PARAM_EXCHANGE"));
  ClientMachine b(Params{}, make_cookie());
  CHECK_THROWS_WITH(b.feed(std::vector<uint8_t>{77}), Catch::Contains("byte 77"));
  auto r = running_machine();
  CHECK_THROWS_WITH(r.feed(bytes_of({State::test_start})), Catch::Contains("while the test ran"));
}

TEST_CASE("CVE-2023-38403: a JSON length of 0xffffffff is refused before any allocation") {
  std::vector<uint8_t> head = {0xff, 0xff, 0xff, 0xff};
  CHECK_THROWS_WITH(frame_length(std::span<const uint8_t, 4>(head.data(), 4), kMaxParamsBytes,
                                 "the client's parameters"),
                    Catch::Contains("4294967295") && Catch::Contains("over the bound"));
  auto m = running_machine();
  m.end_test();
  REQUIRE(m.feed(bytes_of({State::exchange_results})) == Event::results_wanted);
  m.give_results(some_results());
  CHECK_THROWS_WITH(m.feed(frame_with_length(0xffffffffu, "")), Catch::Contains("over the bound"));
}

TEST_CASE("oversized results: over the bound unless the server's output was asked for") {
  auto m = running_machine();
  m.end_test();
  REQUIRE(m.feed(bytes_of({State::exchange_results})) == Event::results_wanted);
  m.give_results(some_results());
  CHECK_THROWS_WITH(m.feed(frame_with_length(kMaxResultsBytes + 1, "")),
                    Catch::Contains("the server's results"));
}

TEST_CASE("CVE-2024-53580: a field of the wrong type is refused, naming it") {
  auto params = [](const char* text) { return params_from_json(json::parse(text)); };
  CHECK_THROWS_WITH(params(R"({"tcp":true,"parallel":"4"})"),
                    Catch::Contains("parallel") && Catch::Contains("string"));
  CHECK_THROWS_WITH(params(R"({"time":[10]})"), Catch::Contains("time"));
  CHECK_THROWS_WITH(params(R"({"congestion":5})"), Catch::Contains("congestion"));
  CHECK_THROWS_WITH(params(R"({"authtoken":{}})"), Catch::Contains("authtoken"));
  CHECK_THROWS_WITH(params(R"({"parallel":129})"), Catch::Contains("parallel"));
  CHECK_THROWS_WITH(params(R"({"len":1e300})"), Catch::Contains("len"));
  CHECK_THROWS_WITH(params(R"({"window":-1})"), Catch::Contains("window"));
  CHECK_THROWS_WITH(params(R"({"omit":1.5})"), Catch::Contains("omit"));
  CHECK_THROWS_WITH(params(R"({"tcp":true,"udp":true})"), Catch::Contains("both"));
  CHECK(params(R"({"tcp":true,"unknown":[1,2],"get_server_output":1})").get_server_output);
  CHECK(params(R"({"authtoken":"abc"})").authtoken);
  auto results = [](const char* text) { return results_from_json(json::parse(text)); };
  const char* ok = R"({"cpu_util_total":1,"cpu_util_user":0.5,"cpu_util_system":0.5,
      "sender_has_retransmits":0,"streams":[{"id":1,"bytes":10,"retransmits":-1,"jitter":0,
      "errors":0,"packets":0}]})";
  CHECK(results(ok).streams.at(0).bytes == 10);
  // iperf3 3.12 writes -1 as 2^64 (its cJSON's unsigned conversion): read as -1.
  auto wrapped = results(R"({"cpu_util_total":1,"cpu_util_user":0.5,"cpu_util_system":0.5,
      "sender_has_retransmits":1.8446744073709552e+19,"streams":[{"id":1,"bytes":10,
      "retransmits":1.8446744073709552e+19,"jitter":0,"errors":0,"packets":0}]})");
  CHECK(wrapped.sender_has_retransmits == -1);
  CHECK(wrapped.streams.at(0).retransmits == -1);
  CHECK_THROWS_WITH(results(R"({"cpu_util_total":"1"})"), Catch::Contains("cpu_util_total"));
  CHECK_THROWS_WITH(results(R"({"cpu_util_total":1,"cpu_util_user":0,"cpu_util_system":0,
      "sender_has_retransmits":0,"streams":{}})"),
                    Catch::Contains("streams"));
  CHECK_THROWS_WITH(results(R"({"cpu_util_total":1,"cpu_util_user":0,"cpu_util_system":0,
      "sender_has_retransmits":0,"streams":[{"id":1,"bytes":"10","retransmits":0,"jitter":0,
      "errors":0,"packets":0}]})"),
                    Catch::Contains("bytes"));
  CHECK_THROWS_WITH(parse_object("[1]", "the server's results"), Catch::Contains("object"));
  CHECK_THROWS_WITH(parse_object("{\"a\":", "the server's results"),
                    Catch::Contains("not valid JSON"));
}

TEST_CASE("CVE-2023-7250: short data never completes a message, nor blocks") {
  // The machine waits for more; the caller's deadline (client.cpp) ends the wait.
  auto m = running_machine();
  m.end_test();
  REQUIRE(m.feed(bytes_of({State::exchange_results})) == Event::results_wanted);
  m.give_results(some_results());
  CHECK(m.feed(frame_with_length(100, "{\"cpu")) == Event::none);
  CHECK(m.waiting_for() == "the server's results");
}
