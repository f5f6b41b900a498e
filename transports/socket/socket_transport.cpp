#include <fstream>

#include "transports/api/engine_host.hpp"
#include "transports/socket/register.hpp"
#include "transports/socket/socket_engine.hpp"

namespace mtperf {
namespace {

Caps socket_caps() {
  Caps c;
  // Four sends queued per stream (engine_config.cpp): one worker turn (a clock read, a poll)
  // carries four sends instead of one.
  c.max_outstanding = 32;
  // A send is done when the kernel has copied it (or failed): the engine owes the workload no
  // completion for it, and rr saves one completion and its dispatch per transaction and side.
  c.unsignaled_sends = true;
  c.peer_greeting = true;
  return c;
}

class SocketTransport final : public inet::SocketSetup, public EngineHost<SocketEngine> {
 public:
  Caps caps() const override { return socket_caps(); }
  std::unique_ptr<SocketEngine> make_engine(const EngineConfig& cfg) override {
    return std::make_unique<SocketEngine>(cfg);
  }
};

std::vector<OptionInfo> socket_options() {
  return {};
}

ProbeResult socket_probe(const std::string& root) {
  ProbeResult r;
  r.usable = true;
  r.features = {"tcp", std::string(kFeatureUdp), "epoll"};
  std::ifstream mptcp(root + "/proc/sys/net/mptcp/enabled");
  int enabled = 0;
  if (mptcp >> enabled && enabled == 1) r.features.push_back("mptcp");
  return r;
}

std::unique_ptr<Transport> socket_create(const TransportParams&) {
  return std::make_unique<SocketTransport>();
}

}  // namespace

const TransportEntry& socket_transport_entry() {
  static const TransportEntry entry{
      .caps = socket_caps(),
      .options = socket_options,
      .probe = socket_probe,
      .create = socket_create,
  };
  return entry;
}

}  // namespace mtperf
