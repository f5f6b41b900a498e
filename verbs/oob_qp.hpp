#pragma once
// The queue pair of an out-of-band connection (-O connect=oob: transports/rdma/oob.hpp), made
// without rdma_cm: the device, port and GID of the local address, and the moves through INIT,
// RTR and RTS from the two sides' hellos (oob_wire.hpp).
//
// RTR: path MTU the smaller of the two ports' active MTUs; the peer's QPN and PSN; READ depths
// negotiated as rdma_cm does (oob_wire.hpp's oob_read_depths); min_rnr_timer kMinRnrTimer; RoCE:
// a global route to the peer's GID from ours (gid_rules.hpp, or -O gid_index), hop limit 64,
// traffic class -O tos; InfiniBand: the peer's LID. RTS: -O ack_timeout (else 19: 2.1 s, as
// rdma_cm), kTransportRetry retries, kRnrRetry RNR retries, our PSN.
#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>

#include "verbs/oob_wire.hpp"
#include "verbs/settings.hpp"
#include "verbs/verbs_api.hpp"

namespace mtperf::rdma {

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
// getsockname gives it, with port 0), found through rdma_cm, and the GID to use. `name`: the
// address as the errors show it.
OobPort oob_port(VerbsApi& v, const sockaddr_storage& local, const std::string& name,
                 const RdmaSettings& s);
// oob_port of a connected socket's local address (its port left out).
OobPort oob_port_of_socket(VerbsApi& v, int fd, const std::string& name, const RdmaSettings& s);
// The peer's hello read from fd by the deadline and checked against this flow (the test's
// cookie, the flow's id, the verb, the port's link layer): "" or why it is not this flow's.
std::string read_oob_hello(int fd, int64_t deadline_ns, uint64_t cookie, uint32_t flow, Verb verb,
                           uint8_t link, OobHello& out);
// A random 24-bit packet sequence number: a queue pair's first.
uint32_t random_psn();
// Moves qp to INIT (before its receives are posted); then, from both hellos, through RTR to RTS.
// Each throws naming the step and the error.
void oob_init(VerbsApi& v, ibv_qp* qp, const OobPort& p);
void oob_rtr_rts(VerbsApi& v, ibv_qp* qp, const OobPort& p, const OobQp& mine, const OobQp& peer,
                 const RdmaSettings& s);

}  // namespace mtperf::rdma
