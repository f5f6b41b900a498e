// Multishot receive into a provided-buffer ring, and linked send->recv, on the io_uring engine
// over loopback sockets.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "tests/transports/uring/uring_test_support.hpp"

using namespace mtperf;
using namespace mtperf::test;

MTPERF_TEST_REQUIRES(mtperf::test::why_no_uring({"multishot_recv", "link_cqe_skip"}));

namespace {

UringSettings multishot_settings(uint32_t entries = 0) {
  UringSettings s;
  s.multishot = true;
  s.buf_ring_entries = entries;
  return s;
}

// Takes what a provided-buffer completion carries and hands the buffer back.
void take(UringEngine& e, const Completion& c, std::vector<uint8_t>& into) {
  REQUIRE((c.flags & kCompBuffer) != 0);
  REQUIRE(c.data != nullptr);
  REQUIRE(c.bytes > 0);
  auto* p = reinterpret_cast<const uint8_t*>(c.data);
  into.insert(into.end(), p, p + c.bytes);
  e.recycle(c.buf_id);
}

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = uint8_t(i % 251);
  return v;
}

// Two UDP sockets on 127.0.0.1 connected to each other.
struct UdpPair {
  int a = -1, b = -1;
  UdpPair() {
    a = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    b = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{}, sb{};
    sa.sin_family = sb.sin_family = AF_INET;
    sa.sin_addr.s_addr = sb.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    REQUIRE(::bind(a, reinterpret_cast<sockaddr*>(&sa), len) == 0);
    REQUIRE(::bind(b, reinterpret_cast<sockaddr*>(&sb), len) == 0);
    REQUIRE(::getsockname(a, reinterpret_cast<sockaddr*>(&sa), &len) == 0);
    REQUIRE(::getsockname(b, reinterpret_cast<sockaddr*>(&sb), &len) == 0);
    REQUIRE(::connect(a, reinterpret_cast<sockaddr*>(&sb), len) == 0);
    REQUIRE(::connect(b, reinterpret_cast<sockaddr*>(&sa), len) == 0);
  }
  ~UdpPair() {
    if (a >= 0) ::close(a);
    if (b >= 0) ::close(b);
  }
};

}  // namespace

TEST_CASE(
    "multishot: a tiny buffer ring runs dry (ENOBUFS); the receive is re-armed when "
    "buffers come back, and no byte is lost") {
  TcpPair p;
  tcp_pair(p);
  UringEngine e(engine_config_for_test(2, 16), multishot_settings(2));  // two 16-byte buffers
  REQUIRE(e.effective().multishot);
  REQUIRE(e.caps().provides_recv_buffers);
  int c = e.adopt(p.a, Proto::tcp);
  p.a = -1;
  post_one(e, c, Op::recv, Buf{}, 5);
  std::vector<uint8_t> sent = pattern(1000), got;
  REQUIRE(::send(p.b, sent.data(), sent.size(), 0) == ssize_t(sent.size()));

  // Hold every buffer: the ring has two, so two completions, then the kernel runs out.
  std::vector<Completion> held;
  std::array<Completion, 8> out;
  for (int i = 0; i < 10; ++i) {
    int n = e.poll(out, Wait::block, 20'000'000);
    REQUIRE(n >= 0);
    held.insert(held.end(), out.begin(), out.begin() + n);
  }
  REQUIRE(held.size() == 2);
  CHECK(e.buffers_held() == 2);
  for (const Completion& h : held) {
    CHECK(h.cookie == 5);
    CHECK((h.flags & kCompMore) != 0);  // still armed as far as the worker is concerned
    CHECK(h.bytes == 16);
  }
  CHECK(e.outstanding(c) == 1);

  // Give them back: the receive is armed again and the rest arrives, in order.
  for (const Completion& h : held)
    take(e, h, got);
  while (got.size() < sent.size()) {
    Completion r = next_completion(e);
    CHECK(r.cookie == 5);
    CHECK((r.flags & kCompMore) != 0);
    CHECK(r.bytes <= 16);
    take(e, r, got);
  }
  CHECK(got == sent);
  CHECK(e.rearms() > 0);
  CHECK(e.buffers_held() == 0);
  CHECK(e.outstanding(c) == 1);
  e.close(c);
  CHECK(e.poll(out, Wait::block, 20'000'000) == 0);
}

