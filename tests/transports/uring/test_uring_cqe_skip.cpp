// Unsignaled sends (WorkReq::signal = false, the cqe_skip option) on the io_uring engine over
// loopback sockets: no CQE when they succeed, a completion when they fail, nothing late.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "tests/transports/uring/uring_test_support.hpp"

using namespace mtperf;
using namespace mtperf::test;

MTPERF_TEST_REQUIRES(mtperf::test::why_no_uring({"multishot_recv", "link_cqe_skip"}));

namespace {

void post_send(UringEngine& e, int conn, Buf b, uint64_t cookie, bool signal) {
  WorkReq r;
  r.op = Op::send;
  r.buf = b;
  r.cookie = cookie;
  r.signal = signal;
  REQUIRE(e.post(conn, std::span<const WorkReq>(&r, 1)) == 1);
}

Buf text(UringEngine& e, uint32_t index, const char* s) {
  Buf b = e.pool().get(index);
  b.len = uint32_t(std::strlen(s));
  std::memcpy(b.data, s, b.len);
  return b;
}

// Polls for `ns`; every completion found goes to `out` (at most 16).
int drain(UringEngine& e, std::array<Completion, 16>& out, int64_t ns) {
  int n = 0;
  int64_t end = now_ns() + ns;
  while (now_ns() < end && n < int(out.size())) {
    int k = e.poll(std::span<Completion>(out).subspan(size_t(n)), Wait::block, 10'000'000);
    REQUIRE(k >= 0);
    n += k;
  }
  return n;
}

UringSettings skip_settings(bool multishot) {
  UringSettings s;
  s.cqe_skip = true;
  s.multishot = multishot;
  return s;
}

}  // namespace

TEST_CASE("cqe_skip: an unsignaled send has no CQE; the next send on it lets go of its slot") {
  TcpPair p;
  tcp_pair(p);
  UringEngine e(engine_config_for_test(2, 4096), skip_settings(false));
  REQUIRE(e.effective().cqe_skip);
  REQUIRE(e.caps().unsignaled_sends);
  int c = e.adopt(p.a, Proto::tcp);
  p.a = -1;
  post_send(e, c, text(e, 0, "ping"), 1, false);
  std::array<Completion, 16> out;
  CHECK(drain(e, out, 30'000'000) == 0);
  char buf[8];
  REQUIRE(inet::read_exact(p.b, buf, 4, 2000));
  CHECK(std::memcmp(buf, "ping", 4) == 0);
  CHECK(e.cqes() == 0);          // the kernel posted nothing for it
  CHECK(e.outstanding(c) == 1);  // held until the workload says it is done
  post_send(e, c, text(e, 1, "pong!"), 2, true);
  CHECK(e.outstanding(c) == 1);  // the unsignaled one went; the signaled one is in flight
  Completion r = next_completion(e);
  CHECK(r.cookie == 2);
  CHECK(r.bytes == 5);
  CHECK(e.cqes() == 1);
  CHECK(e.outstanding(c) == 0);
  REQUIRE(inet::read_exact(p.b, buf, 5, 2000));
  CHECK(std::memcmp(buf, "pong!", 5) == 0);
}

TEST_CASE("cqe_skip with a multishot receive armed: one CQE per transaction instead of two") {
  for (bool skip : {false, true}) {
    INFO("cqe_skip " << skip);
    TcpPair p;
    tcp_pair(p);
    UringSettings s = skip_settings(true);
    s.cqe_skip = skip;
    UringEngine e(engine_config_for_test(2, 64), s);
    REQUIRE(e.effective().multishot);
    int c = e.adopt(p.a, Proto::tcp);
    p.a = -1;
    WorkReq rr;
    rr.op = Op::recv;
    rr.cookie = 9;
    REQUIRE(e.post(c, std::span<const WorkReq>(&rr, 1)) == 1);
    constexpr int kRounds = 5;
    int send_completions = 0;
    for (int i = 0; i < kRounds; ++i) {
      post_send(e, c, text(e, 0, "req"), 1, false);
      std::array<Completion, 16> out;
      send_completions += drain(e, out, 20'000'000);  // only a signaled send's completion
      char buf[3];
      REQUIRE(inet::read_exact(p.b, buf, 3, 2000));
      REQUIRE(::send(p.b, "resp", 4, 0) == 4);
      int got = 0;
      while (got < 4) {
        Completion r = next_completion(e);
        if (r.cookie == 1) {
          ++send_completions;
          continue;
        }
        CHECK(r.cookie == 9);
        REQUIRE((r.flags & kCompBuffer) != 0);
        got += r.bytes;
        e.recycle(r.buf_id);
      }
    }
    if (skip) {
      CHECK(send_completions == 0);
      CHECK(e.cqes() == uint64_t(kRounds));  // the receive's, one per answer
    } else {
      CHECK(send_completions == kRounds);
      CHECK(e.cqes() == uint64_t(2 * kRounds));
    }
    e.close(c);
  }
}

TEST_CASE("cqe_skip: a failed unsignaled send still completes, with its error") {
  TcpPair p;
  tcp_pair(p);
  UringEngine e(engine_config_for_test(2, 4096), skip_settings(false));
  int c = e.adopt(p.a, Proto::tcp);
  p.a = -1;
  linger l{1, 0};  // close with a reset
  REQUIRE(::setsockopt(p.b, SOL_SOCKET, SO_LINGER, &l, sizeof(l)) == 0);
  ::close(p.b);
  p.b = -1;
  Buf b = e.pool().get(0);
  b.len = 100;
  post_send(e, c, b, 3, false);
  Completion r = next_completion(e);
  CHECK(r.cookie == 3);
  CHECK(r.bytes < 0);
  CHECK((r.flags & kCompError) != 0);
  CHECK(e.outstanding(c) == 0);
}

TEST_CASE(
    "cqe_skip: close lets go of an unsignaled send still in the kernel; its late CQE never "
    "surfaces, not even on the slot's next operation") {
  TcpPair p;
  tcp_pair(p, 4096);  // small buffers, and the peer does not read: the send cannot finish
  int small = 4096;
  REQUIRE(::setsockopt(p.b, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) == 0);
  UringEngine e(engine_config_for_test(2, 8 << 20), skip_settings(false));
  int c = e.adopt(p.a, Proto::tcp);
  p.a = -1;
  Buf big = e.pool().get(0);
  post_send(e, c, big, 1, false);
  std::array<Completion, 16> out;
  CHECK(drain(e, out, 30'000'000) == 0);
  CHECK(e.outstanding(c) == 1);
  e.close(c);
  CHECK(e.outstanding(c) == 0);
  // A new connection whose first send most likely takes the freed slot.
  TcpPair q;
  tcp_pair(q);
  int d = e.adopt(q.a, Proto::tcp);
  q.a = -1;
  post_send(e, d, text(e, 1, "hello"), 2, true);
  int n = drain(e, out, 100'000'000);
  REQUIRE(n == 1);
  CHECK(out[0].cookie == 2);
  CHECK(out[0].bytes == 5);
  CHECK(e.cqes() >= 2);  // the send's CQE (ended by the shutdown) came, and was dropped
}
