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
// The QP's device and port, and its moves through INIT, RTR and RTS: verbs/oob_qp.hpp.
//
// Every wait ends by the deadline; every failure throws std::runtime_error naming the flow, the
// step and the cause, and leaves nothing behind (the QP, the sockets).
#include <memory>

#include "transports/api/endpoint.hpp"
#include "transports/rdma/resources.hpp"
#include "verbs/oob_qp.hpp"
#include "verbs/oob_wire.hpp"

namespace mtperf::rdma {

std::unique_ptr<FlowListener> oob_listen(const SockAddr& where, const FlowSetup& setup,
                                         std::shared_ptr<WorkerRes> res);
std::unique_ptr<Endpoint> oob_connect(const SockAddr& server, const SockAddr& source,
                                      const FlowSetup& setup, std::shared_ptr<WorkerRes> res,
                                      int64_t deadline_ns);

}  // namespace mtperf::rdma
