#pragma once
// The server side of one control connection (see protocol.hpp for the message sequence).
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "control/link.hpp"
#include "control/metrics.hpp"
#include "control/protocol.hpp"
#include "control/server.hpp"
#include "control/session_log.hpp"
#include "workloads/runner.hpp"

namespace mtperf::control {

class ServerSession {
 public:
  // `admission`: the server's count of running tests, which this session joins once its TEST is
  // accepted (and leaves when it ends). `key`: read once, when the handshake starts. When the
  // session ends it logs one line through opts.log (control/session_log.hpp).
  ServerSession(int control_fd, const ServerOptions& opts, Admission& admission,
                const SharedKey& key);
  ~ServerSession();
  void run() noexcept;  // the whole exchange; never throws
  void abort();         // from another thread: unblock and free everything
  // Whether the handshake is over and the test admitted (no longer a pending connection).
  bool admitted() const { return state_.load() == State::admitted; }
  // From the server's thread: drops the connection if it is still pending (true), so that it
  // can no longer be admitted; false when it was admitted already.
  bool drop_if_pending();
  // What the session logged; read after run() returned.
  const TestLog& log() const { return log_; }
  // From any thread: the test's kind and its traffic so far, as its flows count it (the figures
  // the log ends with, once the test has ended); nothing before the test runs.
  std::optional<TrafficCounters> live() const;

 private:
  enum class State { pending, admitted, dropped };
  void exchange();
  // exchange's steps, after the handshake: each sets step_ for a refusal's log.
  std::unique_ptr<Transport> create_transport(const TestSpec& spec);
  // The test within policy and memory, and admitted beside the running tests.
  Admission::Ticket admit(const TestSpec& spec, Transport& transport, int64_t deadline_ns);
  // READY .. START: the flows, opened and connected.
  std::vector<std::unique_ptr<FlowSlot>> set_up_flows(const TestSpec& spec, Transport& transport);
  void start_runner(Runner& runner, const TestSpec& spec, std::mutex& send_mu);
  // STARTED .. DONE; a failure aborts the runner and counts what it moved.
  void await_done(Runner& runner, const TestSpec& spec, std::mutex& send_mu);
  void count(const SideResult& result);  // the server's figures into log_
  void let_go_of_runner();               // after count(): live() reports log_'s figures
  // HELLO .. TEST, all by deadline_ns: the test, authenticated (with a key) and validated.
  TestSpec handshake(int64_t deadline_ns);
  // WELCOME (with the key's challenge and the server's proof) .. AUTH; seals the link.
  std::string authenticate(const Message& hello, const std::string& key, nlohmann::json& welcome,
                           int64_t deadline_ns);
  Message receive(MsgType want, int64_t deadline_ns);
  // One listener per flow from the transport; their ports go to the client in READY.
  std::vector<std::unique_ptr<FlowSlot>> open_flows(const TestSpec& spec, Transport& transport,
                                                    uint64_t cookie, nlohmann::json& ports);
  // Each flow's connection, proven by the test's cookie; strangers are dropped and counted.
  // Reads START (into start_) too, as soon as it comes: the flows it names as not connected are
  // no longer waited for, and leave `flows` (log_.not_connected counts them).
  void accept_flows(const TestSpec& spec, std::vector<std::unique_ptr<FlowSlot>>& flows);
  void read_start(const TestSpec& spec, std::vector<bool>& given_up);

  int fd_;
  Link link_;  // fd_'s frames, sealed once both ends proved the key
  const ServerOptions& opts_;
  Admission& admission_;
  const SharedKey& key_;
  TestLog log_;
  std::atomic<State> state_{State::pending};
  std::string_view step_ = "handshake";  // TestLog::refused_at, should the exchange fail now
  std::atomic<Runner*> runner_{nullptr};
  // live(): the running test's kind, then its final counts; runner_ changes under it too, so
  // that live() never reads a runner that has gone.
  mutable std::mutex live_mu_;
  std::optional<TrafficCounters> live_;
  std::atomic<bool> aborted_{false};
  std::string peer_;
  std::vector<std::unique_ptr<FlowListener>> listeners_;  // during set-up only
  uint64_t rejected_ = 0;         // data connections dropped for a wrong cookie or flow id
  std::optional<Message> start_;  // the client's START, read during accept_flows()
};

}  // namespace mtperf::control
