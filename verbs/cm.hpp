#pragma once
// rdma_cm helpers shared by set-up (control thread, blocking with a deadline) and the engine
// (crr: connections made and accepted on the data path, driven by events). Each call goes
// through the VerbsApi given (verbs_api.hpp): the worker's (WorkerRes::verbs).
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <string>

#include "verbs/device_res.hpp"
#include "verbs/device_rules.hpp"
#include "verbs/private_data.hpp"
#include "verbs/settings.hpp"
#include "verbs/verbs_api.hpp"

namespace mtperf::rdma {

// An event channel whose descriptor never blocks (so that it can be polled with others).
// Throws naming the call, with the hint for a kernel without rdma_cm.
rdma_event_channel* make_channel(VerbsApi& v);
// Destroys an rdma_cm id and its queue pair, if any (null is fine).
void destroy_id(VerbsApi& v, rdma_cm_id* id);

// The next event on ch, waiting at most until deadline_ns (CLOCK_MONOTONIC); nullptr when none
// came. The caller acknowledges it.
rdma_cm_event* next_event(VerbsApi& v, rdma_event_channel* ch, int64_t deadline_ns);
// Waits for `want` on id's channel; any other event, or none by the deadline, throws naming
// `what`, the event and its status. Returns the event, which the caller acknowledges.
rdma_cm_event* expect_event(VerbsApi& v, rdma_event_channel* ch, rdma_cm_event_type want,
                            int64_t deadline_ns, const std::string& what);

// An event's name and its status ("RDMA_CM_EVENT_REJECTED (status 28)"), as errors show it.
std::string event_text(const rdma_cm_event* ev);

// How long one rdma_cm resolution step may take, whatever the set-up deadline.
inline constexpr int kResolveMs = 2000;
// Resolves the address (and, with `route`, the route) of `id` towards `server`, from `source`
// when it is not null, waiting on ch by the deadline: rdma_cm picks the device, port and GID of
// the local address it routes from (RoCE v2 over IPv4 or IPv6). Throws naming `what` and the step.
void resolve(VerbsApi& v, rdma_event_channel* ch, rdma_cm_id* id, const sockaddr* server,
             const sockaddr* source, int64_t deadline_ns, const std::string& what, bool route);

// Connection parameters: our private data, the READ depths (device_rules.hpp: the connecting
// side's own, local_depths; the accepting side's answer, accept_depths), finite RNR and
// transport retries (a peer without a receive ends in an RNR retry error, a dead one in a retry
// error).
rdma_conn_param conn_param(ReadDepths depths, const uint8_t* pd);
ReadDepths local_depths(const DeviceRes& d);
// The accepting side's depths for a CONNECT_REQUEST event's parameters (as rdma_cm gives them:
// from the accepting side's point of view, device_rules.hpp's request_as_seen).
ReadDepths accept_depths(const DeviceRes& d, const rdma_conn_param& req);

// Once ESTABLISHED: the queue pair's min_rnr_timer set to kMinRnrTimer (InfiniBand and RoCE;
// iWARP has no RNR). 0 or an errno.
int set_min_rnr_timer(VerbsApi& v, ibv_qp* qp, ibv_context* ctx);
// -O tos and -O ack_timeout on an rdma_cm id (tos before its route is resolved, or on the
// listener; ack_timeout before connect or accept): "" or why not, naming the option.
std::string apply_tos(VerbsApi& v, rdma_cm_id* id, const RdmaSettings& s);
std::string apply_ack_timeout(VerbsApi& v, rdma_cm_id* id, const RdmaSettings& s);
int64_t monotonic_ns();
int ms_until(int64_t deadline_ns);

}  // namespace mtperf::rdma
