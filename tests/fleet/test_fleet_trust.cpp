// The fleet against each attacker it defends against, on loopback: a stranger without the key
// (and one taking a rank's number first), a forged coordinator (no challenge, a wrong proof), a
// coordinator naming a server outside the roster, a replayed frame, idle connections in the join
// window, a rank that stalls mid-RESULTS, a rank of another job, a JOIN claiming an address it
// did not connect from. Each is refused and named, and the fleet's result is unchanged.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "control/link.hpp"
#include "control/protocol.hpp"
#include "fleet/coordinator.hpp"
#include "fleet/member.hpp"
#include "fleet/net.hpp"
#include "fleet/protocol.hpp"
#include "platform/clock.hpp"
#include "tests/fleet/fleet_fixture.hpp"

using namespace mtperf;
using namespace mtperf::fleet;
using namespace mtperf::fleet::testing;
using control::Link;
using control::Message;
using control::MsgType;
using nlohmann::json;

namespace {

const std::string kKey = "the fleet's key";
constexpr int kIoMs = 5000;

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
  for (const auto& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

// A rank written by hand: HELLO with a nonce; with `key`, the coordinator's proof checked, the
// JOIN's MAC made (or a wrong one without the key) and the link sealed.
struct HandRank {
  int fd;
  Link link;
  explicit HandRank(uint16_t port) : fd(connect_tcp("127.0.0.1", port, 2000)), link(fd) {}
  ~HandRank() { close(fd); }
  void join(const Member& me, const json& test, const std::string& key, const std::string& job) {
    const std::string nonce = control::random_hex(16);
    control::send_message(
        link, {MsgType::hello, {{"version", control::kVersion}, {"fleet", 1}, {"nonce", nonce}}},
        kIoMs);
    Message w = control::expect(link, MsgType::welcome, 65536, kIoMs);
    json j = {{"member", to_json(me)}, {"test", test}, {"job", job}};
    const std::string challenge = w.body.value("challenge", "");
    j["mac"] = key.empty() ? std::string(64, '0') : join_mac(key, challenge, j["member"]);
    control::send_message(link, {MsgType::join, j}, kIoMs);
    if (!key.empty()) link.seal(key, true, nonce, challenge);
  }
  Message recv(int ms = 20000) { return control::recv_message(link, kMaxFleetBody, ms); }
  // The coordinator's next message other than CLOCK, each CLOCK on the way answered.
  Message next() {
    for (;;) {
      Message m = recv();
      if (m.type != MsgType::clock) return m;
      control::send_message(link, {MsgType::clock, {{"now_ns", realtime_ns()}}}, kIoMs);
    }
  }
};

Member hand_member(uint32_t rank, const std::string& address = "127.0.0.1") {
  Member m;
  m.rank = rank;
  m.host = "hand";
  m.address = address;
  m.port = 9;  // nothing listens there
  m.transports = {"socket"};
  return m;
}

// A listener that plays the coordinator, written by hand.
struct FakeCoordinator {
  int listen_fd = listen_tcp("127.0.0.1", 0);
  ~FakeCoordinator() { close(listen_fd); }
  uint16_t port() const { return local_port(listen_fd); }
  int accept() const {
    int fd = accept_within(listen_fd, 10000);
    REQUIRE(fd >= 0);
    return fd;
  }
};

// What run_member ends with against a fake coordinator that `script` plays on its connection.
template <typename Script>
std::string member_against(FakeCoordinator& fake, MemberOptions m, Script script) {
  std::string error = "(reached FINISH)";
  std::thread t([&] {
    try {
      run_member(m);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  int fd = fake.accept();
  try {
    script(fd);
  } catch (const std::exception&) {
  }
  close(fd);
  t.join();
  return error;
}

}  // namespace

TEST_CASE("a stranger without the key is refused, even claiming a rank first", "[fleet][trust]") {
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(2, r);
  co.key = kKey;
  Coordinator c(co);
  FleetDoc d;
  std::thread t([&] { d = c.run(); });
  {
    HandRank stranger(c.port());
    stranger.join(hand_member(1), test_of(r), "", "");
    Message m = stranger.recv(kIoMs);
    CHECK(m.type == MsgType::error);
    CHECK_THAT(m.body.value("message", ""), Catch::Contains("authentication failed"));
  }
  Members members(2);
  for (uint32_t i = 0; i < 2; ++i)
    members.start(i, member_options(i, 2, c.port(), r, kKey));
  members.join();
  t.join();
  CHECK(members.errors == std::vector<std::string>{"", ""});
  CHECK(mentions(d.errors, "refused: authentication failed"));
  REQUIRE(d.results.size() == 2);
  for (const PairResult& p : d.results)
    CHECK(p.ok);
  CHECK(d.roster[1].host != "hand");
}

TEST_CASE("a rank of another job, or one claiming an address it did not connect from, is refused",
          "[fleet][trust]") {
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(2, r);
  co.key = kKey;
  co.job = "4242";
  co.join_timeout_ms = 4000;
  Coordinator c(co);
  FleetDoc d;
  std::thread t([&] { d = c.run(); });
  {
    HandRank elsewhere(c.port());
    elsewhere.join(hand_member(1, "10.9.9.9"), test_of(r), kKey, "4242");
    Message m = elsewhere.recv(kIoMs);
    CHECK(m.type == MsgType::error);
    CHECK_THAT(m.body.value("message", ""),
               Catch::Contains("declares the address 10.9.9.9 but connected from 127.0.0.1"));
  }
  MemberOptions other = member_options(1, 2, c.port(), r, kKey);
  other.launch.job = "7";
  MemberOptions ours = member_options(0, 2, c.port(), r, kKey);
  ours.launch.job = "4242";
  Members members(2);
  members.start(0, ours);
  members.start(1, other);
  members.join();
  t.join();
  CHECK_THAT(members.errors[1], Catch::Contains("rank 1 is of job '7', this fleet is job '4242'"));
  CHECK(mentions(d.errors, "is of job '7'"));
  CHECK_FALSE(d.roster[1].joined);
}

TEST_CASE("a keyed rank refuses a coordinator that drops the challenge or cannot prove the key",
          "[fleet][trust]") {
  RunRequest r = short_stream();
  FakeCoordinator fake;
  MemberOptions m = member_options(1, 2, fake.port(), r, kKey);
  m.join_timeout_ms = 3000;
  SECTION("no challenge: a downgrade") {
    std::string error = member_against(fake, m, [](int fd) {
      control::expect(fd, MsgType::hello, 65536, kIoMs);
      control::send_message(fd, {MsgType::welcome, {{"version", control::kVersion}}}, kIoMs);
      char c;
      (void)::read(fd, &c, 1);  // a JOIN would come now, were the rank fooled
    });
    CHECK_THAT(error, Catch::Contains("does not ask for the key") &&
                          Catch::Contains("refusing to join unauthenticated"));
  }
  SECTION("a challenge with a proof of another key") {
    std::string error = member_against(fake, m, [](int fd) {
      Message h = control::expect(fd, MsgType::hello, 65536, kIoMs);
      const std::string challenge = control::random_hex(16);
      const std::string proof = control::prove("a guess", "coordinator",
                                               h.body.at("nonce").get<std::string>(), challenge);
      control::send_message(
          fd,
          {MsgType::welcome,
           {{"version", control::kVersion}, {"challenge", challenge}, {"proof", proof}}},
          kIoMs);
      char c;
      (void)::read(fd, &c, 1);
    });
    CHECK_THAT(error, Catch::Contains("did not prove it has the fleet's key"));
  }
}

namespace {

// The fake coordinator's side of a keyed handshake: the rank's JOIN taken, the link sealed.
void keyed_welcome(Link& link) {
  Message h = control::expect(link, MsgType::hello, 65536, kIoMs);
  const std::string nonce = h.body.at("nonce").get<std::string>();
  const std::string challenge = control::random_hex(16);
  control::send_message(link,
                        {MsgType::welcome,
                         {{"version", control::kVersion},
                          {"challenge", challenge},
                          {"proof", control::prove(kKey, "coordinator", nonce, challenge)}}},
                        kIoMs);
  control::expect(link, MsgType::join, 65536, kIoMs);
  link.seal(kKey, false, nonce, challenge);
}

}  // namespace

TEST_CASE("a rank runs tests only toward servers of its roster", "[fleet][trust]") {
  RunRequest r = short_stream();
  FakeCoordinator fake;
  MemberOptions m = member_options(0, 2, fake.port(), r, kKey);
  std::atomic<int> runs{0};
  m.run_pair = [&](uint32_t, const std::string&) {
    ++runs;
    return PairResult{};
  };
  json results;
  std::string error = member_against(fake, m, [&](int fd) {
    Link link(fd);
    keyed_welcome(link);
    control::send_message(link,
                          {MsgType::roster,
                           {{"size", 2},
                            {"peers", {{0, "127.0.0.1:5555"}, {1, "127.0.0.1:40000"}}},
                            {"pattern", "all-pairs"},
                            {"steps", 1},
                            {"wait_ms", 5000}}},
                          kIoMs);
    json runs_given = {{{"index", 0}, {"transport", 0}, {"dst", 1}, {"server", "192.0.2.1:5201"}},
                       {{"index", 1}, {"transport", 0}, {"dst", 5}, {"server", "127.0.0.1:40000"}},
                       {{"index", 2}, {"transport", 0}, {"dst", 0}, {"server", "127.0.0.1:9"}}};
    control::send_message(
        link, {MsgType::round, {{"step", 0}, {"start_ns", 0}, {"runs", runs_given}}}, kIoMs);
    results = control::expect(link, MsgType::results, kMaxFleetBody, kIoMs).body;
    control::send_message(link, {MsgType::finish, {{"ok", true}}}, kIoMs);
  });
  CHECK(error == "(reached FINISH)");
  CHECK(runs == 0);
  REQUIRE(results.at("results").size() == 3);
  const json& list = results["results"];
  CHECK_THAT(list[0]["result"]["error"].get<std::string>(),
             Catch::Contains("refused by rank 0: server 192.0.2.1:5201 is not rank 1's "
                             "(127.0.0.1:40000 in the roster)"));
  CHECK_THAT(list[1]["result"]["error"].get<std::string>(),
             Catch::Contains("rank 5 is not a member of the roster"));
  CHECK_THAT(list[2]["result"]["error"].get<std::string>(),
             Catch::Contains("against this rank itself"));
}

TEST_CASE("a replayed frame ends the rank's connection, named", "[fleet][trust]") {
  RunRequest r = short_stream();
  FakeCoordinator fake;
  MemberOptions m = member_options(0, 2, fake.port(), r, kKey);
  std::string error = member_against(fake, m, [&](int fd) {
    // The same keys on a tap: the bytes of sealed frame 0 as the real link sends them.
    Message h = control::expect(fd, MsgType::hello, 65536, kIoMs);
    const std::string nonce = h.body.at("nonce").get<std::string>();
    const std::string challenge = control::random_hex(16);
    control::send_message(fd,
                          {MsgType::welcome,
                           {{"version", control::kVersion},
                            {"challenge", challenge},
                            {"proof", control::prove(kKey, "coordinator", nonce, challenge)}}},
                          kIoMs);
    control::expect(fd, MsgType::join, 65536, kIoMs);
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    Link tap(sv[0]);
    tap.seal(kKey, false, nonce, challenge);
    tap.send({MsgType::clock, json::object()}, control::deadline_in(kIoMs));
    std::string frame(4096, '\0');
    const ssize_t n = ::read(sv[1], frame.data(), frame.size());
    close(sv[0]);
    close(sv[1]);
    REQUIRE(n > 0);
    frame.resize(size_t(n));
    control::write_all_until(fd, frame.data(), frame.size(), control::deadline_in(kIoMs));
    char buf[256];
    (void)::recv(fd, buf, sizeof buf, 0);  // the rank's CLOCK answer
    // The same frame again: a replay of frame 0 where frame 1 is due.
    control::write_all_until(fd, frame.data(), frame.size(), control::deadline_in(kIoMs));
    (void)::read(fd, buf, 1);
  });
  CHECK_THAT(error, Catch::Contains("CLOCK frame failed its integrity check"));
}

TEST_CASE("50 idle connections in the join window and a rank stalled mid-RESULTS hold up no one",
          "[fleet][trust]") {
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(3, r);
  co.key = kKey;
  co.pair_timeout_ms = 3000;
  Coordinator c(co);
  std::vector<int> idle;
  for (int i = 0; i < 50; ++i)
    idle.push_back(connect_tcp("127.0.0.1", c.port(), 2000));
  const auto t0 = std::chrono::steady_clock::now();
  FleetDoc d;
  std::thread t([&] { d = c.run(); });
  // Rank 2 by hand: joins, answers the clocks, then sends half of its RESULTS and stalls.
  std::thread staller([&] {
    HandRank rank2(c.port());
    rank2.join(hand_member(2), test_of(r), kKey, "");
    for (;;) {
      Message m = rank2.next();
      if (m.type == MsgType::round) {
        const std::string half =
            control::encode({MsgType::results, {{"step", 0}, {"results", json::array()}}});
        control::write_all_until(rank2.fd, half.data(), half.size() / 2,
                                 control::deadline_in(kIoMs));
        char c;
        (void)::read(rank2.fd, &c, 1);  // until the coordinator cuts it off
        return;
      } else if (m.type != MsgType::roster) {
        return;
      }
    }
  });
  Members members(2);
  for (uint32_t i = 0; i < 2; ++i)
    members.start(i, member_options(i, 3, c.port(), r, kKey));
  members.join();
  t.join();
  staller.join();
  const auto took = std::chrono::steady_clock::now() - t0;
  for (int fd : idle)
    close(fd);
  CHECK(members.errors == std::vector<std::string>{"", ""});
  // Served one after another, the idle connections alone would take 50 x 10 s.
  CHECK(took < std::chrono::seconds(60));
  CHECK(d.roster[2].joined);
  CHECK_THAT(d.roster[2].lost, Catch::Contains("no RESULTS"));
  size_t measured = 0;
  for (const PairResult& p : d.results)
    if (p.pair.src != 2 && p.pair.dst != 2) measured += p.ok;
  CHECK(measured == 2);
}

TEST_CASE("a rank is sent the servers of its own peers, no other rank's address",
          "[fleet][trust]") {
  RunRequest r = short_stream();
  CoordinatorOptions co = coordinator_options(4, r);
  co.key = kKey;
  co.pairs_text = "0 0 1\n0 2 3\n";
  co.pairs_name = "pairs";
  Coordinator c(co);
  FleetDoc d;
  std::thread t([&] { d = c.run(); });
  json roster;
  std::thread hand([&] {
    HandRank rank2(c.port());
    rank2.join(hand_member(2), test_of(r), kKey, "");
    Message m = rank2.next();
    if (m.type == MsgType::roster) roster = m.body;
    // and hang up: the fleet goes on without rank 2
  });
  Members members(3);
  for (uint32_t i : {0u, 1u, 3u})
    members.start(i == 3 ? 2 : i, member_options(i, 4, c.port(), r, kKey));
  hand.join();
  members.join();
  t.join();
  REQUIRE(roster.is_object());
  CHECK(roster.at("size") == 4);
  // Rank 2 tests against rank 3 alone: rank 3's server, and not ranks 0's or 1's.
  REQUIRE(roster.at("peers").size() == 1);
  CHECK(roster["peers"][0][0] == 3);
  CHECK(roster["peers"][0][1] == join_host_port(d.roster[3].address, uint16_t(d.roster[3].port)));
  CHECK(d.results.size() == 2);
}
