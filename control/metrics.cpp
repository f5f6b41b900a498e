#include "control/metrics.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string_view>

#include "control/protocol.hpp"
#include "platform/clock.hpp"
#include "transports/api/control_socket.hpp"

namespace mtperf::control {
namespace {

constexpr int kRequestTimeoutMs = 2000;
constexpr size_t kMaxRequestBytes = 8192;

void add(std::string& out, std::string_view name, std::string_view type, std::string_view help,
         uint64_t value, std::string_view labels = "") {
  std::string n(name);
  if (labels.empty() || out.find("# TYPE " + n + " ") == std::string::npos) {
    out += "# HELP " + n + " " + std::string(help) + "\n";
    out += "# TYPE " + n + " " + std::string(type) + "\n";
  }
  out += n + std::string(labels) + " " + std::to_string(value) + "\n";
}

// A label's value as the text format wants it: backslash, quote and newline escaped.
std::string label_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Waits for `events` on fd until the deadline; false when it passed or the wait failed.
bool wait_for(int fd, short events, int64_t deadline_ns) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, ms_until(deadline_ns));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

}  // namespace

std::string format_metrics(const ServerCounters& m) {
  std::string out;
  const char* tests = "connections that ended, by result (ok, error: admitted and failed, refused)";
  add(out, "mtperf_serve_tests_total", "counter", tests, m.tests_ok, "{result=\"ok\"}");
  add(out, "mtperf_serve_tests_total", "counter", tests, m.tests_error, "{result=\"error\"}");
  add(out, "mtperf_serve_tests_total", "counter", tests, m.tests_refused, "{result=\"refused\"}");
  struct Series {
    const char* name;
    const char* help;
    uint64_t TrafficCounters::*value;
  };
  static constexpr Series kTraffic[] = {
      {"mtperf_serve_bytes_sent_total",
       "bytes the server's flows sent, warm-up included, running tests so far",
       &TrafficCounters::bytes_sent},
      {"mtperf_serve_bytes_received_total",
       "bytes the server's flows received, warm-up included, running tests so far",
       &TrafficCounters::bytes_recv},
      {"mtperf_serve_transactions_total",
       "request/response transactions the server's flows completed, running tests so far",
       &TrafficCounters::transactions},
  };
  for (const Series& s : kTraffic) {
    for (const TrafficCounters& t : m.traffic) {
      // A peer protocol's tests (peers/) name their protocol where mtperf's name a transport.
      std::string labels = t.protocol.empty() ? "{transport=\"" + label_value(t.transport) + "\","
                                              : "{protocol=\"" + label_value(t.protocol) + "\",";
      labels +=
          "workload=\"" + label_value(t.workload) + "\",proto=\"" + label_value(t.proto) + "\"}";
      add(out, s.name, "counter", s.help, t.*s.value, labels);
    }
  }
  for (const auto& [step, count] : m.refusals) {
    add(out, "mtperf_serve_refusals_total", "counter",
        "refused connections by the step that refused them (allow, pending, handshake, auth, test, "
        "transport, limits, busy)",
        count, "{reason=\"" + label_value(step) + "\"}");
  }
  add(out, "mtperf_serve_tests_running", "gauge", "tests running now", m.running);
  add(out, "mtperf_serve_connections_pending", "gauge", "connections in their handshake now",
      m.pending);
  add(out, "mtperf_serve_memory_in_use_bytes", "gauge",
      "memory the running tests hold of the server's budget", m.memory_in_use);
  add(out, "mtperf_serve_memory_budget_bytes", "gauge",
      "memory the server gives all tests at once (--max-total-memory)", m.memory_budget);
  return out;
}

MetricsEndpoint::MetricsEndpoint(const std::string& host_port, std::function<ServerCounters()> read)
    : read_(std::move(read)) {
  // A port is required: "ADDRESS:PORT" or "[V6]:PORT" (0: the kernel picks).
  const size_t colon = host_port.rfind(':'), bracket = host_port.rfind(']');
  if (colon == std::string::npos || (bracket != std::string::npos && colon < bracket) ||
      (bracket == std::string::npos && host_port.find(':') != colon)) {
    throw std::runtime_error("--metrics " + host_port + ": give ADDRESS:PORT ([V6]:PORT)");
  }
  SockAddr where = control_socket::resolve(host_port, 0);
  listen_fd_ = control_socket::listen(where, 16);
  port_ = control_socket::local_address(listen_fd_).port();
  thread_ = std::thread([this] { serve(); });
}

MetricsEndpoint::~MetricsEndpoint() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void MetricsEndpoint::serve() {
  while (!stop_.load()) {
    int fd = control_socket::accept(listen_fd_, 200);
    if (fd < 0) continue;
    answer(fd);
    ::close(fd);
  }
}

void MetricsEndpoint::answer(int fd) {
  const int64_t deadline = deadline_in(kRequestTimeoutMs);
  std::string request;
  char buf[1024];
  while (request.find("\r\n\r\n") == std::string::npos &&
         request.find("\n\n") == std::string::npos) {
    if (request.size() > kMaxRequestBytes || !wait_for(fd, POLLIN, deadline)) return;
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return;
    request.append(buf, size_t(n));
  }
  std::string status = "200 OK", type = "text/plain; version=0.0.4; charset=utf-8", body;
  if (request.rfind("GET /metrics ", 0) == 0 || request.rfind("GET /metrics?", 0) == 0) {
    body = format_metrics(read_());
  } else if (request.rfind("GET ", 0) == 0) {
    status = "404 Not Found";
    type = "text/plain";
    body = "mtperf serve: only /metrics is here\n";
  } else {
    status = "405 Method Not Allowed";
    type = "text/plain";
    body = "mtperf serve: GET /metrics only\n";
  }
  std::string out = "HTTP/1.0 " + status + "\r\nContent-Type: " + type +
                    "\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n\r\n" + body;
  size_t sent = 0;
  while (sent < out.size()) {
    if (!wait_for(fd, POLLOUT, deadline)) return;
    ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return;
    sent += size_t(n);
  }
}

}  // namespace mtperf::control
