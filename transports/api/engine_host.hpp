#pragma once
// How a transport hands its engine to the workload without knowing the workload: a Transport
// that runs workers over engine type E also derives from EngineHost<E>. bindings/ asks each
// Transport, once per worker on the set-up path, which EngineHost it is, and runs the workload
// template over that engine; the data path then has no virtual call.
#include <memory>

#include "transports/api/transport.hpp"

namespace mtperf {

template <EngineType E>
class EngineHost {
 public:
  virtual ~EngineHost() = default;
  // Builds the engine of worker cfg.worker, sized by cfg, before the timed phase. Throws
  // std::runtime_error naming what could not be set up.
  virtual std::unique_ptr<E> make_engine(const EngineConfig& cfg) = 0;
  // After the worker's flows have ended, from the worker's thread: what the engine counted or
  // settled on, for the transport's effective_settings().
  virtual void engine_done(const E&) {}
};

}  // namespace mtperf
