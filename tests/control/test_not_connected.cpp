// Flows that cannot connect, over the in-memory transport (its option `refuse` fails the client's
// connects of the flows named): without need_all the test runs with the others and names the
// missing ones, the server no longer waiting for them; with need_all it fails naming the flow.
// START's list of them is checked as any input from the network.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "control/client.hpp"
#include "control/local_server.hpp"
#include "control/protocol.hpp"
#include "platform/clock.hpp"
#include "transports/api/control_socket.hpp"

using namespace mtperf;
using namespace mtperf::control;

namespace {

TestSpec memory_stream(uint32_t flows, const std::string& refuse) {
  TestSpec s;
  s.transport = "memory";
  s.workload = Workload::stream;
  s.flows = flows;
  s.threads = 1;
  s.duration_s = 0.2;
  s.warmup_s = 0;
  if (!refuse.empty()) s.transport_params["refuse"] = refuse;
  return s;
}

std::vector<uint32_t> ids_of(const SideResult& side) {
  std::vector<uint32_t> out;
  for (const FlowResult& f : side.flows)
    out.push_back(f.id);
  return out;
}

}  // namespace

TEST_CASE("flows that cannot connect are named; the others run", "[not_connected]") {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> log;
  ServerOptions so = own_server_options();
  so.log = [&](const std::string& line) {
    std::lock_guard lock(mu);
    log.push_back(line);
    cv.notify_all();
  };
  LocalServer server(so);
  ClientOptions o;
  o.server = server.address();
  const int64_t start = now_ns();
  TestOutcome out = run_test(memory_stream(5, "1,2,4"), o);
  // The server stopped waiting at START, long before its set-up deadline (10 s).
  CHECK(double(now_ns() - start) / 1e9 < 5);
  CHECK(out.flows_asked == 5);
  REQUIRE(out.not_connected.size() == 3);
  CHECK(out.not_connected[0].flow == 1);
  CHECK(out.not_connected[1].flow == 2);
  CHECK(out.not_connected[2].flow == 4);
  CHECK_THAT(out.not_connected[0].error, Catch::Contains("Connection refused"));
  CHECK(out.client.errors.empty());
  REQUIRE(out.server);
  CHECK(out.server->errors.empty());
  // Each side ran the two that connected, under their own ids, and they agree.
  CHECK(ids_of(out.client) == std::vector<uint32_t>{0, 3});
  CHECK(ids_of(*out.server) == std::vector<uint32_t>{0, 3});
  for (size_t i = 0; i < 2; ++i) {
    CHECK(out.client.flows[i].total.bytes_sent > 0);
    CHECK(out.client.flows[i].total.bytes_sent == out.server->flows[i].total.bytes_recv);
  }
  // The server's log line counts them apart from errors.
  {
    std::unique_lock lock(mu);
    REQUIRE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return !log.empty(); }));
    CHECK_THAT(log[0], Catch::Contains(" flows=5 not_connected=3 "));
    CHECK_THAT(log[0], Catch::EndsWith(" result=ok"));
    CHECK(log[0].find("flow_errors") == std::string::npos);
  }
  // The server serves the next test as before.
  TestOutcome next = run_test(memory_stream(2, ""), o);
  CHECK(next.not_connected.empty());
  CHECK(next.client.flows.size() == 2);
}

TEST_CASE("need_all: a flow that cannot connect fails the test, named", "[not_connected]") {
  LocalServer server(own_server_options());
  ClientOptions o;
  o.server = server.address();
  o.need_all = true;
  CHECK_THROWS_WITH(run_test(memory_stream(4, "2"), o),
                    Catch::Contains("flow 2: connect to") && Catch::Contains("Connection refused"));
  // Every flow connecting, need_all runs as ever; so does the server after the failed test.
  TestOutcome out = run_test(memory_stream(2, ""), o);
  CHECK(out.not_connected.empty());
  CHECK(out.client.flows.size() == 2);
}

TEST_CASE("no flow connected: the test fails, naming the first", "[not_connected]") {
  LocalServer server(own_server_options());
  ClientOptions o;
  o.server = server.address();
  CHECK_THROWS_WITH(run_test(memory_stream(2, "0,1"), o),
                    Catch::Contains("no flow connected") && Catch::Contains("flow 0: connect to"));
}

