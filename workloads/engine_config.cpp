#include "workloads/engine_config.hpp"

#include <algorithm>

namespace mtperf {

uint32_t stream_depth(const Caps& caps) {
  if (caps.stream_depth != 0) return caps.stream_depth;
  return std::clamp<uint32_t>(caps.max_outstanding / 8, 1, kShallowStream);
}

uint32_t buffers_per_flow(const TestSpec& spec, const Caps& caps) {
  uint32_t sends = spec.workload == Workload::rr    ? spec.burst
                   : spec.workload == Workload::crr ? std::min(stream_depth(caps), kShallowStream)
                                                    : stream_depth(caps);
  return sends + 1;
}

uint32_t buffer_size(const TestSpec& spec) {
  uint32_t size = 0;
  if (spec.workload == Workload::rr || spec.workload == Workload::crr) {
    // Every send is one whole request or response from one buffer, so a buffer holds the larger
    // of the two, whatever its size. A TCP receive may gather several responses of a burst at
    // once: room for the burst, up to kMaxGatherBytes (a receive completes with what fits).
    uint32_t one = std::max(spec.req_size, spec.resp_size);
    uint64_t burst = spec.proto == Proto::udp ? one : uint64_t(one) * spec.burst;
    size = uint32_t(std::max<uint64_t>(one, std::min<uint64_t>(burst, kMaxGatherBytes)));
  } else {
    size = spec.stream_msg_size();
    // A TCP receiver reads whatever has arrived, up to its buffer: small sends need not mean
    // small reads (one 64 KiB read instead of eight 8 KiB ones).
    if (spec.proto == Proto::tcp) size = std::max<uint32_t>(size, 64 * 1024);
  }
  return std::max<uint32_t>(size, 64);
}

EngineConfig engine_config(const WorkerJob& job, const Caps& caps) {
  EngineConfig cfg = engine_config(*job.spec, uint32_t(job.flows.size()), caps);
  cfg.worker = job.index;
  return cfg;
}

EngineConfig engine_config(const TestSpec& spec, uint32_t flows, const Caps& caps) {
  EngineConfig cfg;
  // crr servers hold a listener, the current connection and one closing behind it.
  uint32_t per_flow = spec.workload == Workload::crr ? 4 : 1;
  cfg.max_conns = flows * per_flow;
  // rr keeps its burst in flight, streams stream_depth(caps): a deep stream's queue is not
  // given to request/response (nor its receives and landing slots, sized from it).
  bool rr = spec.workload == Workload::rr || spec.workload == Workload::crr;
  uint32_t sends = rr ? std::min<uint32_t>(stream_depth(caps), kShallowStream) : stream_depth(caps);
  cfg.queue_depth = std::max<uint32_t>(spec.burst + 2, sends + 3);
  cfg.buffers = flows * buffers_per_flow(spec, caps);
  cfg.buffer_size = buffer_size(spec);
  cfg.wait = spec.wait;
  cfg.single_flow = flows == 1;
  cfg.sock = &spec.sock;
  cfg.request_response = spec.workload == Workload::rr || spec.workload == Workload::crr;
  cfg.stream_msg_size = spec.stream_msg_size();
  if (spec.workload == Workload::rr && spec.proto == Proto::udp)
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
  s.per_transaction = spec.workload == Workload::crr;
  s.request_response = spec.workload == Workload::rr || spec.workload == Workload::crr;
  s.sock = &spec.sock;
  s.worker = worker;
  // Flows are dealt round-robin: worker w runs every flow whose index is w modulo workers.
  s.engine = engine_config(spec, flows / workers + (worker < flows % workers ? 1 : 0), caps);
  s.engine.worker = worker;
  return s;
}

}  // namespace mtperf
