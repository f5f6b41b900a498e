#pragma once
// The embedded default: an mtperf server on 127.0.0.1 (a free port) in this process, for runs
// without -H. Stopped and joined on destruction.
#include <string>
#include <thread>

#include "control/server.hpp"

namespace mtperf::cli {

class EmbeddedServer {
 public:
  EmbeddedServer() : server_(make_options()), thread_([this] { server_.run(); }) {}
  ~EmbeddedServer() {
    server_.stop();
    thread_.join();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server_.port()); }

 private:
  static control::ServerOptions make_options() {
    control::ServerOptions o;
    o.bind = "127.0.0.1";
    o.port = 0;
    return o;
  }
  control::Server server_;
  std::thread thread_;
};

}  // namespace mtperf::cli
