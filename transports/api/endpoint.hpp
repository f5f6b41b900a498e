#pragma once
// Connection set-up, owned by the transport. The control session asks the transport for one
// listener per flow (server side) or one connection per flow (client side); what comes back is
// an Endpoint, opaque outside its transport, that the worker's engine adopts. Set-up path only:
// virtual calls, allocation and exceptions are fine here.
//
//   server                                             client
//   l = transport.listen(where, setup)
//   READY {ports[i] = l->port(), cookie}  ------->
//                                                      ep = transport.connect(server:port,
//                                                                             source, setup)
//   ep = l->accept(deadline)    <------- the transport's own proof: the test's cookie and the
//                                        flow id (a hello for sockets, private data for rdma_cm)
//
// A connection attempt that does not prove it belongs to the test and flow (wrong cookie or
// flow id, no proof in time) is dropped and counted in FlowListener::rejected(); the listener
// goes on waiting for the right one, so a stranger cannot end someone else's test.
#include <cstdint>
#include <memory>
#include <vector>

#include "transports/api/transport.hpp"

namespace mtperf {

// What both sides know of one flow before it is connected.
struct FlowSetup {
  uint32_t flow = 0;    // id of the flow within the test
  uint64_t cookie = 0;  // the test's random cookie, from READY
  Proto proto = Proto::tcp;
  // crr: a connection per transaction. Set-up yields the listener itself (server) or the
  // target to connect to (client); the engine opens and accepts connections on the data path.
  bool per_transaction = false;
  // rr and crr: each message is answered (a transport that must poll for the request, or that
  // cannot carry request/response on some setting, learns it here, before it connects).
  bool request_response = false;
  const SocketOptions* sock = nullptr;  // the test's socket options; never null
  // The worker thread of this side that will run the flow, and that worker's engine as it will
  // be built (workloads/engine_config.hpp). Transports that must publish memory to the peer at
  // connection time (RDMA: address and rkey in the private data) register it from this.
  uint32_t worker = 0;
  EngineConfig engine;
  // A TCP client flow to a peer that is not mtperf (Caps::peer_greeting, peers/): these bytes
  // are sent on the new connection in place of mtperf's flow hello (iperf3: the test's 37-byte
  // cookie); null for mtperf's own servers. Owned by the caller, alive while connect() runs.
  const std::vector<uint8_t>* greeting = nullptr;
  // A UDP client flow to such a peer: the greeting goes out once, as one datagram, and the
  // connect waits (to its deadline) for the peer's answer, taken when it is one of these (iperf3:
  // its reply, or its legacy one). Never sent again: a peer that took it would count a repeat as
  // data. Null for TCP.
  const std::vector<std::vector<uint8_t>>* greeting_replies = nullptr;
};

// A flow's connection (or, with per_transaction, its listener or target) as the transport's
// set-up made it. Owned by the flow until a worker's engine adopts it; the engine knows the
// concrete type, since the same transport made both.
class Endpoint {
 public:
  virtual ~Endpoint() = default;
  // A new descriptor (the caller closes it) that still shows the connection's TCP_INFO after the
  // engine closed its own, or -1 when the transport has none.
  virtual int dup_stats_fd() const { return -1; }
};

class FlowListener {
 public:
  virtual ~FlowListener() = default;
  virtual uint16_t port() const = 0;
  // A descriptor that turns readable when a connection attempt is waiting (for poll()).
  virtual int wait_fd() const = 0;
  // Takes the waiting attempt, waiting for its proof at most until deadline_ns (CLOCK_MONOTONIC).
  // Returns the flow's endpoint; nullptr when the attempt was not this flow's (it is dropped and
  // counted) or nothing was waiting. Throws std::runtime_error on a local failure.
  virtual std::unique_ptr<Endpoint> accept(int64_t deadline_ns) = 0;
  // per_transaction: the listener itself, as the flow's endpoint.
  virtual std::unique_ptr<Endpoint> release() = 0;
  uint64_t rejected() const { return rejected_; }

 protected:
  uint64_t rejected_ = 0;
};

}  // namespace mtperf
