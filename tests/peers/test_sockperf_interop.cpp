// sockperf both ways against the real sockperf (Debian 12: 3.7) on 127.0.0.1:
//   `mtperf run --peer sockperf` against `sockperf sr`: this side's messages and pongs against
//   the count sockperf sr prints when it stops;
//   sockperf's own clients (`sockperf pp`, `tp`) against the server of `mtperf serve --sockperf`
//   (peers/sockperf/server.hpp): sockperf's SentMessages against the server's count, sockperf's
//   percentiles printed beside (with --full-rtt: round trips, as mtperf's).
// Each run is -t 1 or -l 0.5: the file takes about 8 s.
#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "peers/sockperf/server.hpp"
#include "tests/peers/sockperf_tools.hpp"
#include "tests/support/command.hpp"
#include "tests/support/skip.hpp"

using mtperf::test::mtperf_cmd;
using mtperf::test::run_sockperf_client;
using mtperf::test::SockperfServer;

MTPERF_TEST_REQUIRES(mtperf::test::why_no_sockperf());

namespace {

nlohmann::json run_json(const SockperfServer& s, const std::string& args) {
  auto r = mtperf_cmd("run --peer sockperf -H " + s.address() + " --format json " + args);
  REQUIRE(r.rc == 0);
  return nlohmann::json::parse(r.out);
}

// Waits (at most 3 s) until the server has seen the clients leave, so its counts are final.
void settle(const mtperf::sockperf::Server& s, uint64_t clients) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (s.counts().closed.load() < clients && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

}  // namespace

TEST_CASE("rr over TCP against sockperf sr: every message answered, sr counted every one") {
  SockperfServer s(true);
  auto doc = run_json(s, "-w rr -r 64 -l 0.5");
  const long long total = s.stop();
  INFO(s.output() << doc["peer"].dump());
  const auto& st = doc.at("peer").at("streams").at(0);
  CHECK(doc["peer"]["unit"] == "messages");
  CHECK(st.at("bytes_here").get<uint64_t>() > 1000);
  CHECK(st.at("bytes_here") == st.at("bytes_peer"));  // pong requests == pongs
  CHECK(total == st.at("bytes_here").get<long long>());
  const auto& lat = doc.at("summary").at("latency_us");
  CHECK(lat.at("p50").get<double>() > 0);
  WARN("mtperf -> sockperf sr, TCP rr 64 B: "
       << total << " messages counted by sr, " << st["bytes_peer"] << " pongs here; mtperf p50 "
       << lat["p50"].get<double>() << " us, p99 " << lat["p99"].get<double>() << " us");
}

TEST_CASE("stream over TCP against sockperf sr: the messages sent are the messages sr counted") {
  SockperfServer s(true);
  auto doc = run_json(s, "-w stream -m 1024 -l 0.5");
  const long long total = s.stop();
  INFO(s.output() << doc["peer"].dump());
  std::smatch m;
  const std::string why = doc.at("peer").at("margin");
  REQUIRE(std::regex_search(why, m, std::regex("^([0-9]+) messages sent")));
  CHECK(std::stoll(m[1]) > 1000);
  CHECK(total == std::stoll(m[1]));
}

TEST_CASE("under load (rr at --rate) over TCP against sockperf sr: sr counted every message") {
  // sockperf ul's mode: 64-byte messages at 2 Mbit/s (3,906 a second), every 100th asking for a
  // pong. sr counts every message sent; over TCP every pong request is answered.
  SockperfServer s(true);
  auto doc = run_json(s, "-w rr -r 64 --rate 2M -l 1");
  const long long total = s.stop();
  INFO(s.output() << doc["peer"].dump());
  const auto& st = doc.at("peer").at("streams").at(0);
  std::smatch m;
  const std::string why = doc.at("peer").at("margin");
  REQUIRE(std::regex_search(why, m, std::regex("^([0-9]+) messages sent under load")));
  const long long sent = std::stoll(m[1]);
  CHECK(total == sent);
  CHECK(st.at("bytes_here").get<long long>() == sent / 100);  // every 100th asked for a pong
  CHECK(st.at("bytes_here") == st.at("bytes_peer"));
  CHECK(st.at("agree") == true);
  // Paced: never ahead of 2 Mbit/s by more than the 10 ms the schedule may catch up, and one
  // message; behind it on a loaded host, never ahead.
  CHECK(double(sent) * 64 * 8 <= 2e6 * (1.0 + 0.010) + 64 * 8);
  CHECK(doc.at("summary").at("latency_us").at("p50").get<double>() > 0);
}

TEST_CASE("rr over UDP against sockperf sr: pongs and losses add up, sr counted every message") {
  SockperfServer s(false);
  auto doc = run_json(s, "-w rr -p udp -r 64 -l 0.5");
  const long long total = s.stop();
  INFO(s.output() << doc["peer"].dump());
  const auto& st = doc.at("peer").at("streams").at(0);
  const auto sent = st.at("bytes_here").get<long long>();
  CHECK(sent > 1000);
  CHECK(st.at("agree") == true);
  // On loopback nothing is lost in practice; a datagram lost on its way out would be missing
  // from sr's count and from the pongs alike, so sr counts at least the pongs.
  CHECK(total <= sent);
  CHECK(total >= st.at("bytes_peer").get<long long>());
}

TEST_CASE("sockperf pp over TCP against the sockperf server: SentMessages are the server's count") {
  mtperf::sockperf::ServeOptions o;
  o.bind = "127.0.0.1";
  o.port = 0;
  mtperf::sockperf::Server server(o);
  const std::string port = std::to_string(server.port());
  // --full-rtt: whole round trips, as mtperf measures them (sockperf prints halves otherwise).
  auto r = run_sockperf_client("pp --tcp -i 127.0.0.1 -p " + port + " -t 1 -m 64 --full-rtt");
  settle(server, 1);
  INFO(r.output);
  REQUIRE(r.rc == 0);
  REQUIRE(r.sent > 1000);
  // sockperf stops at its timer with the last message's pong maybe still on its way: it may
  // receive one fewer than it sent; the server counted and answered every message.
  CHECK(uint64_t(r.sent) == server.counts().messages.load());
  CHECK(server.counts().pongs.load() == server.counts().messages.load());
  CHECK(r.received >= r.sent - 1);
  CHECK(r.percentiles.count(50.0) == 1);
  WARN("sockperf pp -> mtperf serve --sockperf, TCP 64 B: sockperf sent "
       << r.sent << " received " << r.received << ", server counted "
       << server.counts().messages.load() << "; sockperf avg " << r.avg_us << " us p50 "
       << r.percentiles[50.0] << " p99 " << r.percentiles[99.0] << " p99.9 "
       << r.percentiles[99.9]);
}

TEST_CASE("sockperf pp over UDP against the sockperf server: every datagram counted") {
  mtperf::sockperf::ServeOptions o;
  o.bind = "127.0.0.1";
  o.port = 0;
  mtperf::sockperf::Server server(o);
  auto r = run_sockperf_client("pp -i 127.0.0.1 -p " + std::to_string(server.port()) +
                               " -t 1 -m 64 --full-rtt");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  INFO(r.output);
  REQUIRE(r.rc == 0);
  REQUIRE(r.sent > 1000);
  // Loopback drops nothing here; the margin is sockperf's last pong, still in flight at its end.
  CHECK(uint64_t(r.sent) == server.counts().messages.load());
  CHECK(r.received >= r.sent - 1);
  WARN("sockperf pp -u -> mtperf serve --sockperf: sockperf sent "
       << r.sent << " received " << r.received << ", server counted "
       << server.counts().messages.load() << "; sockperf p50 " << r.percentiles[50.0] << " us p99 "
       << r.percentiles[99.0]);
}

TEST_CASE("sockperf tp over TCP against the sockperf server: counted silently, none answered") {
  mtperf::sockperf::ServeOptions o;
  o.bind = "127.0.0.1";
  o.port = 0;
  mtperf::sockperf::Server server(o);
  auto r = run_sockperf_client("tp --tcp -i 127.0.0.1 -p " + std::to_string(server.port()) +
                               " -t 1 -m 256");
  settle(server, 1);
  INFO(r.output);
  REQUIRE(r.rc == 0);
  CHECK(server.counts().messages.load() > 1000);
  CHECK(server.counts().pongs.load() == 0);
  std::smatch m;
  if (std::regex_search(r.output, m, std::regex("SentMessages=([0-9]+)")))
    CHECK(std::stoull(m[1]) == server.counts().messages.load());
}
