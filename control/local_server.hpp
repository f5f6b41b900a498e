#pragma once
// An mtperf server on 127.0.0.1 (a free port) on a thread of this process: the embedded default
// of `mtperf run` without -H, and the server of in-process tests. Stopped and joined on
// destruction.
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "control/client.hpp"
#include "control/server.hpp"
#include "platform/netns.hpp"
#include "workloads/spec.hpp"

namespace mtperf::control {

// The options of a server that serves only its user's own tests (the in-process server of
// `mtperf run` without -H, a testbed's far host): the protocol's own bounds instead of a shared
// server's policy, the user's memory budget (0: the default), and no log.
inline ServerOptions own_server_options(uint64_t max_memory = 0) {
  ServerOptions o;
  o.max_flows = kLimits.max_flows_total;
  o.max_threads = kLimits.max_threads;
  o.max_extra_threads = kLimits.max_threads;
  o.max_memory = max_memory;
  // Its user reads the test's own report: no log line a test on stderr.
  o.log = [](const std::string&) {};
  return o;
}

// Points a client at a server of this process's own (LocalServer, a testbed's far host): its
// connections count against this process's file limit too, and it asks no key, so a key the user
// keeps in MTPERF_KEY for the servers elsewhere is not offered to it.
inline void aim_at_own_server(ClientOptions& c, std::string address) {
  c.server = std::move(address);
  c.server_in_process = true;
  c.key.clear();
}

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
  Server& server() { return server_; }

 private:
  static ServerOptions on_loopback(ServerOptions o) {
    o.bind = "127.0.0.1";
    o.port = 0;
    return o;
  }
  Server server_;
  std::thread thread_;
};

// An mtperf server on a thread inside a network namespace: its sessions' threads are born there
// too, so every socket the server side makes belongs to that host.
class NamespaceServer {
 public:
  explicit NamespaceServer(const std::string& ns) {
    std::promise<uint16_t> ready;
    auto port = ready.get_future();
    thread_ = std::thread([this, ns, &ready] {
      try {
        enter_netns(ns);
        control::ServerOptions o = control::own_server_options();
        o.bind = "0.0.0.0";  // every address of the far host, and only of it
        o.port = 0;
        server_.emplace(o);
        ready.set_value(server_->port());
      } catch (...) {
        ready.set_exception(std::current_exception());
        return;
      }
      server_->run();
    });
    try {
      port_ = port.get();
    } catch (...) {
      thread_.join();
      throw;
    }
  }
  ~NamespaceServer() {
    server_->stop();
    thread_.join();
  }
  NamespaceServer(const NamespaceServer&) = delete;
  NamespaceServer& operator=(const NamespaceServer&) = delete;

  uint16_t port() const { return port_; }

 private:
  std::optional<control::Server> server_;
  std::thread thread_;
  uint16_t port_ = 0;
};

}  // namespace mtperf::control
