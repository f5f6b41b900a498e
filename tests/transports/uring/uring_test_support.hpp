#pragma once
// Helpers shared by the io_uring engine tests: a connected loopback TCP pair, an engine config,
// posting one operation, waiting for the next completion.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <array>
#include <initializer_list>
#include <string>

#include "tests/support/skip.hpp"
#include "transports/inet/inet.hpp"
#include "transports/uring/register.hpp"
#include "transports/uring/uring_engine.hpp"
#include "workloads/job.hpp"

namespace mtperf::test {

inline ProbeResult uring_probe_here() {
  return uring_transport_entry().probe("/");
}

inline bool has_feature(const ProbeResult& p, const std::string& name) {
  return std::find(p.features.begin(), p.features.end(), name) != p.features.end();
}

// The requirement of a uring test binary (skip.hpp): io_uring usable, with every feature named.
inline std::string why_no_uring(std::initializer_list<const char*> features = {}) {
  ProbeResult p = uring_probe_here();
  if (!p.usable) return "io_uring is not usable here: " + p.why;
  for (const char* f : features)
    if (!has_feature(p, f)) return std::string("this kernel's io_uring lacks ") + f;
  return "";
}

struct TcpPair {
  int a = -1, b = -1;
  ~TcpPair() {
    if (a >= 0) ::close(a);
    if (b >= 0) ::close(b);
  }
};

inline void tcp_pair(TcpPair& p, int sndbuf = 0) {
  SocketOptions o;
  o.sndbuf = sndbuf;
  int l = inet::listen_on(inet::resolve("127.0.0.1", 0), Proto::tcp, o);
  p.a = inet::connect_to(inet::local_address(l), Proto::tcp, o, 2000);
  p.b = inet::accept_within(l, 2000);
  ::close(l);
  REQUIRE(p.a >= 0);
  REQUIRE(p.b >= 0);
}

inline EngineConfig engine_config_for_test(uint32_t buffers, uint32_t size) {
  EngineConfig c;
  c.max_conns = 4;
  c.queue_depth = 8;
  c.buffers = buffers;
  c.buffer_size = size;
  c.single_flow = false;
  return c;
}

// Polls until one completion arrives (or 5 s pass).
inline Completion next_completion(UringEngine& e) {
  std::array<Completion, 1> out;
  int64_t end = now_ns() + 5'000'000'000;
  while (now_ns() < end) {
    int n = e.poll(out, Wait::block, 50'000'000);
    REQUIRE(n >= 0);
    if (n == 1) return out[0];
  }
  FAIL("no completion within 5 s");
  return {};
}

inline void post_one(UringEngine& e, int conn, Op op, Buf b, uint64_t cookie, bool link = false) {
  WorkReq r;
  r.op = op;
  r.buf = b;
  r.cookie = cookie;
  r.link = link;
  REQUIRE(e.post(conn, std::span<const WorkReq>(&r, 1)) == 1);
}

}  // namespace mtperf::test
