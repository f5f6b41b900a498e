#pragma once
// FOR UNIT TESTS ONLY: the flows the FakeVerbs tests set up (fake_verbs.hpp) — an engine
// configuration, a flow's set-up, the private data a peer sends, and a few turns of an engine.
#include <cstdint>
#include <span>
#include <vector>

#include "transports/api/endpoint.hpp"
#include "transports/rdma/engine.hpp"
#include "transports/rdma/settings.hpp"
#include "verbs/private_data.hpp"

namespace mtperf::rdma::test {

inline constexpr uint64_t kCookie = 0x5eed;

// `conns` connections of `buffers` 1 KiB buffers; request/response or a stream.
inline EngineConfig fake_config(bool request_response, uint32_t conns = 2, uint32_t buffers = 16) {
  EngineConfig c;
  c.max_conns = conns;
  c.queue_depth = 8;
  c.buffers = buffers;
  c.buffer_size = 1024;
  c.wait = Wait::spin;
  c.request_response = request_response;
  c.stream_msg_size = request_response ? 0 : 1024;
  return c;
}

inline FlowSetup fake_flow(const EngineConfig& cfg, bool per_transaction) {
  static const SocketOptions kSock;
  FlowSetup s;
  s.flow = 3;
  s.cookie = kCookie;
  s.per_transaction = per_transaction;
  s.request_response = cfg.request_response;
  s.sock = &kSock;
  s.engine = cfg;
  return s;
}

// What the peer of flow `s` says in its private data (REQ or REP).
inline std::vector<uint8_t> peer_pd(const FlowSetup& s, Verb v, uint16_t credits = 64) {
  ConnInfo c;
  c.verb = uint8_t(v);
  c.flow = s.flow;
  c.cookie = s.cookie;
  c.addr = 0x10000;
  c.rkey = 0x77;
  c.slot_size = 4096;
  c.slots = 16;
  c.credits = credits;
  c.credit_addr = 0x20000;
  std::vector<uint8_t> pd(kPdBytes);
  encode_conn_info(c, pd.data());
  return pd;
}

inline SockAddr fake_address() {
  return numeric_address("192.0.2.1", 0);  // TEST-NET-1: nothing is sent anywhere
}

// Polls for `turns` short rounds (rdma_cm's events are read in them), keeping every completion.
inline std::vector<Completion> turn(RdmaEngine& e, int turns = 3) {
  std::vector<Completion> all;
  Completion out[16];
  for (int i = 0; i < turns; ++i) {
    int n = e.poll(std::span<Completion>(out), Wait::spin, 2'000'000);
    for (int k = 0; k < n; ++k)
      all.push_back(out[k]);
  }
  return all;
}

}  // namespace mtperf::rdma::test
