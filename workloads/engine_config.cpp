#include "workloads/engine_config.hpp"

#include <algorithm>

namespace mtperf {

uint32_t buffers_per_flow(const TestSpec& spec, const Caps& caps) {
  return kind_of(spec.workload).sends_in_flight(spec, caps) + 1;
}

bool shares_buffers(const TestSpec& spec, const Caps& caps) {
  return !kind_of(spec.workload).request_response && spec.proto == Proto::tcp &&
         spec.verify_seed == 0 && !caps.one_sided;
}

uint32_t buffer_size(const TestSpec& spec) {
  return std::max<uint32_t>(kind_of(spec.workload).buffer_size(spec), 64);
}

EngineConfig engine_config(const WorkerJob& job, const Caps& caps) {
  EngineConfig cfg = engine_config(*job.spec, uint32_t(job.flows.size()), caps);
  cfg.worker = job.index;
  return cfg;
}

EngineConfig engine_config(const TestSpec& spec, uint32_t flows, const Caps& caps) {
  EngineConfig cfg;
  const WorkloadKind& kind = kind_of(spec.workload);
  cfg.max_conns = flows * kind.conns_per_flow;
  // rr keeps its burst in flight, streams stream_depth(caps): a deep stream's queue is not
  // given to request/response (nor its receives and landing slots, sized from it).
  uint32_t sends = kind.request_response ? std::min<uint32_t>(stream_depth(caps), kShallowStream)
                                         : stream_depth(caps);
  cfg.queue_depth = std::max<uint32_t>(spec.burst + 2, sends + 3);
  cfg.buffers = shares_buffers(spec, caps) ? kSharedBuffers : flows * buffers_per_flow(spec, caps);
  cfg.buffer_size = buffer_size(spec);
  cfg.wait = spec.wait;
  cfg.single_flow = flows == 1;
  cfg.sock = &spec.sock;
  cfg.request_response = kind.request_response;
  cfg.stream_msg_size = spec.stream_msg_size();
  if (kind.request_response && spec.proto == Proto::udp)
    cfg.max_block_ns = int64_t(spec.udp_timeout_s * 1e9);
  return cfg;
}

uint32_t worker_count(const TestSpec& spec, uint32_t flows) {
  return std::max<uint32_t>(1, std::min<uint32_t>(spec.threads_effective(), flows));
}

uint32_t worker_of(const TestSpec& spec, uint32_t flows, uint32_t index) {
  return index % worker_count(spec, flows);
}

FlowSetup flow_setup(const TestSpec& spec, uint32_t index, uint64_t cookie, const Caps& caps) {
  uint32_t flows = spec.flows_total();
  uint32_t worker = worker_of(spec, flows, index);
  uint32_t workers = worker_count(spec, flows);
  FlowSetup s;
  s.flow = index;
  s.cookie = cookie;
  s.proto = spec.proto;
  const WorkloadKind& kind = kind_of(spec.workload);
  s.per_transaction = kind.per_transaction;
  s.request_response = kind.request_response;
  s.sock = &spec.sock;
  s.worker = worker;
  // Flows are dealt round-robin: worker w runs every flow whose index is w modulo workers.
  s.engine = engine_config(spec, flows / workers + (worker < flows % workers ? 1 : 0), caps);
  s.engine.worker = worker;
  return s;
}

}  // namespace mtperf
