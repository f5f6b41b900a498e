#pragma once
// Whole messages on a non-blocking TCP socket by a deadline, for the exchanges that bring up a
// queue pair out of band (the transport's own hello, oob_wire.hpp; perftest's keys,
// perftest_wire.hpp): each side writes a fixed-size message and reads one back, and a peer that
// stops mid-message must end the wait, not hang it.
#include <sys/socket.h>
#include <cstddef>

#include <cstdint>
#include <string>

namespace mtperf::rdma {

// A descriptor closed when it goes out of scope, unless released.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

// Waits for `events` (poll's) on fd until the deadline (CLOCK_MONOTONIC ns); false when they did
// not come.
bool wait_for(int fd, short events, int64_t deadline_ns);
// All n bytes, or throws std::runtime_error "what: ..." (an error, or not sent by the deadline).
void send_exact(int fd, const uint8_t* data, size_t n, int64_t deadline_ns,
                const std::string& what);
// "" when n bytes came; otherwise what happened (the peer closed after k bytes, nothing by the
// deadline, an error).
std::string recv_exact(int fd, uint8_t* data, size_t n, int64_t deadline_ns);

// A non-blocking TCP socket (TCP_NODELAY) connected to `server`, from `source` unless its family
// is AF_UNSPEC, by the deadline; throws std::runtime_error "what: ..." otherwise.
int tcp_connect(const sockaddr_storage& server, const sockaddr_storage& source, int64_t deadline_ns,
                const std::string& what);
// A non-blocking TCP socket (TCP_NODELAY, SO_REUSEADDR) listening on `where`; throws
// std::runtime_error "what: ..." otherwise.
int tcp_listen(const sockaddr_storage& where, int backlog, const std::string& what);
// The local address of a socket; throws naming getsockname.
sockaddr_storage local_address(int fd);

}  // namespace mtperf::rdma
