#include "workloads/memory.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "platform/number.hpp"
#include "stats/histogram.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/job.hpp"
#include "workloads/kind.hpp"
#include "workloads/runner.hpp"

namespace mtperf {
namespace {

// A worker thread's own cost beyond its engine: the part of its stack it touches and the
// bookkeeping of the worker loop. Threads reserve 8 MiB of address space but touch little.
constexpr uint64_t kThreadBytes = 128 * 1024;
// Per-flow state of the worker loop besides the rr rings (Worker<E>::Flow).
constexpr uint64_t kWorkerFlowBytes = 128;

// One worker running `n` flows.
struct WorkerCost {
  uint64_t buffers = 0, engine = 0, flow_state = 0;
  EngineConfig cfg;
};

WorkerCost worker_cost(const TestSpec& spec, uint32_t n, const Transport& transport) {
  WorkerCost c;
  c.cfg = engine_config(spec, n, transport.caps());
  c.buffers = uint64_t(c.cfg.buffers) * c.cfg.buffer_size;
  c.engine = transport.engine_overhead_bytes(c.cfg);
  // rr: a send timestamp and a sequence number per transaction in flight (Worker::ring_, seqs_).
  c.flow_state = uint64_t(n) * (kWorkerFlowBytes + uint64_t(spec.burst) * 16);
  // The worker's latency histogram (WorkerJob::latency), where its flows' round trips go, and
  // crr's of connect times (WorkerJob::connect_latency; priced on both sides, made on one).
  c.flow_state += sizeof(WorkerJob) + Histogram::kStorageBytes;
  if (kind_of(spec.workload).per_transaction) c.flow_state += Histogram::kStorageBytes;
  return c;
}

}  // namespace

MemoryFigure test_memory(const TestSpec& spec, const Transport& transport) {
  uint32_t flows = spec.flows_total();
  // As the runner deals them: round-robin over max(1, min(threads, flows)) workers.
  uint32_t workers = std::max<uint32_t>(1, std::min(spec.threads_effective(), flows));
  uint32_t base = flows / workers, extra = flows % workers;
  MemoryFigure m;
  for (auto [n, count] : {std::pair{base + 1, extra}, std::pair{base, workers - extra}}) {
    if (count == 0 || n == 0) continue;
    WorkerCost c = worker_cost(spec, n, transport);
    m.buffers += c.buffers * count;
    m.engines += c.engine * count;
    m.flow_state += c.flow_state * count;
  }
  // Every flow's slot (with its own latency histogram, allocated whole, only under
  // --per-flow-latency), and the runner's counter snapshots; the side's merged histogram; the
  // interim reports the clock thread keeps.
  uint64_t per_flow = sizeof(FlowSlot) + 3 * sizeof(CounterValues) + sizeof(FlowResult);
  if (spec.per_flow_latency) per_flow += Histogram::kStorageBytes;
  if (spec.verify_seed != 0) per_flow += 2 * sizeof(Pattern);  // --verify: one per direction
  m.flow_state += uint64_t(flows) * per_flow + Histogram::kStorageBytes;  // + SideResult::latency
  if (spec.interval_s > 0) {
    m.flow_state += uint64_t(std::ceil(spec.duration_s / spec.interval_s) + 1) *
                    (sizeof(IntervalSample) + uint64_t(flows) * sizeof(CounterValues));
  }
  m.threads = uint64_t(workers + 1) * kThreadBytes;  // the workers and the clock thread
  return m;
}

std::string MemoryFigure::describe(const TestSpec& spec, const Caps& caps) const {
  EngineConfig one = engine_config(spec, 1, caps);
  const uint32_t flows = spec.flows_total();
  const std::string dealt = shares_buffers(spec, caps)
                                ? std::to_string(worker_count(spec, flows)) + " workers x " +
                                      std::to_string(kSharedBuffers) + " shared"
                                : std::to_string(flows) + (flows == 1 ? " flow x " : " flows x ") +
                                      std::to_string(one.buffers);
  return format_bytes(total()) + " (buffers " + format_bytes(buffers) + ": " + dealt + " x " +
         format_bytes(one.buffer_size) + "; engines " + format_bytes(engines) + "; flow state " +
         format_bytes(flow_state) + "; threads " + format_bytes(threads) + ")";
}

void check_memory(const MemoryFigure& figure, uint64_t limit_bytes, const TestSpec& spec,
                  const Caps& caps, const std::string& where, const std::string& how_to_raise) {
  if (figure.total() <= limit_bytes) return;
  throw std::runtime_error("the test needs " + figure.describe(spec, caps) + " of memory " + where +
                           ", over its limit of " + format_bytes(limit_bytes) + " (" +
                           how_to_raise + ")");
}

uint64_t default_test_memory(uint64_t mem_total_bytes) {
  uint64_t quarter = mem_total_bytes / 4;
  return std::min<uint64_t>(uint64_t(1) << 30, quarter > 0 ? quarter : uint64_t(1) << 30);
}

uint64_t default_total_memory(uint64_t mem_total_bytes) {
  uint64_t half = mem_total_bytes / 2;
  uint64_t total = std::min<uint64_t>(uint64_t(2) << 30, half > 0 ? half : uint64_t(2) << 30);
  return std::max(total, default_test_memory(mem_total_bytes));
}

std::string format_bytes(uint64_t bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  double v = double(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  }
  return buf;
}

uint64_t parse_bytes(const std::string& text) {
  auto bad = [&] {
    throw std::invalid_argument("'" + text.substr(0, 64) +
                                "' is not a size (a number with an optional K, M, G or T)");
  };
  if (text.size() > 32) bad();
  // A fraction of a byte is dropped: a budget of "1.3G" means what it can hold.
  std::optional<double> bytes = parse_scaled(text, kSizeUnits);
  if (!bytes || *bytes > 1e18) bad();
  return uint64_t(*bytes);
}

}  // namespace mtperf
