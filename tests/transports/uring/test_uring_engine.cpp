// The io_uring engine driven directly over loopback TCP: completion accounting, end of stream,
// accept, zero-copy; and the probe's error path through a fixture root.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "tests/support/skip.hpp"
#include "tests/transports/uring/uring_test_support.hpp"
#include "transports/inet/inet.hpp"
#include "transports/uring/register.hpp"
#include "transports/uring/uring_engine.hpp"
#include "workloads/job.hpp"

using namespace mtperf;

MTPERF_TEST_REQUIRES(mtperf::test::why_no_uring());

namespace {

using test::post_one;
using test::tcp_pair;
using test::TcpPair;

EngineConfig config(uint32_t buffers, uint32_t size) {
  return test::engine_config_for_test(buffers, size);
}

Completion next(UringEngine& e) {
  return test::next_completion(e);
}

}  // namespace

TEST_CASE("probe: io_uring_disabled=2 in the fixture root is not usable, and says how to fix it") {
  auto root =
      std::filesystem::temp_directory_path() / ("mtperf-uring-probe-" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "proc/sys/kernel");
  std::ofstream(root / "proc/sys/kernel/io_uring_disabled") << "2\n";
  ProbeResult p = uring_transport_entry().probe(root.string());
  std::filesystem::remove_all(root);
  CHECK_FALSE(p.usable);
  CHECK(p.why.find("io_uring_disabled") != std::string::npos);
  CHECK(p.why.find("sysctl kernel.io_uring_disabled=0") != std::string::npos);
}

TEST_CASE("probe: features by name where io_uring works") {
  ProbeResult p = uring_transport_entry().probe("/");
  CHECK(p.usable);
  CHECK(test::has_feature(p, "tcp"));
  // Multishot receive is only offered where a provided-buffer ring can be registered.
  if (test::has_feature(p, "multishot_recv")) CHECK(test::has_feature(p, "buf_ring"));
  // Kernels with send_zc (6.0) have provided-buffer rings (5.19) and CQE skipping (5.17).
  if (test::has_feature(p, "send_zc")) {
    CHECK(test::has_feature(p, "buf_ring"));
    CHECK(test::has_feature(p, "multishot_recv"));
    CHECK(test::has_feature(p, "link_cqe_skip"));
  }
}

TEST_CASE("options: invalid values name the key") {
  auto& e = uring_transport_entry();
  CHECK_THROWS_WITH(e.create({{"ring_size", "100"}}), Catch::Contains("ring_size"));
  CHECK_THROWS_WITH(e.create({{"zerocopy", "maybe"}}), Catch::Contains("zerocopy"));
  CHECK_THROWS_WITH(e.create({{"bogus", "1"}}), Catch::Contains("bogus"));
  CHECK_THROWS_WITH(e.create({{"buf_ring", "3"}}), Catch::Contains("buf_ring"));
  CHECK_THROWS_WITH(e.create({{"buf_ring", "65536"}}), Catch::Contains("buf_ring"));
  CHECK_THROWS_WITH(e.create({{"multishot", "2"}}), Catch::Contains("multishot"));
  CHECK_NOTHROW(
      e.create({{"buf_ring", "0"}, {"multishot", "1"}, {"link", "on"}, {"ring_fd", "1"}}));
  CHECK_NOTHROW(e.create({{"ring_size", "64"}, {"fixed_files", "on"}}));
}

