#pragma once
// Helpers shared by the socket engine tests: flows over 127.0.0.1 made by the socket transport's
// own set-up (listen() and connect() of its registry entry, the flow hello included), engine
// configs for both modes, posting one operation, waiting for completions, and a byte pattern
// that shows a lost, doubled or reordered piece of a stream.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "transports/api/registry.hpp"
#include "transports/inet/endpoint.hpp"
#include "transports/inet/inet.hpp"
#include "transports/socket/socket_engine.hpp"

namespace mtperf::test {

inline constexpr int64_t kMs = 1'000'000;  // ns

// CLOCK_MONOTONIC, the clock of the set-up deadlines.
inline int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline std::unique_ptr<Transport> socket_transport() {
  return find_transport("socket").create({});
}

inline bool has_feature(const ProbeResult& p, const std::string& name) {
  return std::find(p.features.begin(), p.features.end(), name) != p.features.end();
}

inline FlowSetup flow_setup(Proto proto, const SocketOptions& opts, uint32_t flow = 0) {
  FlowSetup s;
  s.flow = flow;
  s.cookie = 0x5eed'0000'0000'0000ULL + flow;
  s.proto = proto;
  s.sock = &opts;
  return s;
}

inline int fd_of(const Endpoint& ep) {
  return static_cast<const inet::SocketEndpoint&>(ep).fd;
}

// Both ends of one flow, as the socket transport's set-up makes them.
struct Flow {
  std::unique_ptr<Endpoint> server, client;
};

// One flow over 127.0.0.1 (port 0): the server's listen() and accept(), the client's connect().
// The client connects on a thread of its own, since a UDP client waits for the server's echo of
// its hello.
inline Flow make_flow(Transport& t, const FlowSetup& setup) {
  auto listener = t.listen(numeric_address("127.0.0.1", 0), setup);
  SockAddr server = numeric_address("127.0.0.1", listener->port());
  Flow f;
  std::exception_ptr failed;
  int64_t deadline = mono_ns() + 10'000 * kMs;
  std::jthread client([&] {
    try {
      f.client = t.connect(server, SockAddr{}, setup, deadline);
    } catch (...) {
      failed = std::current_exception();
    }
  });
  while (!f.server && mono_ns() < deadline) {
    pollfd p{listener->wait_fd(), POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) f.server = listener->accept(deadline);
  }
  client.join();
  if (failed) std::rethrow_exception(failed);
  REQUIRE(f.server);
  REQUIRE(f.client);
  CHECK(listener->rejected() == 0);
  if (setup.proto == Proto::udp) {
    // A client that saw no echo within 100 ms sent its hello again; the copies wait on the
    // server's socket, and the tests' datagrams must be the first it receives.
    std::array<char, 64> hello;
    while (::recv(fd_of(*f.server), hello.data(), hello.size(), MSG_DONTWAIT) >= 0) {
    }
  }
  return f;
}

// crr's set-up: the server's listener itself (release()) and the client's target (fd -1).
inline Flow make_per_transaction(Transport& t, FlowSetup setup) {
  setup.per_transaction = true;
  setup.request_response = true;
  auto listener = t.listen(numeric_address("127.0.0.1", 0), setup);
  SockAddr server = numeric_address("127.0.0.1", listener->port());
  Flow f;
  f.server = listener->release();
  f.client = t.connect(server, SockAddr{}, setup, mono_ns() + 10'000 * kMs);
  REQUIRE(fd_of(*f.server) >= 0);
  REQUIRE(fd_of(*f.client) == -1);
  return f;
}

// single_flow: the blocking mode (Wait::block, one flow); otherwise the epoll mode.
inline EngineConfig engine_config(bool single_flow, uint32_t buffers, uint32_t size,
                                  const SocketOptions& sock, uint32_t max_conns = 4) {
  EngineConfig c;
  c.max_conns = max_conns;
  c.queue_depth = 8;
  c.buffers = buffers;
  c.buffer_size = size;
  c.wait = Wait::block;
  c.single_flow = single_flow;
  c.sock = &sock;
  return c;
}

inline const char* mode_name(bool single_flow) {
  return single_flow ? "single-flow blocking mode" : "epoll mode";
}

inline void post_one(SocketEngine& e, int conn, Op op, Buf b, uint64_t cookie) {
  WorkReq r;
  r.op = op;
  r.buf = b;
  r.cookie = cookie;
  REQUIRE(e.post(conn, std::span<const WorkReq>(&r, 1)) == 1);
}

inline Buf slice(Buf b, uint32_t offset, uint32_t len) {
  return Buf{b.data + offset, len, b.key};
}

// `b` holding `text` alone (the start of its buffer).
inline Buf put_text(Buf b, std::string_view text) {
  REQUIRE(text.size() <= b.len);
  std::memcpy(b.data, text.data(), text.size());
  b.len = uint32_t(text.size());
  return b;
}

inline std::string text_of(const Buf& b, int32_t bytes) {
  return std::string(reinterpret_cast<const char*>(b.data), size_t(std::max(bytes, 0)));
}

inline std::string text_of(const std::vector<std::byte>& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Polls until one completion arrives (or 10 s pass).
inline Completion next_completion(SocketEngine& e) {
  std::array<Completion, 1> out;
  int64_t end = mono_ns() + 10'000 * kMs;
  while (mono_ns() < end) {
    int n = e.poll(out, Wait::block, 50 * kMs);
    REQUIRE(n >= 0);
    if (n == 1) return out[0];
  }
  FAIL("no completion within 10 s");
  return {};
}

// The byte at offset i of stream `seed`: no period a lost or doubled piece could hide in.
inline std::byte pattern_byte(uint64_t seed, uint64_t i) {
  uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ULL ^ (seed + 1) * 0xd1b54a32d192ed03ULL;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ULL;
  return std::byte(x >> 56);
}

inline void fill_pattern(std::span<std::byte> b, uint64_t seed, uint64_t offset = 0) {
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = pattern_byte(seed, offset + i);
}

// The first offset where `got` is not stream `seed`, or -1.
inline int64_t first_mismatch(std::span<const std::byte> got, uint64_t seed) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != pattern_byte(seed, i)) return int64_t(i);
  return -1;
}

// What a receiver saw.
struct Received {
  std::vector<std::byte> bytes;  // in order of completion
  std::vector<int32_t> sizes;    // each receive's bytes (0: the peer's end, <0: -errno)
  int strangers = 0;             // completions with any other cookie
  int poll_error = 0;            // -errno from poll()
};

inline constexpr uint64_t kRecvCookie = 0xbeef;

// One receive at a time on `conn` into `buf` until `want` bytes came, the stream ended or failed,
// or 20 s passed. No Catch2 assertion here: it runs on threads of its own too.
inline Received receive_stream(SocketEngine& e, int conn, Buf buf, size_t want) {
  Received r;
  if (want <= (size_t(64) << 20)) r.bytes.reserve(want);
  int64_t end = mono_ns() + 20'000 * kMs;
  bool posted = false;
  std::array<Completion, 4> out;
  while (r.bytes.size() < want && mono_ns() < end) {
    if (!posted) {
      WorkReq w;
      w.op = Op::recv;
      w.buf = buf;
      w.cookie = kRecvCookie;
      if (e.post(conn, std::span<const WorkReq>(&w, 1)) != 1) break;
      posted = true;
    }
    int n = e.poll(out, Wait::block, 50 * kMs);
    if (n < 0) {
      r.poll_error = n;
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (out[i].cookie != kRecvCookie) {
        ++r.strangers;
        continue;
      }
      posted = false;
      r.sizes.push_back(out[i].bytes);
      if (out[i].bytes > 0) r.bytes.insert(r.bytes.end(), buf.data, buf.data + out[i].bytes);
    }
    if (!r.sizes.empty() && r.sizes.back() <= 0) break;
  }
  return r;
}

// Receives whose size is outside 1..len (the final 0 of an ended stream excepted).
inline int sizes_outside(const Received& r, uint32_t len) {
  int bad = 0;
  for (size_t i = 0; i < r.sizes.size(); ++i) {
    bool last_end = i + 1 == r.sizes.size() && r.sizes[i] == 0;
    if (!last_end && (r.sizes[i] < 1 || r.sizes[i] > int32_t(len))) ++bad;
  }
  return bad;
}

}  // namespace mtperf::test
