#pragma once
// An mtperf server on 127.0.0.1 (a free port) on a thread of this process: the embedded default
// of `mtperf run` without -H, and the server of in-process tests. Stopped and joined on
// destruction.
#include <string>
#include <thread>

#include "control/server.hpp"

namespace mtperf::control {

class LocalServer {
 public:
  // `opts`: everything but the address, which is always 127.0.0.1 port 0.
  explicit LocalServer(ServerOptions opts = {})
      : server_(on_loopback(std::move(opts))), thread_([this] { server_.run(); }) {}
  ~LocalServer() {
    server_.stop();
    thread_.join();
  }
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(server_.port()); }

 private:
  static ServerOptions on_loopback(ServerOptions o) {
    o.bind = "127.0.0.1";
    o.port = 0;
    return o;
  }
  Server server_;
  std::thread thread_;
};

}  // namespace mtperf::control
