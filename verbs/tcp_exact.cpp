#include "verbs/tcp_exact.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "platform/clock.hpp"
#include "verbs/device_res.hpp"

namespace mtperf::rdma {

Fd::~Fd() {
  if (fd >= 0) ::close(fd);
}

bool wait_for(int fd, short events, int64_t deadline_ns) {
  for (;;) {
    int ms = ms_until(deadline_ns);
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, ms);
    if (rc > 0) return true;
    if (rc == 0 || (rc < 0 && errno != EINTR)) return false;
  }
}

void send_exact(int fd, const uint8_t* data, size_t n, int64_t deadline_ns,
                const std::string& what) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = ::send(fd, data + done, n - done, MSG_NOSIGNAL);
    if (w > 0) {
      done += size_t(w);
      continue;
    }
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      throw_errno(what, errno);
    }
    if (!wait_for(fd, POLLOUT, deadline_ns)) throw std::runtime_error(what + ": not sent in time");
  }
}

std::string recv_exact(int fd, uint8_t* data, size_t n, int64_t deadline_ns) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::recv(fd, data + done, n - done, 0);
    if (r > 0) {
      done += size_t(r);
      continue;
    }
    if (r == 0) {
      return "the peer closed the connection after " + std::to_string(done) + " of " +
             std::to_string(n) + " bytes";
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return std::strerror(errno);
    if (!wait_for(fd, POLLIN, deadline_ns)) {
      return "nothing more by the deadline (" + std::to_string(done) + " of " + std::to_string(n) +
             " bytes)";
    }
  }
  return "";
}

}  // namespace mtperf::rdma
