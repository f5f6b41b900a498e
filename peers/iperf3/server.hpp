#pragma once
// `mtperf serve --iperf3 [ADDRESS:]PORT`: answers unmodified iperf3 3.x clients (TCP and UDP:
// plain, -R, --bidir, -P, -l, -w, -C, -M, -N, -t, -n, -k, -O, -b, -u with 32- or 64-bit
// counters, --get-server-output), many at once where iperf3's own server takes one.
//
// One thread accepts and reads each connection's cookie (every connection has the handshake
// deadline for it, at most max_pending wait at once, one more drops the oldest): a cookie that
// names a test waiting for its streams makes the connection one of them, any other starts a
// test. Each test then runs in a thread of its own (server_machine.hpp over the control
// connection, a poll loop over its streams), admitted under the mtperf server's limits (the
// same Admission: --max-sessions, the memory budget) before a buffer is allocated; one that does
// not fit is answered ACCESS_DENIED, iperf3's "the server is busy". Every step until TEST_START
// shares the handshake deadline, every step after TEST_END has one of its own, and a running
// test whose client goes quiet for as long is cut off.
#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "control/admission.hpp"
#include "control/allow.hpp"
#include "control/session_log.hpp"
#include "peers/iperf3/protocol.hpp"
#include "transports/api/transport.hpp"

namespace mtperf::iperf3 {

struct ServeOptions {
  std::string bind = "0.0.0.0";
  uint16_t port = kDefaultPort;      // 0: the kernel picks (read it back with port())
  std::vector<control::Cidr> allow;  // empty: any
  uint32_t max_pending = 32;         // connections before their cookie is read
  int handshake_timeout_ms = 10000;
  uint64_t max_memory = 1ull << 30;  // one test's buffers
  // Called once for each connection that ends as a test or a refusal (from the tests' threads
  // and the accept thread at once): it must be thread-safe.
  std::function<void(const control::TestLog&)> done;
};

class Server {
 public:
  // Binds and listens, and starts the accept thread; throws std::runtime_error when it cannot.
  Server(ServeOptions opts, control::Admission& admission);
  ~Server();  // ends every test (their connections shut down) and joins every thread
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const { return port_; }

  struct Test;  // one client's test (server.cpp)

 private:
  struct Pending;
  struct Accepting;  // the accept thread's pending connections
  void accept_loop();
  void read_cookies(Accepting& a);
  void accept_new(Accepting& a);
  bool allowed_peer(int fd, std::string& peer) const;
  void refuse_pending(const Pending& q, std::string_view at, std::string why);
  // A connection with a whole cookie: a running test's stream, or a new test's control connection.
  void dispatch(int fd, uint64_t seq, const Cookie& cookie, const std::string& peer);
  // Hands a stream to the test its cookie names (true), or counts the tests still in their
  // handshake (false: the connection is no test's stream). Under mu_.
  bool give_stream(int fd, uint64_t seq, const Cookie& cookie, uint32_t& handshaking);
  std::unique_ptr<Test> new_test(int fd, const Cookie& cookie, const std::string& peer);
  // Logs a connection refused at step `at` through opts_.done.
  void refused(const std::string& peer, std::string_view at, std::string why);
  void reap(bool all);

  ServeOptions opts_;
  control::Admission& admission_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::list<std::unique_ptr<Test>> tests_;  // under mu_
  // UDP streams connect to the same port number: an unconnected socket bound to it takes each
  // stream's 4-byte greeting, is connected to its sender and replaced (iperf3's scheme). One test
  // at a time sets its UDP streams up (udp_mu_), so that a greeting is never taken by another.
  SockAddr where_;
  std::timed_mutex udp_mu_;
  int udp_fd_ = -1;  // under udp_mu_; -1: UDP cannot be served here
  std::thread thread_;
};

}  // namespace mtperf::iperf3
