#include "transports/rdma/resources.hpp"

namespace mtperf::rdma {

WorkerPool::WorkerPool(const EngineConfig& cfg)
    : engine_cfg(cfg), buffers(cfg.buffers, cfg.buffer_size) {
  engine_cfg.sock = nullptr;
}

WorkerShape shape_of(const EngineConfig& cfg, bool per_transaction) {
  WorkerShape s;
  s.worker = cfg.worker;
  s.max_conns = cfg.max_conns;
  s.queue_depth = cfg.queue_depth;
  s.buffer_size = cfg.buffer_size;
  s.per_transaction = per_transaction;
  return s;
}

WorkerRes::WorkerRes(const EngineConfig& cfg, const RdmaSettings& s, bool per_transaction,
                     VerbsApi& verbs)
    : WorkerPool(cfg),
      WorkerVerbs(shape_of(cfg, per_transaction), s, {buffers.base(), buffers.bytes()}, verbs) {}

}  // namespace mtperf::rdma
