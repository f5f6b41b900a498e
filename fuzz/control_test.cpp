// Fuzz target: what a server does with the bytes of a TEST frame before it opens anything — the
// frame header, the JSON body, the test description (from_json), its validation, the transport
// and its options, and each worker's engine configuration.
//
// Input: one whole frame, header and body. The header's length field only tells a server how
// many bytes to read, so the bytes after the header are taken as the body whatever it says
// (a mutated body is not wasted on a stale length); the length is still checked against the
// server's bound, as a server does before reading.
//
// Findings beyond crashes and sanitizer reports: an exception other than the documented ones
// (std::invalid_argument, ProtocolError); a validated test that does not survive its own JSON
// (to_json, from_json, validate) unchanged; an engine whose buffers are smaller than a message
// its flows send, or whose sizes wrapped around.
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/protocol.hpp"
#include "fuzz/fuzz_support.hpp"
#include "transports/api/registry.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/job.hpp"
#include "workloads/spec.hpp"

namespace mtperf::fuzz {
namespace {

// The largest message one send of the test carries: each goes out of one pool buffer.
uint32_t largest_send(const TestSpec& s) {
  if (s.workload == Workload::rr || s.workload == Workload::crr)
    return std::max(s.req_size, s.resp_size);
  return s.stream_msg_size();
}

// Each worker's engine, as the runner deals the flows: round-robin over its workers.
void check_engines(const TestSpec& spec, const Caps& caps) {
  const uint32_t flows = spec.flows_total();
  const uint32_t workers = std::max<uint32_t>(1, std::min(spec.threads_effective(), flows));
  check(workers <= kLimits.max_threads, "more workers than the thread limit");
  FlowSlot slot;
  WorkerJob job;
  job.spec = &spec;
  // Worker 0 runs the most flows; the last worker the fewest. Both bound every other.
  for (uint32_t count : {flows / workers + (flows % workers ? 1 : 0), flows / workers}) {
    if (count == 0) continue;
    job.flows.assign(count, &slot);
    const EngineConfig cfg = engine_config(job, caps);
    check(cfg.buffer_size >= largest_send(spec), "a message larger than the engine's buffers");
    check(cfg.buffer_size > 0 && cfg.buffers > 0, "an engine without buffers");
    const uint32_t per_flow = buffers_per_flow(spec, caps);
    // Each flow rotates its sends over all but one of its buffers (the receive buffer).
    check(per_flow >= 2, "a flow with no send buffer beside its receive buffer");
    const uint64_t want = shares_buffers(spec, caps) ? kSharedBuffers : uint64_t(count) * per_flow;
    check(uint64_t(cfg.buffers) == want, "the buffer count wrapped around");
    check(cfg.max_conns >= count, "fewer connections than flows");
    check(cfg.queue_depth > spec.burst, "a queue shallower than the burst");
  }
}

void run(const uint8_t* data, size_t size) {
  if (size < control::kHeaderBytes) return;
  control::MsgType type;
  uint32_t length = 0;
  try {
    control::decode_header(data, type, length, control::kMaxRequestBody);
  } catch (const control::ProtocolError&) {
    return;
  }
  const size_t body_bytes =
      std::min<size_t>(size - control::kHeaderBytes, control::kMaxRequestBody);
  const std::string_view body(reinterpret_cast<const char*>(data + control::kHeaderBytes),
                              body_bytes);
  control::Message m;
  try {
    m = control::decode(type, body);
  } catch (const control::ProtocolError&) {
    return;
  }
  if (m.type != control::MsgType::test) return;
  auto it = m.body.find("test");
  if (it == m.body.end()) return;

  TestSpec spec;
  const TransportEntry* entry = nullptr;
  try {
    from_json(*it, spec);
    validate(spec);
    entry = &find_transport(spec.transport);
    check_params(*entry, spec.transport_params);
  } catch (const std::invalid_argument&) {
    return;  // refused with a message naming the field: what a server must do
  }

  // What the server accepted, written and read again, is accepted again and is the same test.
  const nlohmann::json once = spec;
  TestSpec again;
  try {
    from_json(once, again);
    validate(again);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "fuzz: %s\n", e.what());
    check(false, "a validated test refused after to_json");
  }
  check(nlohmann::json(again) == once, "a validated test changed through to_json/from_json");

  check_engines(spec, entry->caps);
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mtperf::fuzz::run(data, size);
  return 0;
}
