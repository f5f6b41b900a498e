#pragma once
// One device's resources as a worker of the rdma transport holds them (worker_verbs.hpp's
// WorkerVerbs makes them, on first use of the device): a protection domain, a
// completion channel and one completion queue, the worker's pool and area registered, and the
// shared receive queue when its layout has one. Destruction releases everything in the reverse
// order, through the VerbsApi that made it (verbs_api.hpp).
#include <infiniband/verbs.h>

#include <string>
#include <vector>

#include "verbs/verbs_api.hpp"

namespace mtperf::rdma {

// [[noreturn]] a std::runtime_error "what: strerror(errno)" (with a hint for the usual causes).
[[noreturn]] void throw_errno(const std::string& what, int err);

struct DeviceRes {
  VerbsApi* verbs = &real_verbs();  // what made the objects below, and destroys them
  ibv_context* ctx = nullptr;
  ibv_device_attr attr{};
  ibv_pd* pd = nullptr;
  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
  ibv_mr* pool_mr = nullptr;
  ibv_mr* area_mr = nullptr;  // the whole area, local access only
  // Each connection's part of the area, for its peer alone (device_rules.hpp's remote_span),
  // one per entry of the connection table: its rkey is the one advertised to that peer.
  std::vector<ibv_mr*> conn_mrs;
  ibv_srq* srq = nullptr;
  // Bytes a send may carry inline: found at set-up (device_rules.hpp's settle_inline), lowered
  // if a later queue pair is granted less.
  uint32_t max_inline = 0;
  // Send-queue entries of each queue pair: the layout's within max_qp_wr, lowered if a queue
  // pair is granted fewer (flow_math.hpp's send_queue_ask, send_queue_cap). The engine posts
  // within it.
  uint32_t sq_cap = 0;
  int comp_vector = 0;     // the CQ's completion vector (device_rules.hpp's comp_vector)
  uint32_t cq_events = 0;  // completion events not yet acknowledged

  DeviceRes() = default;
  DeviceRes(const DeviceRes&) = delete;
  DeviceRes& operator=(const DeviceRes&) = delete;
  ~DeviceRes();
  std::string name() const;
  uint32_t pool_lkey() const { return pool_mr ? pool_mr->lkey : 0; }
};

}  // namespace mtperf::rdma
