#pragma once
// The transport registry: each transport is an entry {name, summary, caps, options, probe,
// factory, line hook}. The core never asks which transport it holds; it uses the Caps it was given
// and the Transport object the factory made.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "platform/typed_options.hpp"
#include "transports/api/endpoint.hpp"
#include "transports/api/foreign_peer.hpp"
#include "transports/api/line.hpp"
#include "transports/api/transport.hpp"
#include "transports/api/transport_list.hpp"  // generated: kDefaultTransport

namespace mtperf {

struct ProbeResult {
  bool usable = false;
  std::string why;                    // when not usable: what is missing and how to get it
  std::vector<std::string> features;  // detected optional features, by name
};

// The probe feature of a transport that carries UDP (`-p udp`); `mtperf suite` runs its UDP
// cases only where a transport lists it.
inline constexpr std::string_view kFeatureUdp = "udp";

// One transport instance per test and process. Setup path: virtual calls are fine here. The
// data path is not here: a transport also derives from EngineHost<E> (engine_host.hpp) for its
// engine type E, through which bindings/ builds each worker's engine and runs the workload.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual Caps caps() const = 0;
  // Connection set-up (endpoint.hpp). Server: a listener for one flow on `where` (port 0: any).
  // Throws std::runtime_error naming the address and the reason.
  virtual std::unique_ptr<FlowListener> listen(const SockAddr& where, const FlowSetup& setup) = 0;
  // Client: connects one flow to `server` from `source` (AF_UNSPEC: any) and proves to the
  // listener that it is the test's flow; gives up at deadline_ns (CLOCK_MONOTONIC). Throws
  // std::runtime_error naming the flow, the address and the reason.
  virtual std::unique_ptr<Endpoint> connect(const SockAddr& server, const SockAddr& source,
                                            const FlowSetup& setup, int64_t deadline_ns) = 0;
  // What the transport actually uses after probing and fallbacks, for the report.
  virtual std::map<std::string, std::string> effective_settings() const { return {}; }
  // Bytes an engine built from `cfg` holds beyond its buffer pool (cfg.buffers x
  // cfg.buffer_size): its connection and operation tables, rings, buffers of its own. For the
  // memory budget (workloads/memory.hpp), before anything is allocated. The default is the
  // tables every engine keeps: two queues of queue_depth operations per connection.
  virtual uint64_t engine_overhead_bytes(const EngineConfig& cfg) const {
    uint64_t conns = std::max<uint32_t>(cfg.max_conns, 1);
    uint64_t depth = std::bit_ceil(std::max<uint32_t>(cfg.queue_depth, 2));
    return conns * (2 * depth * sizeof(WorkReq) + 128);
  }
  // Threads beside each worker that the transport starts with these settings (io_uring SQPOLL:
  // a kernel thread per ring, polling a CPU). The server's policy caps them.
  virtual uint32_t extra_threads_per_worker() const { return 0; }
};

struct TransportEntry {
  // Name, summary and default come from the transport's declaration (mtperf_transport() in its
  // CMakeLists.txt) when transports() lists it; its entry function leaves them out.
  std::string_view name{};
  std::string_view summary{};
  bool is_default = false;
  // A transport that brings its own line (line.hpp): it runs over a link it builds between two
  // namespaces of its own, never over loopback or the host's adapters as they are. The hook
  // builds or finds that line and carries the family's own commands; nullptr for the others.
  // Transports of one family (clip and lane over the emulated ATM line) share one hook.
  const LineHook* line = nullptr;
  // A transport that runs tests against another tool's servers itself (foreign_peer.hpp:
  // `run --peer perftest -T rdma`); nullptr for the others.
  const ForeignPeerHook* foreign = nullptr;
  Caps caps;
  std::vector<OptionInfo> (*options)() = nullptr;
  ProbeResult (*probe)(const std::string& root) = nullptr;  // root: "/" or a fixture tree
  std::unique_ptr<Transport> (*create)(const TransportParams& params) = nullptr;
};

// Every transport compiled into this binary, in the order transports/CMakeLists.txt adds their
// folders. Generated from each folder's mtperf_transport() declaration, which gives the entry its
// name, summary and is_default; the folder's own entry function gives the rest.
std::span<const TransportEntry> transports();
// The entry named `name`; throws std::invalid_argument listing the known names.
const TransportEntry& find_transport(std::string_view name);
// Names of the transports compiled out of this build, with the reason (for `mtperf transports`).
std::vector<std::pair<std::string, std::string>> transports_not_compiled();

// The line hooks of the transports compiled in, each once, in the order of transports(): what
// `mtperf` offers as the transports' own commands, and the lines a --testbed name may belong to.
std::vector<const LineHook*> line_hooks();

// Checks params against the entry's options (parse_options, options.hpp): an unknown key or a
// value its key does not take throws std::invalid_argument, saying which and why.
void check_params(const TransportEntry& entry, const TransportParams& params);

}  // namespace mtperf
