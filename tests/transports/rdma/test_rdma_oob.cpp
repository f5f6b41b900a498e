// -O connect=oob over FakeVerbs (fake_verbs.hpp), against a peer written here on a loopback TCP
// socket: the exchange, the QP's moves to INIT, RTR and RTS with what both sides said, and every
// failure (a move failing at each step, a peer closing mid-exchange, malformed hellos) ending in
// an error that names it, with nothing left alive: no QP, id, channel or descriptor.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>

#include "tests/transports/rdma/fake_flows.hpp"
#include "tests/transports/rdma/fake_verbs.hpp"
#include "tests/transports/rdma/tcp_peer.hpp"
#include "transports/rdma/engine.hpp"
#include "transports/rdma/oob.hpp"
#include "transports/rdma/setup.hpp"
#include "verbs/cm.hpp"

using namespace mtperf;
using namespace mtperf::rdma;
using namespace mtperf::rdma::test;

namespace {

// The hello a well-behaved peer of flow `s` sends.
OobHello peer_hello(const FlowSetup& s, Verb v) {
  OobHello h;
  h.qp.qpn = 0x4242;
  h.qp.psn = 0x123;
  h.qp.link = kLinkEthernet;
  h.qp.mtu = IBV_MTU_512;  // below the fake port's 1024: the path MTU
  h.qp.depths = {4, 2};
  h.qp.gid[10] = 0xff;
  h.qp.gid[11] = 0xff;
  h.qp.gid[12] = 127;
  h.qp.gid[15] = 1;
  std::vector<uint8_t> pd = peer_pd(s, v);
  REQUIRE(decode_conn_info(pd.data(), pd.size(), h.conn) == PdError::ok);
  return h;
}

std::vector<uint8_t> encoded(const OobHello& h) {
  std::vector<uint8_t> b(kOobBytes);
  encode_oob(h, b.data());
  return b;
}

// A client thread that connects to 127.0.0.1:port and runs `script`.
struct ScriptedClient {
  std::thread t;
  ScriptedClient(uint16_t port, std::function<void(int)> script) {
    t = std::thread([port, script] {
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(port);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) script(fd);
      ::close(fd);
    });
  }
  ~ScriptedClient() { t.join(); }
};

int64_t soon() {
  return monotonic_ns() + 3'000'000'000;
}

}  // namespace

TEST_CASE("oob connect: the exchange, then INIT, RTR and RTS from both sides' figures") {
  int fds_before = open_fds();
  FakeVerbs f;
  EngineConfig cfg = fake_config(false);
  FlowSetup setup = fake_flow(cfg, false);
  RdmaSettings s;
  s.connect = ConnectMode::oob;
  s.verb = GENERATE(Verb::send, Verb::write, Verb::read);
  s.srq = GENERATE(SrqMode::off, SrqMode::on);
  auto res = std::make_shared<WorkerRes>(cfg, s, false, f);
  OobHello got;
  bool got_ready = false;
  {
    ScriptedServer server([&](int fd) {
      std::array<uint8_t, kOobBytes> b{};
      if (!read_n(fd, b.data(), b.size())) return;
      decode_oob(b.data(), b.size(), got);
      auto out = encoded(peer_hello(setup, s.verb));
      ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
      uint8_t ready[4];
      got_ready = read_n(fd, ready, 4) && std::memcmp(ready, "MTRY", 4) == 0;
      read_n(fd, ready, 1);  // until the client closes
    });
    std::unique_ptr<Endpoint> ep =
        oob_connect(numeric_address("127.0.0.1", server.port), SockAddr{}, setup, res, soon());
    REQUIRE(ep != nullptr);
    auto& e = static_cast<RdmaEndpoint&>(*ep);
    CHECK(e.id == nullptr);
    REQUIRE(e.qp != nullptr);
    CHECK(e.oob_fd >= 0);
    CHECK(f.moves[IBV_QPS_INIT] == 1);
    CHECK(f.moves[IBV_QPS_RTR] == 1);
    CHECK(f.moves[IBV_QPS_RTS] == 1);
    CHECK(f.live(Obj::cm_id) == 0);  // the id that found the device is gone
    CHECK(f.last_rtr.path_mtu == IBV_MTU_512);
    CHECK(f.last_rtr.dest_qp_num == 0x4242);
    CHECK(f.last_rtr.rq_psn == 0x123);
    CHECK(f.last_rtr.ah_attr.is_global == 1);
    CHECK(f.last_rtr.ah_attr.grh.sgid_index == 3);  // RoCE v2, ::ffff:127.0.0.1
    CHECK(f.last_rtr.ah_attr.grh.dgid.raw[12] == 127);
    CHECK(f.last_rtr.min_rnr_timer == kMinRnrTimer);
    CHECK(f.last_rtr.max_dest_rd_atomic == 2);  // the peer keeps at most 2 READs in flight
    CHECK(f.last_rts.max_rd_atomic == 4);       // the peer answers at most 4
    CHECK(f.last_rts.retry_cnt == kTransportRetry);
    CHECK(f.last_rts.rnr_retry == kRnrRetry);
    CHECK(f.last_rts.timeout == 19);
    {
      RdmaEngine engine(res, EngineMode{});
      int id = engine.adopt(*ep);
      REQUIRE(id >= 0);
      ep.reset();
      turn(engine, 1);
      engine.close(id);
      turn(engine, s.srq == SrqMode::off ? 1 : 60);
      CHECK(f.live(Obj::qp) == 0);
    }
  }
  CHECK(got_ready);
  CHECK(got.qp.qpn == f.last_qp_num);
  CHECK(got.qp.mtu == IBV_MTU_1024);
  CHECK(got.conn.cookie == kCookie);
  CHECK(got.qp.gid[12] == 127);
  res.reset();
  CHECK(f.leftovers() == "");
  CHECK(open_fds() == fds_before);
}

