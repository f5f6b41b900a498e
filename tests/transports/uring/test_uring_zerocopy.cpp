// The io_uring engine's zero-copy sends driven directly over loopback TCP (a binary of its own:
// it needs IORING_OP_SEND_ZC, which the other engine tests do not).
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <vector>

#include "tests/support/skip.hpp"
#include "tests/transports/uring/uring_test_support.hpp"
#include "transports/uring/uring_engine.hpp"

using namespace mtperf;

MTPERF_TEST_REQUIRES(mtperf::test::why_no_uring({"send_zc"}));

namespace {

using test::post_one;
using test::tcp_pair;
using test::TcpPair;

EngineConfig config(uint32_t buffers, uint32_t size) {
  return test::engine_config_for_test(buffers, size);
}

}  // namespace

TEST_CASE("zero-copy: one completion per send, after its notification, data intact") {
  TcpPair p;
  tcp_pair(p);
  for (bool fixed : {false, true}) {
    UringSettings s;
    s.zerocopy = true;
    s.fixed_buffers = fixed;
    UringEngine e(config(4, 256 * 1024), s);
    CHECK(e.effective().zerocopy);
    int c = e.adopt(dup(p.a), Proto::tcp);
    constexpr int kSends = 3;
    for (int i = 0; i < kSends; ++i) {
      Buf b = e.pool().get(uint32_t(i));
      std::memset(b.data, 'a' + i, b.len);
      post_one(e, c, Op::send, b, uint64_t(100 + i));
    }
    e.flush();
    std::vector<char> sink(size_t(kSends) * 256 * 1024);
    size_t got = 0;
    int completions = 0;
    std::array<Completion, 8> out;
    while (got < sink.size() || completions < kSends) {
      if (got < sink.size()) {
        ssize_t n = ::recv(p.b, sink.data() + got, sink.size() - got, MSG_DONTWAIT);
        if (n > 0) got += size_t(n);
      }
      int n = e.poll(out, Wait::block, 1'000'000);
      REQUIRE(n >= 0);
      for (int i = 0; i < n; ++i) {
        CHECK(out[i].bytes == 256 * 1024);
        CHECK((out[i].cookie >= 100 && out[i].cookie < 100 + kSends));
      }
      completions += n;
      // Every send reported is one whose buffer the kernel gave back: nothing is left open.
      if (completions == kSends) CHECK(e.outstanding(c) == 0);
    }
    CHECK(completions == kSends);
    for (size_t i = 0; i < sink.size(); ++i) {
      if (sink[i] != char('a' + i / (256 * 1024))) FAIL("data differs at byte " << i);
    }
    std::array<Completion, 8> extra;
    CHECK(e.poll(extra, Wait::block, 20'000'000) == 0);  // no late report from a notification
    e.close(c);
  }
}
