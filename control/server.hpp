#pragma once
// `mtperf serve`: accepts control connections and runs each client's test in its own threads.
// Several clients at once; an idle or vanished client costs nothing for long (every wait has a
// deadline) and frees everything it had at once.
#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace mtperf::control {

struct ServerOptions {
  std::string bind = "0.0.0.0";
  uint16_t port = 12865;  // 0: the kernel picks (read it back with port())
  std::string key;        // pre-shared key; empty = no authentication
  uint32_t max_sessions = 16;
  int idle_timeout_ms = 10000;  // a client must say something within this
  bool verbose = false;
};

class Server {
 public:
  explicit Server(ServerOptions opts);  // binds and listens; throws when it cannot
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const { return port_; }
  // Serves until stop() (from any thread or a signal handler flag).
  void run();
  void stop();

 private:
  struct Session;
  void reap(bool all);

  ServerOptions opts_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::list<std::unique_ptr<Session>> sessions_;
};

}  // namespace mtperf::control
