#pragma once
// FOR UNIT TESTS ONLY: the far end of an out-of-band exchange played on loopback TCP (the
// transport's own hello, test_rdma_oob.cpp; perftest's keys, test_rdma_perftest.cpp), and the
// count of this process's descriptors, so that a test can check none was left open.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <thread>

namespace mtperf::rdma::test {

inline int open_fds() {
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)e;
    ++n;
  }
  return n;
}

// n bytes from fd, each wait at most 2 s; false when they did not come.
inline bool read_n(int fd, uint8_t* p, size_t n) {
  size_t done = 0;
  while (done < n) {
    pollfd q{fd, POLLIN, 0};
    if (::poll(&q, 1, 2000) <= 0) return false;
    ssize_t r = ::recv(fd, p + done, n - done, 0);
    if (r <= 0) return false;
    done += size_t(r);
  }
  return true;
}

// A TCP server on 127.0.0.1 whose one connection a thread serves with `script`.
struct ScriptedServer {
  int lfd = -1;
  uint16_t port = 0;
  std::thread t;
  explicit ScriptedServer(std::function<void(int)> script) {
    lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(lfd, 1) == 0);
    socklen_t len = sizeof a;
    getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    t = std::thread([this, script] {
      pollfd q{lfd, POLLIN, 0};
      if (::poll(&q, 1, 3000) <= 0) return;
      int fd = ::accept(lfd, nullptr, nullptr);
      if (fd < 0) return;
      script(fd);
      ::close(fd);
    });
  }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;
  ~ScriptedServer() {
    t.join();
    ::close(lfd);
  }
};

}  // namespace mtperf::rdma::test