TEST_CASE(
    "multishot: partial TCP receives add up to the stream; UDP completions are whole "
    "datagrams") {
  SECTION("tcp: 64-byte buffers, 500 bytes in five sends") {
    TcpPair p;
    tcp_pair(p);
    UringEngine e(engine_config_for_test(2, 64), multishot_settings());
    int c = e.adopt(p.a, Proto::tcp);
    p.a = -1;
    post_one(e, c, Op::recv, Buf{}, 1);
    std::vector<uint8_t> sent = pattern(500), got;
    for (int i = 0; i < 5; ++i)
      REQUIRE(::send(p.b, sent.data() + i * 100, 100, 0) == 100);
    int completions = 0;
    while (got.size() < sent.size()) {
      Completion r = next_completion(e);
      CHECK(r.bytes <= 64);
      CHECK((r.flags & kCompMore) != 0);
      take(e, r, got);
      ++completions;
    }
    CHECK(completions >= 8);  // 500 bytes cannot fit in fewer 64-byte buffers
    CHECK(got == sent);
    CHECK(e.buffers_held() == 0);
  }
  SECTION("udp: one completion per datagram, sizes kept") {
    UdpPair p;
    UringEngine e(engine_config_for_test(2, 1024), multishot_settings());
    int c = e.adopt(::dup(p.a), Proto::udp);
    post_one(e, c, Op::recv, Buf{}, 2);
    const size_t sizes[] = {1, 100, 1000, 7};
    std::vector<uint8_t> data = pattern(1000);
    for (size_t s : sizes)
      REQUIRE(::send(p.b, data.data(), s, 0) == ssize_t(s));
    for (size_t s : sizes) {
      Completion r = next_completion(e);
      CHECK(r.bytes == int32_t(s));
      std::vector<uint8_t> got;
      take(e, r, got);
      CHECK(std::equal(got.begin(), got.end(), data.begin()));
    }
    CHECK(e.outstanding(c) == 1);
    e.close(c);
  }
}

TEST_CASE("multishot: a peer closing mid-stream gives its data, then 0 without kCompMore") {
  TcpPair p;
  tcp_pair(p);
  UringEngine e(engine_config_for_test(2, 4), multishot_settings(4));  // 4-byte buffers
  int c = e.adopt(p.a, Proto::tcp);
  p.a = -1;
  post_one(e, c, Op::recv, Buf{}, 3);
  REQUIRE(::send(p.b, "0123456789", 10, 0) == 10);
  ::close(p.b);
  p.b = -1;
  std::vector<uint8_t> got;
  for (;;) {
    Completion r = next_completion(e);
    REQUIRE(r.bytes >= 0);
    if (r.bytes == 0) {
      CHECK((r.flags & kCompMore) == 0);
      CHECK((r.flags & kCompBuffer) == 0);
      break;
    }
    CHECK((r.flags & kCompMore) != 0);
    take(e, r, got);
  }
  CHECK(std::string(got.begin(), got.end()) == "0123456789");
  CHECK(e.outstanding(c) == 0);
  CHECK(e.buffers_held() == 0);
}

