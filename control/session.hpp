#pragma once
// The server side of one control connection (see protocol.hpp for the message sequence).
#include <atomic>
#include <memory>
#include <string>

#include "control/server.hpp"
#include "workloads/runner.hpp"

namespace mtperf::control {

class ServerSession {
 public:
  ServerSession(int control_fd, const ServerOptions& opts);
  ~ServerSession();
  void run() noexcept;  // the whole exchange; never throws
  void abort();         // from another thread: unblock and free everything

 private:
  void exchange();
  // One listener per flow from the transport; their ports go to the client in READY.
  std::vector<std::unique_ptr<FlowSlot>> open_flows(const TestSpec& spec, Transport& transport,
                                                    uint64_t cookie, nlohmann::json& ports);
  // Each flow's connection, proven by the test's cookie; strangers are dropped and counted.
  void accept_flows(std::vector<std::unique_ptr<FlowSlot>>& flows);

  int fd_;
  const ServerOptions& opts_;
  std::atomic<Runner*> runner_{nullptr};
  std::atomic<bool> aborted_{false};
  std::string peer_;
  std::vector<std::unique_ptr<FlowListener>> listeners_;  // during set-up only
  uint64_t rejected_ = 0;  // data connections dropped for a wrong cookie or flow id
};

}  // namespace mtperf::control
