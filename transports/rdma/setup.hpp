#pragma once
// Connection set-up of the rdma transport (endpoint.hpp's sequence, over rdma_cm):
//
//   server                                             client
//   listen: an id on its own event channel
//   (wait_fd), bound to `where`, listening;
//   the worker's PD, CQ and MRs made
//                                                      connect: resolve address and route
//                                                      (from `source` when given; the GID of
//                                                      the address, RoCE v2), the worker's
//                                                      resources, QP, receives posted,
//                   <---- REQ: ConnInfo {magic, version, cookie, flow, verb, landing slots,
//                                        rkey, credits, credit word}
//   accept: the proof checked (a stranger is
//   rejected and counted); its own channel,
//   QP, receives posted, rdma_accept
//                   ----> REP: ConnInfo (ours) ---->   ESTABLISHED: the server's ConnInfo read
//   ESTABLISHED (by the deadline)
//
// The endpoint a worker's engine adopts carries the id (with its QP), its channel, the table
// entry it was given and the peer's ConnInfo. crr: the server's endpoint is its listener, the
// client's only the target; the engine connects per transaction.
#include <rdma/rdma_cma.h>

#include <memory>

#include "transports/api/endpoint.hpp"
#include "transports/rdma/resources.hpp"

namespace mtperf::rdma {

struct RdmaEndpoint final : Endpoint {
  enum class Kind : uint8_t { conn, listener, target };
  Kind kind = Kind::conn;
  std::shared_ptr<WorkerRes> res;
  rdma_event_channel* ch = nullptr;
  rdma_cm_id* id = nullptr;  // conn: with its QP; listener: listening
  // conn over -O connect=oob (oob.hpp): no id; its own QP, in RTS, the TCP connection of the
  // exchange (kept: its end is the peer's disconnect) and the port the QP is on.
  ibv_qp* qp = nullptr;
  int oob_fd = -1;
  uint8_t port = 0;
  DeviceRes* dev = nullptr;
  uint32_t conn = 0;  // conn: its entry in the worker's connection table
  ConnInfo peer;      // conn: what the peer told
  FlowSetup setup;    // listener: the proof to check; target: the proof to give
  SockAddr remote;    // target: where each transaction connects
  SockAddr source;    // target: from where (AF_UNSPEC: any)

  RdmaEndpoint() = default;
  RdmaEndpoint(const RdmaEndpoint&) = delete;
  RdmaEndpoint& operator=(const RdmaEndpoint&) = delete;
  ~RdmaEndpoint() override;
  // Hands the id, the channel, the QP and the descriptor over (to an engine); the endpoint no
  // longer destroys them.
  void release();
};

// `res`: the resources of the worker that will run the flow (FlowSetup::worker). Both throw
// std::runtime_error naming the flow, the address and the reason.
std::unique_ptr<FlowListener> rdma_listen(const SockAddr& where, const FlowSetup& setup,
                                          std::shared_ptr<WorkerRes> res);
std::unique_ptr<Endpoint> rdma_connect(const SockAddr& server, const SockAddr& source,
                                       const FlowSetup& setup, std::shared_ptr<WorkerRes> res,
                                       int64_t deadline_ns);

// "flow N", as set-up's errors name the flow.
inline std::string flow_name(const FlowSetup& s) {
  return "flow " + std::to_string(s.flow);
}

// A connection's private data, checked against what this flow expects: "" or why not.
inline std::string check_peer(const void* data, size_t len, const FlowSetup& s, Verb verb,
                              ConnInfo& out) {
  return check_conn_info(data, len, s.cookie, s.flow, uint8_t(verb), out);
}

}  // namespace mtperf::rdma
