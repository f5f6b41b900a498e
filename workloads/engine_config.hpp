#pragma once
// Sizing of a worker's engine from the flows it runs: connections, queue depth and buffers are
// all decided here, before the timed phase.
#include "transports/api/transport.hpp"
#include "workloads/job.hpp"

namespace mtperf {

// Outstanding sends per flow in a stream (depth 1 suffices for a blocking socket; completion
// engines keep the pipe full with more).
uint32_t stream_depth(const Caps& caps);

// Buffers a flow takes from the pool (sends in flight + one receive buffer).
uint32_t buffers_per_flow(const TestSpec& spec, const Caps& caps);
uint32_t buffer_size(const TestSpec& spec);

EngineConfig engine_config(const WorkerJob& job, const Caps& caps);

}  // namespace mtperf
