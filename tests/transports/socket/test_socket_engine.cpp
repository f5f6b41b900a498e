// The kernel-socket engine driven directly over TCP and UDP on 127.0.0.1, in both of its modes
// (one blocking flow a thread; epoll over several), on connections made by the socket
// transport's own set-up: completion accounting, the ends of streams, close, accept, poll's
// waits, datagram boundaries; and the probe through fixture roots.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/transports/socket/socket_test_support.hpp"
#include "transports/socket/register.hpp"
#include "transports/socket/socket_engine.hpp"

using namespace mtperf;

namespace {

using test::kMs;
using test::post_one;
using test::put_text;
using test::slice;
using test::text_of;

constexpr size_t kToTheEnd = SIZE_MAX;

EngineConfig config(bool single_flow, uint32_t buffers, uint32_t size, const SocketOptions& o,
                    uint32_t max_conns) {
  return test::engine_config(single_flow, buffers, size, o, max_conns);
}

Completion next(SocketEngine& e) {
  return test::next_completion(e);
}

// The connection waiting at listener `lid`, accepted through the engine: its ConnId.
int accept_one(SocketEngine& srv, int lid, uint64_t cookie) {
  post_one(srv, lid, Op::accept, Buf{}, cookie);
  Completion a = next(srv);
  REQUIRE(a.cookie == cookie);
  REQUIRE(a.bytes >= 0);
  return a.bytes;
}

}  // namespace

TEST_CASE("a large send completes whole however the kernel splits it; receives are 1..len bytes") {
  bool single_flow = GENERATE(true, false);
  INFO(test::mode_name(single_flow));
  constexpr uint32_t kLen = 4u << 20;
  constexpr uint32_t kPiece = 3000;  // what each receive asks for
  SocketOptions o;
  o.sndbuf = 4096;   // the kernel takes the data in pieces,
  o.rcvbuf = 65536;  // and no more than this waits for a reader
  auto t = test::socket_transport();
  test::Flow f = test::make_flow(*t, test::flow_setup(Proto::tcp, o));
  SocketEngine tx(config(single_flow, 1, kLen, o, 1));
  SocketEngine rx(config(single_flow, 1, kPiece, o, 1));
  int c = tx.adopt(*f.client);
  int r = rx.adopt(*f.server);
  REQUIRE(c >= 0);
  REQUIRE(r >= 0);
  CHECK(test::fd_of(*f.client) == -1);  // the engine owns the descriptor now
  Buf b = tx.pool().get(0);
  REQUIRE(b.len == kLen);
  test::fill_pattern({b.data, b.len}, 1);
  post_one(tx, c, Op::send, b, 7);
  std::array<Completion, 4> out;
  if (!single_flow) {
    // Nobody reads yet: the kernel took a part, and the send stays incomplete until it took all.
    CHECK(tx.poll(out, Wait::none, 0) == 0);
  }
  test::Received got;
  std::vector<Completion> done;
  int rc = 0;
  {
    std::jthread reader([&] { got = test::receive_stream(rx, r, rx.pool().get(0), kLen); });
    int64_t end = test::mono_ns() + 20'000 * kMs;
    while (done.empty() && rc >= 0 && test::mono_ns() < end) {
      rc = tx.poll(out, Wait::block, 50 * kMs);
      if (rc > 0) done.insert(done.end(), out.begin(), out.begin() + rc);
    }
  }
  CHECK(rc >= 0);
  REQUIRE(done.size() == 1);
  CHECK(done[0].cookie == 7);
  CHECK(done[0].bytes == int32_t(kLen));
  CHECK(done[0].flags == 0);
  CHECK(tx.poll(out, Wait::none, 0) == 0);  // one completion per send, not one per piece

  CHECK(got.poll_error == 0);
  CHECK(got.strangers == 0);
  CHECK(got.bytes.size() == kLen);
  CHECK(test::sizes_outside(got, kPiece) == 0);
  CHECK(got.sizes.size() >= kLen / kPiece);
  CHECK(test::first_mismatch(got.bytes, 1) == -1);
}

