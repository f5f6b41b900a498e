#include "bindings/workers.hpp"

#include <stdexcept>
#include <tuple>
#include <typeinfo>

// CompiledEngines: the engine types of the transports compiled in, generated from their
// declarations (cmake/MtperfTransport.cmake), so that a transport declared with an engine is
// instantiated here without anyone listing it; a declared engine type that does not satisfy
// EngineType stops the build.
#include "bindings/engine_list.hpp"
#include "transports/api/engine_host.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/worker.hpp"

namespace mtperf {
namespace {

// Runs the job over engine type E when the transport hosts one; false when it does not.
template <EngineType E>
bool run_over(Transport& transport, WorkerJob& job) {
  auto* host = dynamic_cast<EngineHost<E>*>(&transport);
  if (!host) return false;
  std::unique_ptr<E> engine = host->make_engine(engine_config(job, transport.caps()));
  Worker<E>(*engine, job).run();
  host->engine_done(*engine);
  return true;
}

template <EngineType... E>
bool run_over_any(std::tuple<E...>*, Transport& transport, WorkerJob& job) {
  return (run_over<E>(transport, job) || ...);
}

template <EngineType... E>
bool hosts_any(std::tuple<E...>*, const Transport& transport) {
  return (dynamic_cast<const EngineHost<E>*>(&transport) || ...);
}

}  // namespace

void run_worker(Transport& transport, WorkerJob& job) {
  if (run_over_any(static_cast<CompiledEngines*>(nullptr), transport, job)) return;
  throw std::logic_error(std::string("bindings: no workload instantiation for the engine of ") +
                         typeid(transport).name());
}

bool runs_over(const Transport& transport) {
  return hosts_any(static_cast<CompiledEngines*>(nullptr), transport);
}

}  // namespace mtperf
