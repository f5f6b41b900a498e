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
  std::vector<std::unique_ptr<FlowSlot>> open_flows(const TestSpec& spec, nlohmann::json& ports);
  void accept_flows(const TestSpec& spec, std::vector<std::unique_ptr<FlowSlot>>& flows,
                    uint64_t cookie);

  int fd_;
  const ServerOptions& opts_;
  std::atomic<Runner*> runner_{nullptr};
  std::atomic<bool> aborted_{false};
  std::string peer_;
};

}  // namespace mtperf::control
