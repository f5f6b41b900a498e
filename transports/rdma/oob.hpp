#pragma once
// Out-of-band connection set-up of the rdma transport (-O connect=oob), beside rdma_cm's
// (setup.hpp). The QPs are made without rdma_cm and moved through INIT, RTR and RTS by mtperf,
// from what a TCP connection to the flow's port carried (oob_wire.hpp):
//
//   server                                              client
//   listen: a TCP socket on `where` (wait_fd)
//                                                       TCP connect (from `source`), by the
//                                                       deadline; the device and port of the
//                                                       local address (an rdma_cm id bound to
//                                                       it, then destroyed); the QP made, INIT,
//                                                       receives posted
//                    <---- hello: QPN, PSN, LID, MTU, depths, GID, ConnInfo
//   accept: the hello checked (a stranger, a short
//   or malformed one, a peer gone: dropped and
//   counted); device and port of the accepted
//   socket's local address; QP made, INIT,
//   receives, RTR, RTS
//                    ----> hello (ours) ---->           checked; RTR, RTS
//                    <---- "MTRY" (ready) <----
//   the listener closed; the connection's TCP socket stays with the endpoint (its end is the
//   peer's disconnect)
//
// RTR: path MTU the smaller of the two ports' active MTUs; the peer's QPN and PSN; READ depths
// negotiated as rdma_cm does (oob_wire.hpp's oob_read_depths); min_rnr_timer kMinRnrTimer; RoCE:
// a global route to the peer's GID from ours (gid_rules.hpp, or -O gid_index), hop limit 64,
// traffic class -O tos; InfiniBand: the peer's LID. RTS: -O ack_timeout (else 19: 2.1 s, as
// rdma_cm), kTransportRetry retries, kRnrRetry RNR retries, our PSN.
//
// Every wait ends by the deadline; every failure throws std::runtime_error naming the flow, the
// step and the cause, and leaves nothing behind (the QP, the sockets).
#include <memory>

#include "transports/api/endpoint.hpp"
#include "transports/rdma/oob_wire.hpp"
#include "transports/rdma/resources.hpp"

namespace mtperf::rdma {

std::unique_ptr<FlowListener> oob_listen(const SockAddr& where, const FlowSetup& setup,
                                         std::shared_ptr<WorkerRes> res);
std::unique_ptr<Endpoint> oob_connect(const SockAddr& server, const SockAddr& source,
                                      const FlowSetup& setup, std::shared_ptr<WorkerRes> res,
                                      int64_t deadline_ns);

// What the local side of an out-of-band QP is: its device and port, the port's attributes and
// the source GID's index. Throws naming the call.
struct OobPort {
  ibv_context* ctx = nullptr;
  uint8_t port = 0;
  uint8_t link = kLinkEthernet;
  uint8_t mtu = 0;  // active, ibv_mtu
  uint16_t lid = 0;
  int gid_index = -1;
  std::array<uint8_t, 16> gid{};
};
// The device and port that hold `local` (an address of this host, as a connected socket's
// getsockname gives it), found through rdma_cm, and the GID to use.
OobPort oob_port(VerbsApi& v, const SockAddr& local, const RdmaSettings& s);
// Moves qp to INIT (before its receives are posted); then, from both hellos, through RTR to RTS.
// Each throws naming the step and the error.
void oob_init(VerbsApi& v, ibv_qp* qp, const OobPort& p);
void oob_rtr_rts(VerbsApi& v, ibv_qp* qp, const OobPort& p, const OobQp& mine, const OobQp& peer,
                 const RdmaSettings& s);

}  // namespace mtperf::rdma
