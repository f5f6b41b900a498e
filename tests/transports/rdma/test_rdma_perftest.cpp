// mtperf's client of perftest's servers (verbs/perftest_run.hpp) over FakeVerbs (fake_verbs.hpp),
// against a perftest server's side of the exchange written here on a loopback TCP socket: every
// failure (a move failing at each step, the server closing mid-exchange, malformed keys, a server
// that stops answering before or during the data phase) ends in an error that names it, with
// nothing left alive: no QP, MR, CQ, PD or descriptor.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tests/transports/rdma/fake_verbs.hpp"
#include "tests/transports/rdma/tcp_peer.hpp"
#include "verbs/perftest_run.hpp"
#include "verbs/perftest_wire.hpp"
#include "verbs/tcp_exact.hpp"

using namespace mtperf;
using namespace mtperf::rdma;
using namespace mtperf::rdma::test;
namespace pt = mtperf::perftest;

namespace {

// What the server sends at each of its answers, in order: perftest 4.5's own messages.
std::vector<std::vector<uint8_t>> server_answers(size_t barriers) {
  pt::Keys k;
  k.qpn = 0x77;
  k.psn = 0x1234;
  k.rkey = 0x99;
  k.vaddr = 0x10000;
  k.out_reads = 4;
  k.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
  auto v = pt::encode_version("6.06");
  auto cb = pt::encode_int(4096);
  auto cl = pt::encode_int(64);
  auto mtu = pt::encode_mtu(3);
  std::vector<std::vector<uint8_t>> a = {{v.begin(), v.end()},
                                         {cb.begin(), cb.end()},
                                         {cl.begin(), cl.end()},
                                         {mtu.begin(), mtu.end()}};
  for (size_t i = 0; i <= barriers; ++i)
    a.push_back(pt::encode_keys(k, true));
  return a;
}

// perftest's server's side of the exchange: for each answer, reads the client's message of the
// same size and writes the answer; `cut` bytes of answer `at` and then it closes (SIZE_MAX: all
// of them, then it waits for the client to go).
std::function<void(int)> perftest_server(std::vector<std::vector<uint8_t>> answers, size_t at,
                                         size_t cut) {
  return [answers, at, cut](int fd) {
    for (size_t i = 0; i < answers.size(); ++i) {
      std::vector<uint8_t> in(answers[i].size());
      if (!read_n(fd, in.data(), in.size())) return;
      size_t n = i == at ? std::min(cut, answers[i].size()) : answers[i].size();
      ::send(fd, answers[i].data(), n, MSG_NOSIGNAL);
      if (i == at) return;
    }
    uint8_t x;
    read_n(fd, &x, 1);  // until the client closes
  };
}

int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

}  // namespace

TEST_CASE("perftest client: every failure names its cause and leaves nothing behind",
          "[perftest]") {
  const int fds_before = open_fds();
  FakeVerbs f;
  PerftestAsk a;
  a.program = pt::Program::send_bw;
  a.size = 4096;
  a.iters = 10;
  a.timeout_ns = 300'000'000;
  std::vector<std::vector<uint8_t>> answers = server_answers(3);
  size_t at = SIZE_MAX, cut = 0;
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
  SECTION("registering the buffer fails") {
    f.fail(Call::reg_mr, 1);
    expect = "ibv_reg_mr";
  }
  SECTION("the server closes mid-exchange") {
    at = 1;  // the cycle buffer: 2 of its 4 bytes
    cut = 2;
    expect = "cycle buffer: the peer closed the connection after 2 of 4 bytes";
  }
  SECTION("an old server") {
    auto v = pt::encode_version("5.60");
    answers[0].assign(v.begin(), v.end());
    expect = "version 5.60";
  }
  SECTION("malformed keys") {
    answers[4][5] = 'z';  // within the outstanding reads' hex digits
    expect = "perftest's keys";
  }
  SECTION("keys of another address family") {
    answers[4] = answers[5];
    pt::Keys k = pt::decode_keys(answers[4], true);
    k.gid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    answers[4] = pt::encode_keys(k, true);
    expect = "different address families";
  }
  SECTION("the server stops answering in the exchange") {
    at = 4;  // the keys: nothing of them
    cut = 0;
    expect = "the peer closed";
  }
  SECTION("the server stops answering in the data phase") {
    expect = "stopped answering: 0 of 10";  // FakeVerbs completes nothing
  }
  {
    ScriptedServer server(perftest_server(answers, at, cut));
    Fd fd(connect_to(server.port));
    try {
      run_perftest(f, fd.fd, "perftest at 127.0.0.1", a);
      FAIL("no error");
    } catch (const std::runtime_error& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(expect) != std::string::npos);
    }
  }
  INFO("alive: " << f.live_text());
  CHECK(f.leftovers() == "");
  CHECK(open_fds() == fds_before);
}

TEST_CASE("perftest client: the queue pair is brought up from perftest's keys", "[perftest]") {
  FakeVerbs f;
  PerftestAsk a;
  a.program = pt::Program::write_bw;
  a.size = 65536;
  a.iters = 3;
  a.timeout_ns = 300'000'000;
  {
    ScriptedServer server(perftest_server(server_answers(2), SIZE_MAX, 0));
    Fd fd(connect_to(server.port));
    CHECK_THROWS_WITH(run_perftest(f, fd.fd, "perftest at 127.0.0.1", a),
                      Catch::Contains("stopped answering"));
  }
  // RTR from the server's keys and the MTU both kept (the smaller: its 1024, our port's 1024).
  CHECK(f.last_rtr.dest_qp_num == 0x77);
  CHECK(f.last_rtr.rq_psn == 0x1234);
  CHECK(f.last_rtr.path_mtu == IBV_MTU_1024);
  CHECK(f.last_rtr.max_dest_rd_atomic == 4);
  CHECK(f.last_rtr.ah_attr.is_global == 1);
  CHECK(f.last_rtr.ah_attr.grh.dgid.raw[12] == 127);
  CHECK(f.last_rts.max_rd_atomic == 4);
  CHECK(f.posted_sends > 0);  // WRITEs went out to its buffer
  CHECK(f.leftovers() == "");
}
