#pragma once
// The real sockperf (Debian 12: 3.7) for the tests, on 127.0.0.1: `sockperf sr` started on a free
// port and stopped with SIGINT, after which it prints its count ("Total N messages received and
// handled"); a sockperf client run to its end, its figures read from what it prints. A binary
// that needs it declares MTPERF_TEST_REQUIRES(why_no_sockperf()) and is skipped (77) without it.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>

#include "tests/peers/iperf3_server.hpp"  // free_port()

namespace mtperf::test {

inline const char* kSockperf = "/usr/bin/sockperf";

inline std::string why_no_sockperf() {
  return ::access(kSockperf, X_OK) == 0
             ? ""
             : "sockperf is not installed (apt-get install sockperf; ci/deps.sh installs it)";
}

inline bool tcp_listening(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

class SockperfServer {
 public:
  explicit SockperfServer(bool tcp) : port_(free_port()) {
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::dup2(out[1], 2);
      ::close(out[0]);
      ::close(out[1]);
      std::string port = std::to_string(port_);
      if (tcp)
        ::execl(kSockperf, "sockperf", "sr", "--tcp", "-i", "127.0.0.1", "-p", port.c_str(),
                nullptr);
      else
        ::execl(kSockperf, "sockperf", "sr", "-i", "127.0.0.1", "-p", port.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(out[1]);
    out_ = ::fdopen(out[0], "r");
    // TCP: until it accepts (a connection that sends nothing is not counted); UDP: no way to
    // ask, so a pause long enough for it to bind.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    if (!tcp) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    while (tcp && !tcp_listening(port_)) {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("sockperf sr did not start");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // SIGINT, then its count: the messages it counted since it started (-1 when it printed none).
  // What it prints is read for at most 5 s; then it is killed.
  long long stop() {
    if (pid_ < 0) return count_;
    ::kill(pid_, SIGINT);
    const int fd = ::fileno(out_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    char buf[4096];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) <= 0) {
        ::kill(pid_, SIGKILL);
        output_ += "\n(sockperf sr did not exit within 5 s of SIGINT: killed)\n";
        break;
      }
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      output_.append(buf, size_t(n));
    }
    std::smatch m;
    if (std::regex_search(output_, m, std::regex("Total ([0-9]+) messages received")))
      count_ = std::stoll(m[1]);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return count_;
  }
  ~SockperfServer() {
    stop();
    std::fclose(out_);
  }
  SockperfServer(const SockperfServer&) = delete;
  SockperfServer& operator=(const SockperfServer&) = delete;

  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& output() const { return output_; }

 private:
  uint16_t port_ = 0;
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  long long count_ = -1;
  std::string output_;
};

// What a sockperf client printed: SentMessages and ReceivedMessages of its whole run (the
// "[Total Run]" line), its percentiles ("percentile 50.000" -> 50.0), µs: half round trips
// unless the client was given --full-rtt (sockperf divides each round trip by 2 by default).
struct SockperfClientRun {
  int rc = -1;
  std::string output;
  long long sent = -1, received = -1;
  std::map<double, double> percentiles;
  double avg_us = -1;
};

inline SockperfClientRun run_sockperf_client(const std::string& args) {
  SockperfClientRun r;
  std::string cmd = std::string(kSockperf) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("popen");
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
    r.output.append(buf, n);
  int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::smatch m;
  if (std::regex_search(r.output, m,
                        std::regex("\\[Total Run\\][^\\n]*SentMessages=([0-9]+); "
                                   "ReceivedMessages=([0-9]+)"))) {
    r.sent = std::stoll(m[1]);
    r.received = std::stoll(m[2]);
  }
  std::regex pct("percentile ([0-9.]+) = +([0-9.]+)");
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), pct);
       it != std::sregex_iterator(); ++it)
    r.percentiles[std::stod((*it)[1])] = std::stod((*it)[2]);
  // "avg-latency" is half a round trip; with --full-rtt sockperf prints "avg-rtt", a whole one.
  if (std::regex_search(r.output, m, std::regex("avg-(?:latency|rtt)=([0-9.]+)")))
    r.avg_us = std::stod(m[1]);
  return r;
}

}  // namespace mtperf::test
