#pragma once
// One worker's RDMA resources as the transport holds them: the workload's buffer pool and engine
// configuration, then the verbs resources that register the pool (verbs/worker_verbs.hpp: the
// area, each device's PD, CQ, memory regions and SRQ). Made by the transport's set-up and handed
// to the worker's engine in make_engine (EngineHost); endpoints and engines hold a shared_ptr.
// The pool is the first base: made before the verbs resources register it, freed after they
// have released their registrations.
#include <memory>

#include "transports/api/endpoint.hpp"
#include "transports/api/transport.hpp"
#include "verbs/worker_verbs.hpp"

namespace mtperf::rdma {

// The workload's side of a worker (not the socket options: set-up's do not outlive set-up).
struct WorkerPool {
  explicit WorkerPool(const EngineConfig& cfg);
  EngineConfig engine_cfg;
  BufferPool buffers;
};

// A worker's shape as the verbs resources are sized from it.
WorkerShape shape_of(const EngineConfig& cfg, bool per_transaction);

class WorkerRes : private WorkerPool, public WorkerVerbs {
 public:
  WorkerRes(const EngineConfig& cfg, const RdmaSettings& s, bool per_transaction,
            VerbsApi& verbs = real_verbs());

  const EngineConfig& config() const { return engine_cfg; }
  BufferPool& pool() { return buffers; }
  using WorkerVerbs::local_info;
  ConnInfo local_info(uint32_t conn, const DeviceRes& d, const FlowSetup& s) const {
    return local_info(conn, d, s.flow, s.cookie);
  }
};

}  // namespace mtperf::rdma
