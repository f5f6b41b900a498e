#pragma once
// `mtperf serve --metrics ADDR:PORT`: the server's counters in the Prometheus text format
// (version 0.0.4) on GET /metrics, over plain HTTP/1.0, one request a connection.
//
// One thread answers the requests one after another; each has a deadline of 2 s for its request
// (at most 8 KiB) and 2 s for the answer, so a slow scraper holds the endpoint no longer than that
// and never touches the tests.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace mtperf::control {

// The traffic of one kind of test (transport, workload, protocol) as the server's flows counted
// it, warm-up included: the tests that ended and, as far as they have got, those running now.
struct TrafficCounters {
  std::string transport, workload, proto;
  uint64_t bytes_sent = 0, bytes_recv = 0, transactions = 0;
  std::string protocol{};  // a peer protocol's tests (peers/: "iperf3"); empty: mtperf's own
};

// What the server has turned away and served (Server::counters()), for tests, the log and the
// metrics.
struct ServerCounters {
  uint64_t tests_ok = 0, tests_error = 0, tests_refused = 0;  // connections ended, by result
  uint64_t refused = 0;                  // connections from outside --allow, closed at once
  uint64_t pending_dropped = 0;          // pending connections dropped to make room for a newer one
  uint32_t pending = 0;                  // connections in their handshake now
  uint32_t running = 0;                  // tests running now
  uint64_t memory_in_use = 0;            // bytes the running tests hold of the budget below
  uint64_t memory_budget = 0;            // --max-total-memory
  std::vector<TrafficCounters> traffic;  // by kind, in the order first seen
  // Refused connections by the step that refused them (TestLog::refused_at), in the order first
  // seen; they add up to tests_refused.
  std::vector<std::pair<std::string, uint64_t>> refusals;
};

// The exposition text, HELP and TYPE lines included.
std::string format_metrics(const ServerCounters& m);

class MetricsEndpoint {
 public:
  // Listens on `host_port` ("ADDR:PORT"; port 0: the kernel picks); `read` is called on the
  // endpoint's thread for each request. Throws std::runtime_error when it cannot listen.
  MetricsEndpoint(const std::string& host_port, std::function<ServerCounters()> read);
  ~MetricsEndpoint();  // stops within 200 ms and joins
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;
  uint16_t port() const { return port_; }

 private:
  void serve();
  void answer(int fd);

  std::function<ServerCounters()> read_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace mtperf::control