TEST_CASE("oob connect: every failure names its cause and leaves nothing behind") {
  int fds_before = open_fds();
  FakeVerbs f;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, false);
  RdmaSettings s;
  s.connect = ConnectMode::oob;
  auto res = std::make_shared<WorkerRes>(cfg, s, false, f);
  OobHello good = peer_hello(setup, Verb::send);
  std::vector<uint8_t> reply = encoded(good);
  size_t cut = reply.size();
  std::string expect;
  SECTION("the move to INIT fails") {
    f.fail(Call::modify_qp, 1, EINVAL);
    expect = "to INIT";
  }
  SECTION("the move to RTR fails") {
    f.fail(Call::modify_qp, 2, EINVAL);
    expect = "to RTR";
  }
  SECTION("the move to RTS fails") {
    f.fail(Call::modify_qp, 3, EINVAL);
    expect = "to RTS";
  }
  SECTION("creating the QP fails") {
    res->device(f.context());  // made first: the QP that fails is the connection's
    f.fail(Call::create_qp, 1);
    expect = "ibv_create_qp";
  }
  SECTION("the port cannot be read") {
    f.fail(Call::query_port, 1, EIO);
    expect = "ibv_query_port";
  }
  SECTION("the address has no GID") {
    f.gids.resize(2);
    expect = "no GID";
  }
  SECTION("the peer closes mid-exchange") {
    cut = 40;
    expect = "closed the connection after 40 of 88";
  }
  SECTION("a bad magic") {
    reply[0] = 'X';
    expect = "bad magic";
  }
  SECTION("a QP number of 25 bits") {
    reply[8] = 1;
    expect = "QP number";
  }
  SECTION("a PSN of 25 bits") {
    reply[12] = 1;
    expect = "PSN";
  }
  SECTION("an MTU out of range") {
    reply[6] = 7;
    expect = "MTU";
  }
  SECTION("READ depths of 0") {
    reply[18] = 0;
    expect = "READ depths";
  }
  SECTION("another test's cookie") {
    FlowSetup other = setup;
    other.cookie = 1;
    reply = encoded(peer_hello(other, Verb::send));
    expect = "cookie";
  }
  SECTION("another verb") {
    reply = encoded(peer_hello(setup, Verb::write));
    expect = "verb";
  }
  {
    ScriptedServer server([&](int fd) {
      std::array<uint8_t, kOobBytes> b{};
      if (!read_n(fd, b.data(), b.size())) return;
      ::send(fd, reply.data(), cut, MSG_NOSIGNAL);
      uint8_t x;
      read_n(fd, &x, 1);
    });
    try {
      oob_connect(numeric_address("127.0.0.1", server.port), SockAddr{}, setup, res, soon());
      FAIL("no error");
    } catch (const std::runtime_error& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(expect) != std::string::npos);
      CHECK(std::string(e.what()).find("flow 3") != std::string::npos);
    }
  }
  INFO("alive: " << f.live_text());
  CHECK(f.live(Obj::qp) == 0);
  CHECK(f.live(Obj::cm_id) == 0);
  res.reset();
  CHECK(f.leftovers() == "");
  CHECK(open_fds() == fds_before);
}