TEST_CASE("a peer that half-closes: its data, then a receive of 0; the other way stays open") {
  bool single_flow = GENERATE(true, false);
  INFO(test::mode_name(single_flow));
  SocketOptions o;
  auto t = test::socket_transport();
  test::Flow f = test::make_flow(*t, test::flow_setup(Proto::tcp, o));
  SocketEngine closer(config(single_flow, 1, 4096, o, 1));
  SocketEngine reader(config(single_flow, 2, 4096, o, 1));
  int c = closer.adopt(*f.client);
  int r = reader.adopt(*f.server);
  REQUIRE(c >= 0);
  REQUIRE(r >= 0);

  const std::string_view last = "the last words before the end";
  post_one(closer, c, Op::send, put_text(closer.pool().get(0), last), 1);
  Completion s = next(closer);
  CHECK(s.cookie == 1);
  CHECK(s.bytes == int32_t(last.size()));
  closer.shutdown_send(c);

  test::Received got = test::receive_stream(reader, r, reader.pool().get(0), kToTheEnd);
  REQUIRE_FALSE(got.sizes.empty());
  CHECK(got.sizes.back() == 0);
  CHECK(test::sizes_outside(got, 4096) == 0);
  CHECK(text_of(got.bytes) == last);
  // The end stays the end: a later receive completes with 0 too.
  post_one(reader, r, Op::recv, reader.pool().get(0), 2);
  Completion again = next(reader);
  CHECK(again.cookie == 2);
  CHECK(again.bytes == 0);

  // Half a close: the side that ended its stream still receives.
  post_one(reader, r, Op::send, put_text(reader.pool().get(1), "still here"), 3);
  Completion back = next(reader);
  CHECK(back.cookie == 3);
  CHECK(back.bytes == 10);
  Buf in = closer.pool().get(0);
  post_one(closer, c, Op::recv, in, 4);
  Completion answer = next(closer);
  CHECK(answer.cookie == 4);
  CHECK(answer.bytes == 10);
  CHECK(text_of(in, answer.bytes) == "still here");
}

TEST_CASE(
    "close drops queued work, which never reaches a connection reusing the id; the peer "
    "sees the end") {
  bool single_flow = GENERATE(true, false);
  INFO(test::mode_name(single_flow));
  constexpr uint32_t kLen = 4u << 20;
  SocketOptions o;
  o.sndbuf = 4096;
  o.rcvbuf = 65536;
  auto t = test::socket_transport();
  test::Flow f = test::make_flow(*t, test::flow_setup(Proto::tcp, o, 0));
  SocketEngine e(config(single_flow, 2, kLen, o, 2));
  SocketEngine peer(config(single_flow, 1, 65536, o, 2));
  int c = e.adopt(*f.client);
  int p = peer.adopt(*f.server);
  REQUIRE(c >= 0);
  REQUIRE(p >= 0);
  Buf b = e.pool().get(0);
  test::fill_pattern({b.data, b.len}, 3);
  post_one(e, c, Op::send, b, 1);
  post_one(e, c, Op::recv, e.pool().get(1), 2);
  std::array<Completion, 4> out;
  // The send goes out in part (nobody reads) and the receive finds nothing: both stay queued.
  // In blocking mode each waits its I/O timeout first.
  CHECK(e.poll(out, single_flow ? Wait::block : Wait::none, 0) == 0);
  e.close(c);
  for (int i = 0; i < 5; ++i)
    CHECK(e.poll(out, Wait::block, 10 * kMs) == 0);

  // The peer reads what the kernel had taken, in order, then the end (not a reset).
  test::Received got = test::receive_stream(peer, p, peer.pool().get(0), kToTheEnd);
  REQUIRE_FALSE(got.sizes.empty());
  CHECK(got.sizes.back() == 0);
  CHECK(got.bytes.size() > 0);
  CHECK(got.bytes.size() < kLen);
  CHECK(test::first_mismatch(got.bytes, 3) == -1);

  // A new connection (the free id is reused): the dropped receive does not complete on it.
  test::Flow f2 = test::make_flow(*t, test::flow_setup(Proto::tcp, o, 1));
  int c2 = e.adopt(*f2.client);
  int p2 = peer.adopt(*f2.server);
  REQUIRE(c2 >= 0);
  REQUIRE(p2 >= 0);
  INFO("closed id " << c << ", new id " << c2);
  post_one(peer, p2, Op::send, put_text(peer.pool().get(0), "after"), 5);
  CHECK(next(peer).bytes == 5);
  for (int i = 0; i < 3; ++i)
    CHECK(e.poll(out, Wait::block, 10 * kMs) == 0);
  Buf in = e.pool().get(1);
  post_one(e, c2, Op::recv, in, 6);
  Completion a = next(e);
  CHECK(a.cookie == 6);
  CHECK(a.bytes == 5);
  CHECK(text_of(in, a.bytes) == "after");
}

