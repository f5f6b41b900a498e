#pragma once
// The real iperf3 server for the tests, on 127.0.0.1 and a free port: started, awaited until it
// listens, stopped and reaped when the test is done. A test binary that needs it declares
// MTPERF_TEST_REQUIRES(why_no_iperf3()) and is skipped (77) where iperf3 is not installed.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

namespace mtperf::test {

inline const char* kIperf3 = "/usr/bin/iperf3";

inline std::string why_no_iperf3() {
  return ::access(kIperf3, X_OK) == 0
             ? ""
             : "iperf3 is not installed (apt-get install iperf3; ci/deps.sh installs it)";
}

// A port nothing listens on now (bound and released: the kernel does not hand it out again at
// once).
inline uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

class Iperf3Server {
 public:
  // one_off: -1, the server ends after one test.
  explicit Iperf3Server(bool one_off = true) : port_(free_port()) {
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::close(out[1]);
      std::string port = std::to_string(port_);
      if (one_off)
        ::execl(kIperf3, "iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", port.c_str(),
                "--forceflush", nullptr);
      else
        ::execl(kIperf3, "iperf3", "-s", "-B", "127.0.0.1", "-p", port.c_str(), "--forceflush",
                nullptr);
      ::_exit(127);
    }
    ::close(out[1]);
    out_ = ::fdopen(out[0], "r");
    // "Server listening on PORT" comes once it listens.
    char line[512];
    while (std::fgets(line, sizeof line, out_) != nullptr)
      if (std::string(line).find("Server listening") != std::string::npos) return;
    throw std::runtime_error("iperf3 -s did not start");
  }
  ~Iperf3Server() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    std::fclose(out_);
  }
  Iperf3Server(const Iperf3Server&) = delete;
  Iperf3Server& operator=(const Iperf3Server&) = delete;

  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  uint16_t port_ = 0;
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
};

}  // namespace mtperf::test
