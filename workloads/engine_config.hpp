#pragma once
// Sizing of a worker's engine from the flows it runs: connections, queue depth and buffers are
// all decided here, before the timed phase.
#include "transports/api/endpoint.hpp"
#include "transports/api/transport.hpp"
#include "workloads/job.hpp"
#include "workloads/kind.hpp"

namespace mtperf {

// Buffers a flow takes from the pool (sends in flight + one receive buffer). The engine's
// queue depth (EngineConfig::queue_depth) is the larger of the burst + 2 and the sends in
// flight + 3, the sends of request/response counted as a stream of at most kShallowStream.
uint32_t buffers_per_flow(const TestSpec& spec, const Caps& caps);
// A TCP stream (stream, maerts, bidir) without --verify never writes a send buffer after set-up
// and never reads what it receives: every flow of a worker then sends from one shared buffer and
// receives into another, and the pool holds kSharedBuffers, not flows x buffers_per_flow (64 KiB
// messages: 320 KiB a flow and side otherwise). Sends in flight at once from one buffer only
// read it. Not for one-sided transports (a peer writes into a flow's buffers). Where the engine
// provides the receive buffers (io_uring's buffer ring, RDMA's posted receives), the shared
// receive buffer goes unused and the flows share their send buffer.
bool shares_buffers(const TestSpec& spec, const Caps& caps);
inline constexpr uint32_t kSharedBuffers = 2;  // one to send from, one to receive into
// Bytes of every pool buffer: never less than one whole message, request or response (each
// send goes out of one buffer). rr over TCP gathers up to kMaxGatherBytes of a burst at once.
uint32_t buffer_size(const TestSpec& spec);

EngineConfig engine_config(const WorkerJob& job, const Caps& caps);
// The same for a worker that will run `flows` flows of the spec.
EngineConfig engine_config(const TestSpec& spec, uint32_t flows, const Caps& caps);

// Worker threads of one side for `flows` flows, and the worker that runs flow `index` (flows are
// dealt round-robin; the runner and set-up agree through these).
uint32_t worker_count(const TestSpec& spec, uint32_t flows);
uint32_t worker_of(const TestSpec& spec, uint32_t flows, uint32_t index);

// What the transport's set-up is told of flow `index` of the test (transports/api/endpoint.hpp).
FlowSetup flow_setup(const TestSpec& spec, uint32_t index, uint64_t cookie, const Caps& caps);

}  // namespace mtperf
