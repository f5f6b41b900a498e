#pragma once
// `mtperf serve`: accepts control connections and runs each client's test in its own threads.
//
// A connection is pending from its accept until its TEST is authenticated, valid, within the
// server's policy and admitted; then it is a running test. Pending connections have one
// absolute deadline for the whole handshake (handshake_timeout_ms) and are bounded apart from
// the tests (max_pending; when one more arrives, the oldest pending is dropped), so idle or slow
// connections never take a test's place and never hold anyone else up. Running tests are
// bounded by max_sessions and, together, by max_total_memory; a vanished client frees
// everything its test had at once.
#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "control/admission.hpp"
#include "control/allow.hpp"
#include "control/metrics.hpp"
#include "control/session_log.hpp"
#include "platform/file_limit.hpp"

namespace mtperf::control {

// Writes one log line and a newline to stderr (which systemd sends to the journal).
void log_to_stderr(const std::string& line);

struct ServerOptions {
  std::string bind = "0.0.0.0";
  uint16_t port = 12865;  // 0: the kernel picks (read it back with port())
  std::string key;        // pre-shared key; empty = no authentication
  // A file holding the key instead (read_key_file); read again by Server::reload_key().
  std::string key_file;
  std::vector<Cidr> allow;           // networks clients may connect from; empty = any
  uint32_t max_sessions = 16;        // tests running at once
  uint32_t max_pending = 32;         // connections still in their handshake
  int handshake_timeout_ms = 10000;  // from accept to an accepted TEST, whatever the client sends

  // What one test may make the server spend (checked before anything is set up; policy.hpp).
  // Data connections, each with its own listener; 0: what the file limit allows (a descriptor
  // a flow: its listener closes when the connection is accepted), up to kLimits.max_flows_total.
  // The memory budget bounds a test apart (max_memory).
  uint32_t max_flows = 0;
  uint32_t max_threads = 64;       // worker threads
  uint32_t max_extra_threads = 0;  // transport threads beside the workers (io_uring SQPOLL)
  std::vector<int> cpus;           // CPUs a test may pin workers to; empty = any online CPU
  uint64_t max_memory = 0;         // bytes per test (workloads/memory.hpp); 0 = the default
  uint64_t max_total_memory = 0;   // bytes for all running tests together; 0 = the default
  std::string proc_root = "/";     // where the host's limits are read (tests: a fixture tree)
  bool verbose = false;
  // "ADDRESS:PORT" of the Prometheus endpoint (control/metrics.hpp); empty = none.
  std::string metrics;
  // Where the server's log lines go, one call a line (no newline): a line per connection when
  // it ends (control/session_log.hpp) and one per key reload. Called from the sessions' threads at
  // once; it must be thread-safe.
  std::function<void(const std::string&)> log = log_to_stderr;
};

// The key in `path`, leading and trailing whitespace trimmed. Throws std::runtime_error when the
// file cannot be read, is group or world readable (or writable), is over 4 KiB or holds no key.
std::string read_key_file(const std::string& path);
// A command's pre-shared key: read_key_file(path) when a path is given, else the environment's
// MTPERF_KEY (whitespace trimmed), else "". Never from the command line: argv shows in ps, in
// /proc and in a scheduler's stored job script.
std::string load_key(const std::string& path);

// The pre-shared key, replaced whole by a reload while sessions read it. Thread-safe.
class SharedKey {
 public:
  std::string get() const {
    std::lock_guard lock(mu_);
    return key_;
  }
  void set(std::string key) {
    std::lock_guard lock(mu_);
    key_ = std::move(key);
  }

 private:
  mutable std::mutex mu_;
  std::string key_;
};

// The default of ServerOptions::max_flows under this file limit.
uint32_t default_max_flows(const FileLimit& limit);

class Server {
 public:
  explicit Server(ServerOptions opts);  // binds and listens; throws when it cannot
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const { return port_; }
  // The --metrics endpoint's port; 0 without one.
  uint16_t metrics_port() const { return metrics_ ? metrics_->port() : 0; }
  const ServerOptions& options() const { return opts_; }
  // Serves until stop() (from any thread or a signal handler flag).
  void run();
  void stop();
  ServerCounters counters() const;
  // Tests served on a peer protocol's port beside this one (peers/, e.g. mtperf serve --iperf3):
  // they take their place and memory from the same admission(), and each one's end is counted
  // (record_peer_test: the counters, /metrics by its TestLog::protocol) and logged.
  Admission& admission() { return admission_; }
  void record_peer_test(const TestLog& log);
  // Reads options().key_file again and swaps the key in: connections that start their handshake
  // from now on need the new key; running tests and handshakes under way are not touched. Throws
  // std::runtime_error (the old key stays) when the file cannot be used or there is none.
  void reload_key();
  // Async-signal-safe (only stores an atomic flag): run() calls reload_key() within 200 ms and
  // logs what came of it.
  void request_reload() { reload_.store(true); }

 private:
  struct Session;
  void reap(bool all);
  void start_session(int fd);
  // A connection's end into the counters; `ended`, its session, is marked finished under the
  // same lock, so that counters() counts its traffic once.
  void record(const TestLog& log, Session* ended = nullptr);

  ServerOptions opts_;
  Admission admission_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: a session ended, free it now
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> reload_{false};
  SharedKey key_;
  mutable std::mutex mu_;
  std::list<std::unique_ptr<Session>> sessions_;  // in accept order
  std::atomic<uint64_t> refused_{0}, pending_dropped_{0};
  std::atomic<uint64_t> tests_ok_{0}, tests_error_{0}, tests_refused_{0};
  std::vector<TrafficCounters> traffic_;  // under mu_: the tests that ended, by kind
  std::vector<std::pair<std::string, uint64_t>> refusals_;  // under mu_: by TestLog::refused_at
  std::unique_ptr<MetricsEndpoint> metrics_;                // last: it reads the counters above
};

// The options with their defaults filled in from the host (max_memory, max_total_memory from
// <proc_root>/proc/meminfo). Throws std::invalid_argument naming a bad combination (a key and
// a key file both).
ServerOptions resolved(ServerOptions o);

}  // namespace mtperf::control