TEST_CASE(
    "accept through the engine: the completion carries a new ConnId that sends and receives") {
  bool single_flow = GENERATE(true, false);
  INFO(test::mode_name(single_flow));
  SocketOptions o;
  auto t = test::socket_transport();
  test::Flow f = test::make_per_transaction(*t, test::flow_setup(Proto::tcp, o));
  SocketEngine srv(config(single_flow, 2, 4096, o, 4));
  SocketEngine cli(config(single_flow, 2, 4096, o, 4));
  int lid = srv.listen_adopt(*f.server);
  REQUIRE(lid >= 0);
  CHECK(test::fd_of(*f.server) == -1);
  CHECK(srv.accept(lid) == -EAGAIN);  // nobody is connecting
  post_one(srv, lid, Op::accept, Buf{}, 11);
  std::array<Completion, 4> out;
  // In blocking mode the accept waits its I/O timeout in vain.
  CHECK(srv.poll(out, single_flow ? Wait::block : Wait::none, 0) == 0);

  int cc = cli.open(*f.client);
  REQUIRE(cc >= 0);
  Completion a = next(srv);
  CHECK(a.cookie == 11);
  CHECK(a.flags == 0);
  REQUIRE(a.bytes >= 0);
  REQUIRE(a.bytes != lid);
  int sc = a.bytes;

  Buf srv_in = srv.pool().get(0), cli_in = cli.pool().get(1);
  post_one(srv, sc, Op::recv, srv_in, 12);
  post_one(cli, cc, Op::send, put_text(cli.pool().get(0), "ping"), 21);
  Completion sent = next(cli);
  CHECK(sent.cookie == 21);
  CHECK(sent.bytes == 4);
  Completion got = next(srv);
  CHECK(got.cookie == 12);
  CHECK(got.bytes == 4);
  CHECK(text_of(srv_in, got.bytes) == "ping");
  post_one(srv, sc, Op::send, put_text(srv.pool().get(1), "pong!"), 13);
  Completion answered = next(srv);
  CHECK(answered.cookie == 13);
  CHECK(answered.bytes == 5);
  post_one(cli, cc, Op::recv, cli_in, 22);
  Completion answer = next(cli);
  CHECK(answer.cookie == 22);
  CHECK(answer.bytes == 5);
  CHECK(text_of(cli_in, answer.bytes) == "pong!");

  // A second connection, taken by the direct call: an id of its own.
  int cc2 = cli.open(*f.client);
  REQUIRE(cc2 >= 0);
  CHECK(cc2 != cc);
  int sc2 = -EAGAIN;
  for (int i = 0; i < 500 && sc2 == -EAGAIN; ++i) {
    sc2 = srv.accept(lid);
    if (sc2 == -EAGAIN) usleep(10'000);
  }
  REQUIRE(sc2 >= 0);
  CHECK(sc2 != lid);
  CHECK(sc2 != sc);

  // The server closes the first connection: its client reads the end.
  srv.close(sc);
  post_one(cli, cc, Op::recv, cli_in, 23);
  Completion end = next(cli);
  CHECK(end.cookie == 23);
  CHECK(end.bytes == 0);
}

TEST_CASE(
    "Wait::none returns 0 at once with nothing ready; a blocking poll returns 0 after about "
    "its timeout") {
  bool single_flow = GENERATE(true, false);
  INFO(test::mode_name(single_flow));
  SocketOptions o;
  auto t = test::socket_transport();
  test::Flow f = test::make_flow(*t, test::flow_setup(Proto::tcp, o));
  SocketEngine e(config(single_flow, 1, 4096, o, 1));
  int c = e.adopt(*f.client);
  REQUIRE(c >= 0);
  Buf in = e.pool().get(0);
  std::array<Completion, 4> out;
  int n = -1;
  auto timed_poll = [&](Wait w, int64_t timeout_ns) {
    int64_t t0 = test::mono_ns();
    n = e.poll(out, w, timeout_ns);
    return test::mono_ns() - t0;
  };
  if (!single_flow) {
    // The socket's registration reports it writable once (edge-triggered), and a blocking poll
    // may return 0 early on it, as the contract allows; take it before timing anything.
    e.poll(out, Wait::block, 1 * kMs);
    post_one(e, c, Op::recv, in, 31);  // work queued, none of it ready
  }
  int64_t waited = timed_poll(Wait::none, 10'000 * kMs);
  CHECK(n == 0);
  CHECK(waited < 5'000 * kMs);  // not the 10 s it was given
  waited = timed_poll(Wait::block, 100 * kMs);
  CHECK(n == 0);
  CHECK(waited >= 95 * kMs);
  CHECK(waited < 5'000 * kMs);
  if (single_flow) {
    // A blocking receive that finds nothing within the I/O timeout is no error: it stays queued.
    post_one(e, c, Op::recv, in, 31);
    waited = timed_poll(Wait::block, 0);
    CHECK(n == 0);
    CHECK(waited < 5'000 * kMs);
  }
  REQUIRE(::send(test::fd_of(*f.server), "x", 1, 0) == 1);
  Completion r = next(e);
  CHECK(r.cookie == 31);
  CHECK(r.bytes == 1);
  CHECK(r.flags == 0);
  CHECK(text_of(in, r.bytes) == "x");
}

TEST_CASE("epoll mode: several connections on one engine, each stream whole and apart") {
  constexpr int kFlows = 4;
  constexpr uint32_t kLen = 256 * 1024, kPiece = 3000;
  SocketOptions o;
  auto t = test::socket_transport();
  std::vector<test::Flow> flows;
  for (int i = 0; i < kFlows; ++i)
    flows.push_back(test::make_flow(*t, test::flow_setup(Proto::tcp, o, uint32_t(i))));
  SocketEngine tx(config(false, kFlows, kLen, o, kFlows));
  SocketEngine rx(config(false, kFlows, kPiece, o, kFlows));
  std::array<int, kFlows> tc{}, rc{};
  for (int i = 0; i < kFlows; ++i) {
    tc[i] = tx.adopt(*flows[i].client);
    rc[i] = rx.adopt(*flows[i].server);
    REQUIRE(tc[i] >= 0);
    REQUIRE(rc[i] >= 0);
  }
  // Each stream goes as two sends queued together: the second must follow the first.
  for (int i = 0; i < kFlows; ++i) {
    Buf b = tx.pool().get(uint32_t(i));
    test::fill_pattern({b.data, b.len}, 100 + uint64_t(i));
    std::array<WorkReq, 2> w{WorkReq{Op::send, slice(b, 0, kLen / 2), uint64_t(2 * i)},
                             WorkReq{Op::send, slice(b, kLen / 2, kLen / 2), uint64_t(2 * i + 1)}};
    REQUIRE(tx.post(tc[i], w) == 2);
    post_one(rx, rc[i], Op::recv, rx.pool().get(uint32_t(i)), 1000 + uint64_t(i));
  }
  std::vector<std::vector<std::byte>> got(kFlows);
  std::array<int, 2 * kFlows> sends_done{};
  std::array<int32_t, 2 * kFlows> sent{};
  int strangers = 0, bad_receives = 0;
  auto finished = [&] {
    for (int i = 0; i < kFlows; ++i)
      if (got[i].size() < kLen || sends_done[2 * i] == 0 || sends_done[2 * i + 1] == 0)
        return false;
    return true;
  };
  std::array<Completion, 8> out;
  int64_t end = test::mono_ns() + 20'000 * kMs;
  while (!finished() && bad_receives == 0 && test::mono_ns() < end) {
    int n = tx.poll(out, Wait::none, 0);
    REQUIRE(n >= 0);
    for (int k = 0; k < n; ++k) {
      if (out[k].cookie >= 2 * kFlows) {
        ++strangers;
        continue;
      }
      ++sends_done[out[k].cookie];
      sent[out[k].cookie] = out[k].bytes;
    }
    n = rx.poll(out, Wait::block, 1 * kMs);
    REQUIRE(n >= 0);
    for (int k = 0; k < n; ++k) {
      uint64_t i = out[k].cookie - 1000;
      if (i >= kFlows) {
        ++strangers;
        continue;
      }
      if (out[k].bytes < 1 || out[k].bytes > int32_t(kPiece)) {
        ++bad_receives;
        continue;
      }
      const std::byte* data = rx.pool().get(uint32_t(i)).data;
      got[i].insert(got[i].end(), data, data + out[k].bytes);
      if (got[i].size() < kLen) {
        post_one(rx, rc[i], Op::recv, rx.pool().get(uint32_t(i)), out[k].cookie);
      }
    }
  }
  CHECK(strangers == 0);
  CHECK(bad_receives == 0);
  for (int i = 0; i < kFlows; ++i) {
    INFO("flow " << i);
    CHECK(sends_done[2 * i] == 1);
    CHECK(sends_done[2 * i + 1] == 1);
    CHECK(sent[2 * i] == int32_t(kLen / 2));
    CHECK(sent[2 * i + 1] == int32_t(kLen / 2));
    CHECK(got[i].size() == kLen);
    CHECK(test::first_mismatch(got[i], 100 + uint64_t(i)) == -1);
  }

  // Every connection turns readable while the receiver is away: the wake-up serves them all.
  for (int i = 0; i < kFlows; ++i)
    post_one(rx, rc[i], Op::recv, rx.pool().get(uint32_t(i)), 2000 + uint64_t(i));
  CHECK(rx.poll(out, Wait::none, 0) == 0);
  for (int i = 0; i < kFlows; ++i) {
    std::string note = "the end of flow " + std::to_string(i);
    post_one(tx, tc[i], Op::send, put_text(tx.pool().get(uint32_t(i)), note), 3000);
    CHECK(next(tx).bytes == int32_t(note.size()));
  }
  std::array<std::string, kFlows> notes;
  int arrived = 0;
  end = test::mono_ns() + 10'000 * kMs;
  while (arrived < kFlows && test::mono_ns() < end) {
    int n = rx.poll(out, Wait::block, 50 * kMs);
    REQUIRE(n >= 0);
    for (int k = 0; k < n; ++k) {
      uint64_t i = out[k].cookie - 2000;
      REQUIRE(i < kFlows);
      notes[i] = text_of(rx.pool().get(uint32_t(i)), out[k].bytes);
      ++arrived;
    }
  }
  CHECK(arrived == kFlows);
  for (int i = 0; i < kFlows; ++i)
    CHECK(notes[i] == "the end of flow " + std::to_string(i));
}

TEST_CASE("single-flow blocking mode: a request and its answer, both done by poll, in order") {
  constexpr int kRounds = 50;
  constexpr uint32_t kReq = 1000;
  SocketOptions o;
  auto t = test::socket_transport();
  test::Flow f = test::make_flow(*t, test::flow_setup(Proto::tcp, o));
  SocketEngine cli(config(true, 2, kReq, o, 1));
  SocketEngine echo(config(true, 1, kReq, o, 1));
  int c = cli.adopt(*f.client);
  int s = echo.adopt(*f.server);
  REQUIRE(c >= 0);
  REQUIRE(s >= 0);
  std::string echo_error;
  // The peer, an engine of its own on a thread of its own: every byte back as it comes, until
  // the client's end.
  std::jthread echoer([&] {
    Buf b = echo.pool().get(0);
    std::array<Completion, 1> done;
    for (;;) {
      test::Received r = test::receive_stream(echo, s, b, 1);
      if (r.sizes.empty() || r.sizes.back() < 0) {
        echo_error = "the echo's receive failed or waited 20 s";
        return;
      }
      if (r.sizes.back() == 0) return;
      WorkReq w{Op::send, Buf{b.data, uint32_t(r.bytes.size()), 0}, 2};
      int n = echo.post(s, std::span<const WorkReq>(&w, 1)) == 1 ? 0 : -1;
      for (int i = 0; i < 200 && n == 0; ++i)
        n = echo.poll(done, Wait::block, 50 * kMs);
      if (n != 1 || done[0].bytes != int32_t(r.bytes.size())) {
        echo_error = "the echo's send failed";
        return;
      }
    }
  });
  Buf req = cli.pool().get(0), ans = cli.pool().get(1);
  std::array<Completion, 4> out;
  for (int round = 0; round < kRounds; ++round) {
    INFO("round " << round);
    uint64_t seed = 500 + uint64_t(round);
    test::fill_pattern({req.data, req.len}, seed);
    uint64_t send_cookie = 2 * uint64_t(round), recv_cookie = send_cookie + 1;
    std::array<WorkReq, 2> w{WorkReq{Op::send, req, send_cookie},
                             WorkReq{Op::recv, ans, recv_cookie}};
    REQUIRE(cli.post(c, w) == 2);
    std::vector<std::byte> answer;
    int sends = 0;
    int64_t end = test::mono_ns() + 10'000 * kMs;
    while ((sends == 0 || answer.size() < kReq) && test::mono_ns() < end) {
      int n = cli.poll(out, Wait::block, 50 * kMs);
      REQUIRE(n >= 0);
      for (int k = 0; k < n; ++k) {
        if (out[k].cookie == send_cookie) {
          ++sends;
          CHECK(out[k].bytes == int32_t(kReq));
          continue;
        }
        REQUIRE(out[k].cookie == recv_cookie);
        REQUIRE(out[k].bytes > 0);
        answer.insert(answer.end(), ans.data, ans.data + out[k].bytes);
        if (answer.size() < kReq) post_one(cli, c, Op::recv, ans, recv_cookie);
      }
    }
    CHECK(sends == 1);
    REQUIRE(answer.size() == kReq);
    CHECK(test::first_mismatch(answer, seed) == -1);
  }
  cli.shutdown_send(c);
  echoer.join();
  CHECK(echo_error.empty());
}

TEST_CASE("UDP: a datagram is one send and one receive, its boundaries kept") {
  bool single_flow = GENERATE(true, false);
  INFO(test::mode_name(single_flow));
  SocketOptions o;
  auto t = test::socket_transport();
  test::Flow f = test::make_flow(*t, test::flow_setup(Proto::udp, o));
  SocketEngine a(config(single_flow, 3, 2048, o, 1));
  SocketEngine b(config(single_flow, 3, 2048, o, 1));
  int ca = a.adopt(*f.client);
  int cb = b.adopt(*f.server);
  REQUIRE(ca >= 0);
  REQUIRE(cb >= 0);
  constexpr std::array<uint32_t, 3> kSizes{100, 1, 1400};
  for (uint32_t k = 0; k < kSizes.size(); ++k) {
    Buf s = a.pool().get(k);
    test::fill_pattern({s.data, s.len}, 200 + k);
    post_one(a, ca, Op::send, slice(s, 0, kSizes[k]), k);
  }
  for (uint32_t k = 0; k < kSizes.size(); ++k) {
    Completion s = next(a);
    CHECK(s.cookie == k);
    CHECK(s.bytes == int32_t(kSizes[k]));
  }
  // Receives of 2048 bytes each: every one takes one datagram, whatever else is waiting.
  for (uint32_t k = 0; k < kSizes.size(); ++k)
    post_one(b, cb, Op::recv, b.pool().get(k), 10 + k);
  for (uint32_t k = 0; k < kSizes.size(); ++k) {
    INFO("datagram " << k);
    Completion r = next(b);
    CHECK(r.cookie == 10 + k);
    REQUIRE(r.bytes == int32_t(kSizes[k]));
    CHECK(test::first_mismatch({b.pool().get(k).data, kSizes[k]}, 200 + k) == -1);
  }

  // The other way: two datagrams wait, and a receive of 2048 bytes takes the first alone.
  post_one(b, cb, Op::send, put_text(b.pool().get(0), "abc"), 20);
  post_one(b, cb, Op::send, put_text(b.pool().get(1), "defgh"), 21);
  CHECK(next(b).bytes == 3);
  CHECK(next(b).bytes == 5);
  Buf in = a.pool().get(0);
  post_one(a, ca, Op::recv, in, 30);
  Completion first = next(a);
  CHECK(first.cookie == 30);
  CHECK(text_of(in, first.bytes) == "abc");
  post_one(a, ca, Op::recv, in, 31);
  Completion second = next(a);
  CHECK(second.cookie == 31);
  CHECK(text_of(in, second.bytes) == "defgh");
}

TEST_CASE("an unsignaled send completes only when it fails; the data goes out all the same") {
  bool single_flow = GENERATE(true, false);
  INFO(test::mode_name(single_flow));
  SocketOptions o;
  auto t = test::socket_transport();
  test::Flow f = test::make_flow(*t, test::flow_setup(Proto::tcp, o));
  SocketEngine a(config(single_flow, 2, 64, o, 1));
  SocketEngine b(config(single_flow, 2, 64, o, 1));
  REQUIRE(a.caps().unsignaled_sends);
  int ca = a.adopt(*f.client);
  int cb = b.adopt(*f.server);
  REQUIRE(ca >= 0);
  REQUIRE(cb >= 0);
  WorkReq quiet{Op::send, put_text(a.pool().get(0), "quiet"), 1};
  quiet.signal = false;
  REQUIRE(a.post(ca, std::span<const WorkReq>(&quiet, 1)) == 1);
  // The receive behind it is the only completion: the send was done without one.
  post_one(a, ca, Op::send, put_text(a.pool().get(1), "loud"), 2);
  Completion loud = next(a);
  CHECK(loud.cookie == 2);
  CHECK(loud.bytes == 4);
  std::array<Completion, 4> out;
  CHECK(a.poll(out, Wait::none, 0) == 0);
  Buf in = b.pool().get(0);
  std::string got;
  while (got.size() < 9) {
    post_one(b, cb, Op::recv, in, 3);
    Completion r = next(b);
    REQUIRE(r.bytes > 0);
    got += text_of(in, r.bytes);
  }
  CHECK(got == "quietloud");

  // A failure is reported: a send after our own half-close fails with EPIPE.
  a.shutdown_send(ca);
  quiet.cookie = 4;
  REQUIRE(a.post(ca, std::span<const WorkReq>(&quiet, 1)) == 1);
  Completion failed = next(a);
  CHECK(failed.cookie == 4);
  CHECK(failed.bytes == -EPIPE);
  CHECK((failed.flags & kCompError) != 0);
}

TEST_CASE("an unsignaled send the kernel takes only in part goes on in poll(), in order") {
  // In the blocking mode an unsignaled send with nothing queued before it is tried at post()
  // without waiting; what the socket cannot take then is sent by poll(), before what was posted
  // after it. The epoll mode queues it as any send.
  bool single_flow = GENERATE(true, false);
  INFO(test::mode_name(single_flow));
  constexpr uint32_t kLen = 1u << 20;
  SocketOptions o;
  o.sndbuf = 4096;  // far less than kLen: the first try leaves most of it
  o.rcvbuf = 65536;
  auto t = test::socket_transport();
  test::Flow f = test::make_flow(*t, test::flow_setup(Proto::tcp, o));
  SocketEngine tx(config(single_flow, 2, kLen, o, 1));
  SocketEngine rx(config(single_flow, 1, 3000, o, 1));
  int c = tx.adopt(*f.client);
  int r = rx.adopt(*f.server);
  REQUIRE(c >= 0);
  REQUIRE(r >= 0);
  Buf big = tx.pool().get(0);
  test::fill_pattern({big.data, big.len}, 3);
  WorkReq quiet{Op::send, big, 1};
  quiet.signal = false;
  REQUIRE(tx.post(c, std::span<const WorkReq>(&quiet, 1)) == 1);
  Buf tail = tx.pool().get(1);
  test::fill_pattern({tail.data, 1000}, 3, kLen);  // the stream goes on where `big` ends
  tail.len = 1000;
  post_one(tx, c, Op::send, tail, 2);
  test::Received got;
  std::vector<Completion> done;
  int rc = 0;
  {
    std::jthread reader(
        [&] { got = test::receive_stream(rx, r, rx.pool().get(0), kLen + tail.len); });
    std::array<Completion, 4> out;
    int64_t end = test::mono_ns() + 20'000 * kMs;
    while (done.empty() && rc >= 0 && test::mono_ns() < end) {
      rc = tx.poll(out, Wait::block, 50 * kMs);
      if (rc > 0) done.insert(done.end(), out.begin(), out.begin() + rc);
    }
  }
  CHECK(rc >= 0);
  REQUIRE(done.size() == 1);  // the signaled send alone
  CHECK(done[0].cookie == 2);
  CHECK(done[0].bytes == 1000);
  CHECK(got.poll_error == 0);
  CHECK(got.bytes.size() == kLen + tail.len);
  CHECK(test::first_mismatch(got.bytes, 3) == -1);
}

TEST_CASE(
    "blocking mode: a send on a connection from open() waits no longer than the I/O timeout") {
  // open()'s connections get SO_SNDTIMEO only when a send has to wait: a crr request mostly
  // goes out at post(). Here nobody reads, so the send must wait, and the wait is bounded.
  SocketOptions o;
  o.io_timeout_ms = 100;
  o.sndbuf = 4096;
  auto t = test::socket_transport();
  test::Flow f = test::make_per_transaction(*t, test::flow_setup(Proto::tcp, o));
  SocketEngine cli(config(true, 1, 4u << 20, o, 2));
  int c = cli.open(*f.client);
  REQUIRE(c >= 0);
  post_one(cli, c, Op::send, cli.pool().get(0), 5);  // 4 MiB: more than the buffers hold
  std::array<Completion, 4> out;
  int64_t t0 = test::mono_ns();
  CHECK(cli.poll(out, Wait::block, 0) == 0);  // not sent yet, and no completion
  int64_t waited = test::mono_ns() - t0;
  CHECK(waited >= 50 * kMs);
  CHECK(waited < 3'000 * kMs);
}

TEST_CASE(
    "blocking mode: a connection's receive is waited on before the listener's accept, and an "
    "accept is tried once that wait times out") {
  SocketOptions o;
  o.io_timeout_ms = 2'000;
  auto t = test::socket_transport();
  test::Flow f = test::make_per_transaction(*t, test::flow_setup(Proto::tcp, o));
  SocketEngine srv(config(true, 2, 64, o, 4));
  SocketEngine cli(config(true, 2, 64, o, 4));
  int lid = srv.listen_adopt(*f.server);
  REQUIRE(lid >= 0);
  int cc = cli.open(*f.client);
  REQUIRE(cc >= 0);
  int sc = accept_one(srv, lid, 1);
  // As a crr server leaves them after its answer: the accept of the next connection queued
  // first, the end of this one after it. The client has closed: the end is there to read and
  // nobody connects, so waiting on the accept first would take the whole I/O timeout.
  post_one(srv, lid, Op::accept, Buf{}, 2);
  post_one(srv, sc, Op::recv, srv.pool().get(0), 3);
  cli.close(cc);
  std::array<Completion, 4> out;
  int64_t t0 = test::mono_ns();
  int n = srv.poll(out, Wait::block, 0);
  int64_t waited = test::mono_ns() - t0;
  REQUIRE(n == 1);
  CHECK(out[0].cookie == 3);
  CHECK(out[0].bytes == 0);
  CHECK(waited < 1'000 * kMs);  // well inside the 2 s the accept would have waited
  srv.close(sc);

  // A connection whose peer sends nothing does not hold the listener back for longer than one
  // wait: once its receive has waited in vain, the accept behind it is tried in the same poll.
  SocketOptions quick = o;
  quick.io_timeout_ms = 100;
  SocketEngine srv2(config(true, 2, 64, quick, 4));
  test::Flow g = test::make_per_transaction(*t, test::flow_setup(Proto::tcp, quick));
  int lid2 = srv2.listen_adopt(*g.server);
  REQUIRE(lid2 >= 0);
  int c1 = cli.open(*g.client);
  REQUIRE(c1 >= 0);
  post_one(srv2, accept_one(srv2, lid2, 4), Op::recv, srv2.pool().get(0), 5);  // c1 is silent
  post_one(srv2, lid2, Op::accept, Buf{}, 6);
  int c2 = cli.open(*g.client);  // in the listener's backlog, not yet accepted
  REQUIRE(c2 >= 0);
  n = srv2.poll(out, Wait::block, 0);
  REQUIRE(n == 1);
  CHECK(out[0].cookie == 6);
  CHECK(out[0].bytes >= 0);
}

TEST_CASE("post queues up to the depth in each direction; write, read and closed ids are refused") {
  SocketOptions o;
  auto t = test::socket_transport();
  test::Flow f = test::make_flow(*t, test::flow_setup(Proto::tcp, o));
  EngineConfig cfg = config(false, 1, 64, o, 1);
  cfg.queue_depth = 5;  // rounded up to a power of two
  SocketEngine e(cfg);
  CHECK(e.caps().max_outstanding == 8);
  int c = e.adopt(*f.client);
  REQUIRE(c >= 0);
  std::vector<WorkReq> recvs(10, WorkReq{Op::recv, e.pool().get(0)});
  std::vector<WorkReq> sends(10, WorkReq{Op::send, e.pool().get(0)});
  CHECK(e.post(c, recvs) == 8);
  CHECK(e.post(c, recvs) == 0);
  CHECK(e.post(c, sends) == 8);  // sends have a queue of their own
  WorkReq write{Op::write, e.pool().get(0)};
  CHECK(e.post(c, std::span<const WorkReq>(&write, 1)) == -EOPNOTSUPP);
  e.close(c);
  CHECK(e.post(c, recvs) == -EBADF);
}

TEST_CASE("probe through a fixture root: tcp, udp and epoll; mptcp only where it is enabled") {
  const TransportEntry& entry = find_transport("socket");
  CHECK(entry.is_default);
  auto root =
      std::filesystem::temp_directory_path() / ("mtperf-socket-probe-" + std::to_string(getpid()));
  auto probe_with = [&](const char* enabled) {
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root / "proc/sys/net/mptcp");
    if (enabled) std::ofstream(root / "proc/sys/net/mptcp/enabled") << enabled;
    return entry.probe(root.string());
  };
  ProbeResult on = probe_with("1\n");
  ProbeResult off = probe_with("0\n");
  ProbeResult absent = probe_with(nullptr);
  std::filesystem::remove_all(root);
  // A fixture tree of /proc with no MPTCP knob at all.
  ProbeResult fixture = entry.probe(std::string(MTPERF_FIXTURES) + "/proc/vm2/t0");
  for (const ProbeResult* p : {&on, &off, &absent, &fixture}) {
    CHECK(p->usable);
    CHECK(p->why.empty());
    CHECK(test::has_feature(*p, "tcp"));
    CHECK(test::has_feature(*p, "udp"));
    CHECK(test::has_feature(*p, "epoll"));
  }
  CHECK(std::count(on.features.begin(), on.features.end(), "mptcp") == 1);
  CHECK_FALSE(test::has_feature(off, "mptcp"));
  CHECK_FALSE(test::has_feature(absent, "mptcp"));
  CHECK_FALSE(test::has_feature(fixture, "mptcp"));
}