TEST_CASE("oob connect: no server by the deadline is an error, nothing left") {
  int fds_before = open_fds();
  FakeVerbs f;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, false);
  RdmaSettings s;
  s.connect = ConnectMode::oob;
  auto res = std::make_shared<WorkerRes>(cfg, s, false, f);
  {
    // A server that accepts and never answers.
    ScriptedServer server([&](int fd) {
      uint8_t b[kOobBytes];
      read_n(fd, b, sizeof b);
      read_n(fd, b, 1);
    });
    CHECK_THROWS_WITH(oob_connect(numeric_address("127.0.0.1", server.port), SockAddr{}, setup, res,
                                  monotonic_ns() + 200'000'000),
                      Catch::Contains("by the deadline"));
  }
  res.reset();
  CHECK(f.leftovers() == "");
  CHECK(open_fds() == fds_before);
}

TEST_CASE("oob accept: a good client is served; strangers and the gone are dropped and counted") {
  int fds_before = open_fds();
  FakeVerbs f;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, false);
  RdmaSettings s;
  s.connect = ConnectMode::oob;
  auto res = std::make_shared<WorkerRes>(cfg, s, false, f);
  std::unique_ptr<FlowListener> l = oob_listen(numeric_address("127.0.0.1", 0), setup, res);
  REQUIRE(l->port() != 0);
  auto accept_one = [&] {
    pollfd q{l->wait_fd(), POLLIN, 0};
    REQUIRE(::poll(&q, 1, 3000) == 1);
    return l->accept(soon());
  };
  SECTION("malformed keys, then a peer closing mid-hello: dropped; then a good one") {
    {
      std::vector<uint8_t> bad = encoded(peer_hello(setup, Verb::send));
      bad[12] = 0xff;  // PSN
      ScriptedClient c(l->port(), [&](int fd) {
        ::send(fd, bad.data(), bad.size(), MSG_NOSIGNAL);
        uint8_t x;
        read_n(fd, &x, 1);  // the server closes
      });
      CHECK(accept_one() == nullptr);
    }
    {
      ScriptedClient c(l->port(), [&](int fd) {
        std::vector<uint8_t> h = encoded(peer_hello(setup, Verb::send));
        ::send(fd, h.data(), 30, MSG_NOSIGNAL);
      });
      CHECK(accept_one() == nullptr);
    }
    CHECK(l->rejected() == 2);
    CHECK(f.live(Obj::qp) == 0);
    bool answered = false;
    ScriptedClient c(l->port(), [&](int fd) {
      std::vector<uint8_t> h = encoded(peer_hello(setup, Verb::send));
      ::send(fd, h.data(), h.size(), MSG_NOSIGNAL);
      std::array<uint8_t, kOobBytes> b{};
      OobHello back;
      answered =
          read_n(fd, b.data(), b.size()) && decode_oob(b.data(), b.size(), back) == OobError::ok;
      ::send(fd, "MTRY", 4, MSG_NOSIGNAL);
      read_n(fd, b.data(), 1);
    });
    std::unique_ptr<Endpoint> ep = accept_one();
    REQUIRE(ep != nullptr);
    CHECK(f.moves[IBV_QPS_RTS] == 1);
    CHECK(f.last_rtr.dest_qp_num == 0x4242);
    ep.reset();  // the client's read ends
    c.t.join();
    c.t = std::thread([] {});
    CHECK(answered);
  }
  SECTION("the client goes before its ready: an error, nothing left") {
    ScriptedClient c(l->port(), [&](int fd) {
      std::vector<uint8_t> h = encoded(peer_hello(setup, Verb::send));
      ::send(fd, h.data(), h.size(), MSG_NOSIGNAL);
      std::array<uint8_t, kOobBytes> b{};
      read_n(fd, b.data(), b.size());
    });
    CHECK_THROWS_WITH(accept_one(), Catch::Contains("ready"));
  }
  SECTION("the move to RTR fails: an error, nothing left") {
    f.fail(Call::modify_qp, 2, EINVAL);
    ScriptedClient c(l->port(), [&](int fd) {
      std::vector<uint8_t> h = encoded(peer_hello(setup, Verb::send));
      ::send(fd, h.data(), h.size(), MSG_NOSIGNAL);
      uint8_t x;
      read_n(fd, &x, 1);
    });
    CHECK_THROWS_WITH(accept_one(), Catch::Contains("to RTR"));
  }
  CHECK(f.live(Obj::qp) == 0);
  l.reset();
  res.reset();
  CHECK(f.leftovers() == "");
  CHECK(open_fds() == fds_before);
}

