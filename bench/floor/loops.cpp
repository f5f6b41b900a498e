// The data-path loops of the floor: blocking sockets, one system call per operation, as
// mtperf's socket engine in its blocking mode (one flow per thread) issues them.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "bench/floor/floor.hpp"

namespace mtperf::floors {
namespace {

constexpr int kUdpEndCopies = 3;  // empty datagrams that tell the UDP server the test is over

bool retry(int err) {
  return err == EINTR || err == EAGAIN || err == EWOULDBLOCK;
}

// Sends all of [data, data + len); false when the connection failed.
bool send_all(int fd, const char* data, size_t len) {
  while (len > 0) {
    ssize_t n = ::send(fd, data, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (retry(errno)) continue;
      return false;
    }
    data += n;
    len -= size_t(n);
  }
  return true;
}

// Receives until `want` bytes have come; false on EOF or error. `stop` ends a wait that
// timed out (SO_RCVTIMEO) once the test is over.
bool recv_exact(int fd, char* buf, uint32_t cap, uint32_t want, const std::atomic<bool>* stop) {
  uint32_t got = 0;
  while (got < want) {
    ssize_t n = ::recv(fd, buf, cap, 0);
    if (n > 0) {
      got += uint32_t(n);
    } else if (n == 0) {
      errno = ECONNRESET;  // the peer closed before the whole message came
      return false;
    } else if (!retry(errno) || (stop && stop->load(std::memory_order_relaxed))) {
      return false;
    }
  }
  return true;
}

// Reads and drops whatever comes until EOF, an error, or a timed-out wait after the end.
void drain(int fd, char* buf, uint32_t cap, const std::atomic<bool>& stop) {
  for (;;) {
    ssize_t n = ::recv(fd, buf, cap, 0);
    if (n == 0 || (n < 0 && (!retry(errno) || stop.load(std::memory_order_relaxed)))) return;
  }
}

}  // namespace

void stream_send(int fd, uint32_t size, Shared& s) {
  std::vector<char> buf(size, 'Z');
  while (!s.stop.load(std::memory_order_relaxed)) {
    if (!send_all(fd, buf.data(), size)) {
      s.fail(errno);
      break;
    }
  }
  ::shutdown(fd, SHUT_WR);
}

void stream_recv(int fd, uint32_t size, Counter& c) {
  std::vector<char> buf(size);
  for (;;) {
    ssize_t n = ::recv(fd, buf.data(), size, 0);
    if (n > 0) {
      c.add(uint64_t(n));
    } else if (n == 0 || !retry(errno)) {
      break;
    }
  }
  ::shutdown(fd, SHUT_WR);
}

void rr_client(int fd, const Options& o, Shared& s) {
  uint32_t cap = o.recv_size();
  std::vector<char> req(o.req_size, 'Z'), buf(cap);
  while (!s.stop.load(std::memory_order_relaxed)) {
    if (!send_all(fd, req.data(), req.size()) ||
        !recv_exact(fd, buf.data(), cap, o.resp_size, nullptr)) {
      s.fail(errno);
      break;
    }
    s.counters[0].add(1);
  }
  ::shutdown(fd, SHUT_WR);
  drain(fd, buf.data(), cap, s.stop);
}

void rr_server(int fd, const Options& o) {
  uint32_t cap = o.recv_size();
  std::vector<char> resp(o.resp_size, 'Z'), buf(cap);
  uint64_t acc = 0;
  for (;;) {
    ssize_t n = ::recv(fd, buf.data(), cap, 0);
    if (n == 0 || (n < 0 && !retry(errno))) break;
    if (n < 0) continue;
    for (acc += uint64_t(n); acc >= o.req_size; acc -= o.req_size) {
      if (!send_all(fd, resp.data(), resp.size())) return;
    }
  }
  ::shutdown(fd, SHUT_WR);
}

void udp_rr_client(int fd, const Options& o, Shared& s) {
  uint32_t cap = o.recv_size();
  std::vector<char> req(o.req_size, 'Z'), buf(cap);
  while (!s.stop.load(std::memory_order_relaxed)) {
    if (::send(fd, req.data(), req.size(), 0) < 0 && !retry(errno)) {
      s.fail(errno);
      break;
    }
    ssize_t n = ::recv(fd, buf.data(), cap, 0);
    if (n > 0) s.counters[0].add(1);  // else lost (SO_RCVTIMEO): ask again
  }
  for (int i = 0; i < kUdpEndCopies; ++i)
    ::send(fd, req.data(), 0, 0);
}

void udp_rr_server(int fd, const Options& o, Shared& s) {
  uint32_t cap = o.recv_size();
  std::vector<char> resp(o.resp_size, 'Z'), buf(cap);
  for (;;) {
    ssize_t n = ::recv(fd, buf.data(), cap, 0);
    if (n == 0) break;
    if (n < 0) {
      if (!retry(errno) || s.stop.load(std::memory_order_relaxed)) break;
      continue;
    }
    ::send(fd, resp.data(), resp.size(), 0);
  }
}

void crr_client(const sockaddr_in& to, const Options& o, Shared& s) {
  uint32_t cap = o.recv_size();
  std::vector<char> req(o.req_size, 'Z'), buf(cap);
  while (!s.stop.load(std::memory_order_relaxed)) {
    int fd = connect_tcp(to, o.nodelay());
    if (fd < 0) {
      s.fail(-fd);
      break;
    }
    bool ok = send_all(fd, req.data(), req.size()) &&
              recv_exact(fd, buf.data(), cap, o.resp_size, nullptr);
    int err = errno;
    ::close(fd);
    if (!ok) {
      s.fail(err);
      break;
    }
    s.counters[0].add(1);
  }
}

// The listener carries SO_RCVTIMEO, so accept() wakes up to see the end of the test; the
// accepted sockets inherit it (and TCP_NODELAY) from the listener at no cost.
void crr_server(int listen_fd, const Options& o, Shared& s) {
  uint32_t cap = o.recv_size();
  std::vector<char> resp(o.resp_size, 'Z'), buf(cap);
  for (;;) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (!retry(errno) || s.stop.load(std::memory_order_relaxed)) break;
      continue;
    }
    if (recv_exact(fd, buf.data(), cap, o.req_size, &s.stop) &&
        send_all(fd, resp.data(), resp.size())) {
      drain(fd, buf.data(), cap, s.stop);  // the client closes first, as with mtperf
    }
    ::close(fd);
  }
}

}  // namespace mtperf::floors
