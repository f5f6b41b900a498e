#pragma once
// The transport registry: each transport is an entry {name, summary, caps, options, probe,
// factory}. The core never asks which transport it holds; it uses the Caps it was given and
// the Transport object the factory made.
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "transports/api/transport.hpp"

namespace mtperf {

struct WorkerJob;  // workloads/job.hpp: the flows one worker thread runs

// Transport-specific options, "key" -> "value", carried in the test request so that the server
// uses the same settings. Each transport validates its own keys in create().
using TransportParams = std::map<std::string, std::string>;

struct OptionInfo {
  std::string key;
  std::string default_value;
  std::string help;
};

struct ProbeResult {
  bool usable = false;
  std::string why;                    // when not usable: what is missing and how to get it
  std::vector<std::string> features;  // detected optional features, by name
};

// One transport instance per test and process. Setup path: virtual calls are fine here.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual Caps caps() const = 0;
  // Runs one worker's flows to the end: builds the engine, instantiates the workload over it.
  // Throws std::runtime_error when the engine cannot be set up.
  virtual void run_worker(WorkerJob& job) = 0;
  // What the transport actually uses after probing and fallbacks, for the report.
  virtual std::map<std::string, std::string> effective_settings() const { return {}; }
};

struct TransportEntry {
  std::string_view name;
  std::string_view summary;
  bool is_default = false;
  Caps caps;
  std::vector<OptionInfo> (*options)() = nullptr;
  ProbeResult (*probe)(const std::string& root) = nullptr;  // root: "/" or a fixture tree
  std::unique_ptr<Transport> (*create)(const TransportParams& params) = nullptr;
};

// Every transport compiled into this binary.
std::span<const TransportEntry> transports();
// The entry named `name`; throws std::invalid_argument listing the known names.
const TransportEntry& find_transport(std::string_view name);
// Names of the transports compiled out of this build, with the reason (for `mtperf transports`).
std::vector<std::pair<std::string, std::string>> transports_not_compiled();

// Checks params against the entry's options: unknown keys throw, naming the key and the list.
void check_params(const TransportEntry& entry, const TransportParams& params);

}  // namespace mtperf