TEST_CASE("START's not_connected: ranges of flow ids", "[not_connected][protocol]") {
  CHECK(not_connected_to_json({}) == nlohmann::json::array());
  CHECK(not_connected_to_json({1, 2, 3, 7, 9, 10}).dump() == "[[1,3],[7,7],[9,10]]");
  auto parse = [](const std::string& list, uint32_t flows) {
    return not_connected_from_json(nlohmann::json::parse(R"({"not_connected":)" + list + "}"),
                                   flows);
  };
  CHECK(not_connected_from_json(nlohmann::json::object(), 4).empty());
  CHECK(parse("[]", 4).empty());
  CHECK(parse("[[1,3],[7,7],[9,10]]", 12) == std::vector<uint32_t>{1, 2, 3, 7, 9, 10});
  CHECK(parse("[[0,0],[1,1]]", 3) == std::vector<uint32_t>{0, 1});
}

TEST_CASE("START's not_connected: malformed or out of range is refused, named",
          "[not_connected][protocol]") {
  auto refused = [](const std::string& list, uint32_t flows) {
    try {
      not_connected_from_json(nlohmann::json::parse(R"({"not_connected":)" + list + "}"), flows);
    } catch (const ProtocolError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK_THAT(refused("7", 4), Catch::Contains("START.not_connected: wrong type"));
  CHECK_THAT(refused("[3]", 4), Catch::Contains("not_connected[0]: not a [first, last] pair"));
  CHECK_THAT(refused("[[1,2,3]]", 4), Catch::Contains("not a [first, last] pair"));
  CHECK_THAT(refused(R"([[1,"2"]])", 4), Catch::Contains("not_connected[0][1]: wrong type"));
  CHECK_THAT(refused("[[-1,0]]", 4), Catch::Contains("not_connected[0][0]: -1 is out of range"));
  CHECK_THAT(refused("[[1.5,2]]", 4), Catch::Contains("must be an integer"));
  CHECK_THAT(refused("[[4294967296,4294967296]]", 4), Catch::Contains("out of range"));
  CHECK_THAT(refused("[[2,1]]", 4), Catch::Contains("last flow 1 before the first"));
  CHECK_THAT(refused("[[1,4]]", 4), Catch::Contains("flow 4 is not in the test (flows 0..3)"));
  CHECK_THAT(refused("[[2,2],[1,1]]", 4), Catch::Contains("not_connected[1]: flow 1 listed again"));
  CHECK_THAT(refused("[[1,2],[2,3]]", 8), Catch::Contains("flow 2 listed again or out of order"));
  CHECK_THAT(refused("[[0,3]]", 4), Catch::Contains("every flow of the test"));
  CHECK_THAT(refused("[[0,0],[1,1],[2,2]]", 2), Catch::Contains("3 ranges for a test of 2 flows"));
}

TEST_CASE("a bad START ends the set-up with the server's error, named",
          "[not_connected][protocol]") {
  LocalServer server(own_server_options());
  struct Fd {
    int fd;
    ~Fd() { ::close(fd); }
  } c{control_socket::connect(control_socket::resolve(server.address(), 0), 5000)};
  send_message(c.fd, {MsgType::hello, {{"version", kVersion}}}, 5000);
  CHECK(recv_message(c.fd, kMaxResultBody, 5000).type == MsgType::welcome);
  send_message(c.fd, {MsgType::test, {{"test", memory_stream(2, "")}}}, 5000);
  CHECK(recv_message(c.fd, kMaxResultBody, 5000).type == MsgType::ready);
  // No flow connects; START names flow 2 of a 2-flow test.
  send_message(c.fd, {MsgType::start, {{"not_connected", {{2, 2}}}}}, 5000);
  Message m = recv_message(c.fd, kMaxResultBody, 5000);
  CHECK(m.type == MsgType::error);
  CHECK_THAT(m.body.value("message", std::string()),
             Catch::Contains("START.not_connected[0]: flow 2 is not in the test"));
}