TEST_CASE("multishot: closing a connection whose receive waits for a buffer ends it") {
  TcpPair p;
  tcp_pair(p);
  UringEngine e(engine_config_for_test(2, 8), multishot_settings(1));
  int c = e.adopt(p.a, Proto::tcp);
  p.a = -1;
  post_one(e, c, Op::recv, Buf{}, 4);
  REQUIRE(::send(p.b, "0123456789abcdef", 16, 0) == 16);
  Completion first = next_completion(e);  // the only buffer; the receive then runs dry
  CHECK(first.bytes == 8);
  std::array<Completion, 4> out;
  CHECK(e.poll(out, Wait::block, 20'000'000) == 0);
  CHECK(e.outstanding(c) == 1);
  e.close(c);
  CHECK(e.outstanding(c) == 0);  // nothing was in the kernel: the slot is free at once
  e.recycle(first.buf_id);
  CHECK(e.poll(out, Wait::block, 20'000'000) == 0);
  CHECK(e.buffers_held() == 0);
}

TEST_CASE(
    "link: a request's send and its receive, one CQE: nothing is reported before the "
    "answer, then the send and the receive") {
  TcpPair p;
  tcp_pair(p);
  UringSettings s;
  s.link = true;
  UringEngine e(engine_config_for_test(2, 4096), s);
  REQUIRE(e.caps().linked_ops);
  int c = e.adopt(p.a, Proto::tcp);
  p.a = -1;
  for (int round = 0; round < 3; ++round) {
    Buf req = e.pool().get(0);
    std::memcpy(req.data, "ping", 4);
    req.len = 4;
    post_one(e, c, Op::send, req, 1, true);
    post_one(e, c, Op::recv, e.pool().get(1), 2);
    std::array<Completion, 4> out;
    // The send went (the peer can read it) but has no completion of its own yet.
    CHECK(e.poll(out, Wait::block, 20'000'000) == 0);
    char buf[4];
    REQUIRE(inet::read_exact(p.b, buf, 4, 2000));
    CHECK(std::memcmp(buf, "ping", 4) == 0);
    CHECK(e.outstanding(c) == 2);
    REQUIRE(::send(p.b, "pong", 4, 0) == 4);
    Completion a = next_completion(e);
    Completion b = next_completion(e);
    CHECK(a.cookie == 1);
    CHECK(a.bytes == 4);
    CHECK(b.cookie == 2);
    CHECK(b.bytes == 4);
    CHECK(std::memcmp(e.pool().get(1).data, "pong", 4) == 0);
    CHECK(e.outstanding(c) == 0);
  }
}

TEST_CASE("link: a linked send with no receive after it stands alone") {
  TcpPair p;
  tcp_pair(p);
  UringSettings s;
  s.link = true;
  UringEngine e(engine_config_for_test(2, 4096), s);
  int c = e.adopt(p.a, Proto::tcp);
  p.a = -1;
  Buf b = e.pool().get(0);
  b.len = 10;
  post_one(e, c, Op::send, b, 7, true);
  Completion r = next_completion(e);
  CHECK(r.cookie == 7);
  CHECK(r.bytes == 10);
  CHECK(e.outstanding(c) == 0);
}

TEST_CASE("link: a send that fails ends the chain; its receive still reports") {
  TcpPair p;
  tcp_pair(p);
  UringSettings s;
  s.link = true;
  UringEngine e(engine_config_for_test(2, 4096), s);
  int c = e.adopt(p.a, Proto::tcp);
  p.a = -1;
  linger l{1, 0};  // close with a reset
  REQUIRE(::setsockopt(p.b, SOL_SOCKET, SO_LINGER, &l, sizeof(l)) == 0);
  ::close(p.b);
  p.b = -1;
  Buf b = e.pool().get(0);
  b.len = 100;
  post_one(e, c, Op::send, b, 1, true);
  post_one(e, c, Op::recv, e.pool().get(1), 2);
  Completion first = next_completion(e);
  Completion second = next_completion(e);
  Completion& snd = first.cookie == 1 ? first : second;
  Completion& rcv = first.cookie == 1 ? second : first;
  CHECK(snd.cookie == 1);
  CHECK(snd.bytes < 0);
  CHECK(rcv.cookie == 2);
  CHECK(rcv.bytes <= 0);
  CHECK(e.outstanding(c) == 0);
}
