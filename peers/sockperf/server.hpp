#pragma once
// `mtperf serve --sockperf [ADDRESS:]PORT`: answers unmodified sockperf clients (`sockperf pp`,
// `ul`, `tp`, over TCP and UDP on the same port), as `sockperf sr` does: a client message that
// asks for a pong comes back byte for byte with the client flag cleared; the others are counted
// silently; warm-up messages are counted apart and never answered (protocol.hpp).
//
// As sockperf sr, a message is taken by one blocking receive and answered by one send, with no
// poll() between: each TCP client has a thread of its own, UDP one thread, and an acceptor takes
// the connections. At most max_clients TCP connections at once (more are closed at once,
// logged), each with its buffers allocated when it connects. A header with a length outside
// 14..65507, a connection silent for idle_timeout_ms, or a pong the client does not take within
// send_timeout_ms ends that client, logged with its address and the reason; the others go on.
//
// Under `mtperf serve` it keeps serve's rules: a TCP client from outside --allow is closed before
// a byte is read, and a UDP datagram from outside it dropped unanswered; each TCP client is a
// session of serve's Admission (--max-sessions, the memory budget: its message buffer), refused
// when it does not fit; and every client that ends or is refused is a control::TestLog with
// protocol "sockperf" (serve logs it and counts it in /metrics): a TCP client when its
// connection ends, a UDP client (a source address) once it has been silent for udp_idle_ms or
// the server stops. Its workload is rr when it asked for pongs, stream otherwise; bytes_recv
// are the messages it sent that were counted, bytes_sent the pongs, transactions the pongs.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "control/admission.hpp"
#include "control/allow.hpp"
#include "control/session_log.hpp"

namespace mtperf::sockperf {

struct ServeOptions {
  std::string bind = "0.0.0.0";      // numeric address
  uint16_t port = 11111;             // 0: the kernel picks (port() reads it back)
  uint32_t max_clients = 64;         // TCP connections at once
  int idle_timeout_ms = 60000;       // a TCP client silent this long is closed
  int send_timeout_ms = 1000;        // a pong the client does not take in this time ends it
  int udp_idle_ms = 2000;            // a UDP client silent this long has ended (its TestLog)
  uint32_t max_udp_clients = 1024;   // UDP source addresses followed at once (the oldest ends)
  std::vector<control::Cidr> allow;  // empty: any
  // serve's sessions: each TCP client holds a ticket for its message buffer; null: max_clients
  // alone bounds them. Outlives the server.
  control::Admission* admission = nullptr;
  // Called from a serving thread (one call at a time) for each client that ended or was
  // refused. Without it, the client's log line (control::format_test_log) goes to `log`.
  std::function<void(const control::TestLog&)> done;
  // Called from a serving thread (one call at a time) with other lines (datagrams dropped);
  // may be empty.
  std::function<void(const std::string&)> log;
};

// What the server counted since it started, as sockperf sr counts: messages with the client
// flag and no warm-up flag. Read from any thread.
struct ServeCounts {
  std::atomic<uint64_t> messages{0};     // counted messages (sockperf sr's "Total N messages")
  std::atomic<uint64_t> pongs{0};        // of them, answered
  std::atomic<uint64_t> warmup{0};       // warm-up messages, neither counted nor answered
  std::atomic<uint64_t> connections{0};  // TCP clients accepted
  std::atomic<uint64_t> closed{0};       // of them, gone (left, or ended for a reason logged)
  std::atomic<uint64_t> rejected{0};     // clients or datagrams dropped for bad input or limits
  std::atomic<uint64_t> not_allowed{0};  // of them, from outside --allow (connections, datagrams)
};

class Server {
 public:
  // Binds TCP and UDP on bind:port and starts serving; throws std::runtime_error naming the
  // address when it cannot.
  explicit Server(ServeOptions o);
  ~Server();  // stop()s and joins
  uint16_t port() const;
  const ServeCounts& counts() const;
  // Ends the serving threads within 100 ms; safe from a signal handler (stores an atomic).
  void stop() noexcept;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mtperf::sockperf
