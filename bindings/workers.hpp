#pragma once
// Where each transport's engine meets the workload: the workload template (workloads/worker.hpp)
// instantiated for every engine type compiled in. The one folder that sees both sides, so that
// transports/ knows nothing of workloads and workloads/ nothing of any transport's engine.
#include "transports/api/registry.hpp"
#include "workloads/job.hpp"

namespace mtperf {

// A WorkerDriver (workloads/job.hpp) for every transport in the registry: asks the transport
// which EngineHost it is (transports/api/engine_host.hpp), has it build the worker's engine
// (sized by engine_config), runs the worker's flows over it to the end and hands the engine back
// for the transport's report. Throws std::runtime_error when the engine cannot be set up, and
// std::logic_error for a transport whose engine type has no instantiation here.
void run_worker(Transport& transport, WorkerJob& job);

// Whether run_worker has an instantiation for the transport's engine type.
bool runs_over(const Transport& transport);

}  // namespace mtperf
