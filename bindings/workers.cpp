#include "bindings/workers.hpp"

#include <stdexcept>
#include <typeinfo>

#include "transports/api/engine_host.hpp"
#include "transports/socket/socket_engine.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/worker.hpp"
#ifdef MTPERF_HAVE_URING
#include "transports/uring/uring_engine.hpp"
#endif
#ifdef MTPERF_HAVE_RDMA
#include "transports/rdma/engine.hpp"
#endif

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

}  // namespace

void run_worker(Transport& transport, WorkerJob& job) {
  if (run_over<SocketEngine>(transport, job)) return;
#ifdef MTPERF_HAVE_URING
  if (run_over<UringEngine>(transport, job)) return;
#endif
#ifdef MTPERF_HAVE_RDMA
  if (run_over<rdma::RdmaEngine>(transport, job)) return;
#endif
  throw std::logic_error(std::string("bindings: no workload instantiation for the engine of ") +
                         typeid(transport).name());
}

}  // namespace mtperf
