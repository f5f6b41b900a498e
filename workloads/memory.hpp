#pragma once
// The memory one side of a test takes, computed from the test description alone, before anything
// is allocated: the server refuses a test over its budget (ServerOptions::max_memory) and the
// client a local run over its own (--max-memory), with a message that names the figure.
//
// The figure is honest: it uses the arithmetic that sizes each worker's engine
// (engine_config.hpp: buffers per flow, buffer size, connections, queue depth), deals the flows
// over the workers as the runner does, and asks the transport what its engine holds beyond the
// buffer pool (tables, rings, provided buffers: Transport::engine_overhead_bytes). Kernel socket
// buffers are not in it: the kernel bounds those itself (net.core.wmem_max, tcp_mem).
#include <cstdint>
#include <string>

#include "transports/api/registry.hpp"
#include "workloads/spec.hpp"

namespace mtperf {

struct MemoryFigure {
  uint64_t buffers = 0;     // every worker's pool: flows x buffers per flow x buffer size
  uint64_t engines = 0;     // engine tables, rings and transport-held buffers, every worker
  uint64_t flow_state = 0;  // per flow: its slot, latency histogram, rr timestamp rings
  uint64_t threads = 0;     // worker threads: the stack they touch, their reporting
  uint64_t total() const { return buffers + engines + flow_state + threads; }
  // "1.2 GiB (buffers 1.1 GiB: 2048 flows x 9 x 64 KiB, engines ..., flow state ..., threads ...)"
  std::string describe(const TestSpec& spec, const Caps& caps) const;
};

// What one side (both sides size alike) of `spec` takes over `transport`. spec must be
// validated. Pure arithmetic: allocates nothing of the test's.
MemoryFigure test_memory(const TestSpec& spec, const Transport& transport);

// Throws std::runtime_error when figure.total() exceeds limit_bytes: "the test needs 3.1 GiB of
// memory on the server (...), over its limit of 1 GiB (mtperf serve --max-memory)". `where`:
// "on the server" / "here"; `how_to_raise`: the option that sets the limit.
void check_memory(const MemoryFigure& figure, uint64_t limit_bytes, const TestSpec& spec,
                  const Caps& caps, const std::string& where, const std::string& how_to_raise);

// The default budget of one test: 1 GiB, or a quarter of the host's memory when that is less.
uint64_t default_test_memory(uint64_t mem_total_bytes);
// The default budget of all tests running at once on a server: 2 GiB, or half the host's memory.
uint64_t default_total_memory(uint64_t mem_total_bytes);

// "512 KiB", "1.5 GiB": binary units, one decimal above KiB.
std::string format_bytes(uint64_t bytes);
// "1G", "512M", "65536", "2.5G": a size with an optional K/M/G/T suffix (powers of 1024).
// Throws std::invalid_argument naming the text.
uint64_t parse_bytes(const std::string& text);

}  // namespace mtperf