TEST_CASE("a large send completes whole, however the kernel splits it; receives are partial") {
  TcpPair p;
  tcp_pair(p, 4096);  // a small send buffer: the kernel takes the data in pieces
  for (bool fixed_files : {false, true}) {
    UringSettings s;
    s.fixed_files = fixed_files;
    UringEngine e(config(2, 1 << 20), s);
    int c = e.adopt(dup(p.a), Proto::tcp);
    REQUIRE(c >= 0);
    Buf b = e.pool().get(0);
    std::memset(b.data, 0x5a, b.len);
    post_one(e, c, Op::send, b, 7);
    e.flush();
    std::vector<char> sink(b.len);
    size_t got = 0;
    std::array<Completion, 4> out;
    int completions = 0;
    Completion done{};
    while (got < b.len || completions == 0) {
      if (got < b.len) {
        // Never block outside the ring: with DEFER_TASKRUN the send only progresses when this
        // thread enters the ring.
        ssize_t n =
            ::recv(p.b, sink.data() + got, std::min<size_t>(sink.size() - got, 3000), MSG_DONTWAIT);
        if (n > 0) got += size_t(n);
      }
      int n = e.poll(out, Wait::block, 1'000'000);
      REQUIRE(n >= 0);
      if (n > 0) {
        completions += n;
        done = out[0];
      }
    }
    CHECK(completions == 1);
    CHECK(done.cookie == 7);
    CHECK(done.bytes == int32_t(b.len));
    CHECK(got == b.len);
    CHECK(e.outstanding(c) == 0);

    // Receives complete with what is there: 1..len bytes.
    Buf r = e.pool().get(1);
    post_one(e, c, Op::recv, r, 9);
    REQUIRE(::send(p.b, "hello", 5, 0) == 5);
    Completion rc = next(e);
    CHECK(rc.cookie == 9);
    CHECK(rc.bytes == 5);
    CHECK(std::memcmp(r.data, "hello", 5) == 0);
    e.close(c);
  }
}

TEST_CASE("a peer closing mid-stream: the data, then 0") {
  TcpPair p;
  tcp_pair(p);
  UringEngine e(config(2, 4096), UringSettings{});
  int c = e.adopt(p.a, Proto::tcp);
  p.a = -1;
  REQUIRE(::send(p.b, "0123456789", 10, 0) == 10);
  ::close(p.b);
  p.b = -1;
  size_t total = 0;
  for (;;) {
    post_one(e, c, Op::recv, e.pool().get(0), 1);
    Completion r = next(e);
    REQUIRE(r.bytes >= 0);
    if (r.bytes == 0) break;
    total += size_t(r.bytes);
  }
  CHECK(total == 10);
  // A receive pending when the connection is closed is dropped, not reported.
  post_one(e, c, Op::recv, e.pool().get(0), 2);
  e.flush();
  e.close(c);
  std::array<Completion, 4> out;
  CHECK(e.poll(out, Wait::block, 50'000'000) == 0);
}

TEST_CASE("close drops in-flight receives and the peer sees the end at once") {
  TcpPair p;
  tcp_pair(p);
  UringEngine e(config(2, 4096), UringSettings{});
  int c = e.adopt(p.a, Proto::tcp);
  p.a = -1;
  post_one(e, c, Op::recv, e.pool().get(0), 3);
  e.flush();
  std::array<Completion, 4> out;
  CHECK(e.poll(out, Wait::block, 10'000'000) == 0);
  CHECK(e.outstanding(c) == 1);
  e.close(c);
  char x;
  CHECK(inet::read_exact(p.b, &x, 1, 2000) == false);  // EOF, not a timeout
  CHECK(errno == 0);
  for (int i = 0; i < 10; ++i)
    CHECK(e.poll(out, Wait::block, 10'000'000) == 0);
}

TEST_CASE("accept through the engine: the completion carries the new ConnId") {
  UringEngine e(config(2, 4096), UringSettings{});
  SocketOptions o;
  int l = inet::listen_on(inet::resolve("127.0.0.1", 0), Proto::tcp, o);
  SockAddr where = inet::local_address(l);
  int lid = e.listen_adopt(l);
  REQUIRE(lid >= 0);
  post_one(e, lid, Op::accept, Buf{}, 11);
  e.flush();
  int cli = inet::connect_to(where, Proto::tcp, o, 2000);
  Completion a = next(e);
  CHECK(a.cookie == 11);
  REQUIRE(a.bytes >= 0);
  REQUIRE(a.bytes != lid);
  post_one(e, a.bytes, Op::recv, e.pool().get(0), 12);
  REQUIRE(::send(cli, "x", 1, 0) == 1);
  Completion r = next(e);
  CHECK(r.cookie == 12);
  CHECK(r.bytes == 1);
  ::close(cli);
}