TEST_CASE("oob: a peer that closes its TCP connection is a disconnect the workload sees") {
  FakeVerbs f;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, false);
  RdmaSettings s;
  s.connect = ConnectMode::oob;
  auto res = std::make_shared<WorkerRes>(cfg, s, false, f);
  int peer_fd[2] = {-1, -1};
  std::unique_ptr<Endpoint> ep;
  {
    ScriptedServer server([&](int fd) {
      std::array<uint8_t, kOobBytes> b{};
      if (!read_n(fd, b.data(), b.size())) return;
      auto out = encoded(peer_hello(setup, Verb::send));
      ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
      read_n(fd, b.data(), 4);
      // the script's end closes the connection: the peer is gone
    });
    ep = oob_connect(numeric_address("127.0.0.1", server.port), SockAddr{}, setup, res, soon());
  }
  (void)peer_fd;
  {
    RdmaEngine engine(res, EngineMode{});
    int id = engine.adopt(*ep);
    REQUIRE(id >= 0);
    WorkReq arm;
    arm.op = Op::recv;
    arm.cookie = 9;
    REQUIRE(engine.post(id, std::span<const WorkReq>(&arm, 1)) == 1);
    std::vector<Completion> got;
    int64_t until = monotonic_ns() + 2'000'000'000;
    while (got.empty() && monotonic_ns() < until) {
      for (const Completion& c : turn(engine, 1))
        if (c.cookie == 9 && c.bytes < 0) got.push_back(c);
    }
    REQUIRE(got.size() == 1);
    REQUIRE(engine.error_text(id) != nullptr);
    CHECK(std::string(engine.error_text(id)).find("out-of-band connection") != std::string::npos);
    engine.close(id);
  }
  ep.reset();
  res.reset();
  CHECK(f.leftovers() == "");
}

TEST_CASE("oob connect on InfiniBand: the peer's LID, no global route, GID index 0 unless given") {
  FakeVerbs f;
  f.port_attr.link_layer = IBV_LINK_LAYER_INFINIBAND;
  f.port_attr.lid = 7;
  for (auto& g : f.gids)
    g.gid_type = IBV_GID_TYPE_IB;
  EngineConfig cfg = fake_config(true);
  FlowSetup setup = fake_flow(cfg, false);
  RdmaSettings s;
  s.connect = ConnectMode::oob;
  auto res = std::make_shared<WorkerRes>(cfg, s, false, f);
  OobHello got;
  {
    ScriptedServer server([&](int fd) {
      std::array<uint8_t, kOobBytes> b{};
      if (!read_n(fd, b.data(), b.size())) return;
      decode_oob(b.data(), b.size(), got);
      OobHello h = peer_hello(setup, Verb::send);
      h.qp.link = kLinkIb;
      h.qp.lid = 9;
      auto out = encoded(h);
      ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
      uint8_t x[4];
      read_n(fd, x, 4);
    });
    std::unique_ptr<Endpoint> ep =
        oob_connect(numeric_address("127.0.0.1", server.port), SockAddr{}, setup, res, soon());
    REQUIRE(ep != nullptr);
  }
  CHECK(got.qp.link == kLinkIb);
  CHECK(got.qp.lid == 7);
  CHECK(f.last_rtr.ah_attr.is_global == 0);
  CHECK(f.last_rtr.ah_attr.dlid == 9);
  res.reset();
  CHECK(f.leftovers() == "");
}
