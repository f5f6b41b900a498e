#pragma once
// A Transport with no set-up and no engine, for tests whose workers are scripted (the runner's
// clock, the bindings' dispatch): listen and connect make nothing, caps are the defaults unless
// given.
#include <memory>

#include "transports/api/registry.hpp"

namespace mtperf::test {

class NoSetupTransport : public Transport {
 public:
  explicit NoSetupTransport(Caps caps = {}) : caps_(caps) {}
  Caps caps() const override { return caps_; }
  std::unique_ptr<FlowListener> listen(const SockAddr&, const FlowSetup&) override {
    return nullptr;
  }
  std::unique_ptr<Endpoint> connect(const SockAddr&, const SockAddr&, const FlowSetup&,
                                    int64_t) override {
    return nullptr;
  }

 private:
  Caps caps_;
};

}  // namespace mtperf::test
