#include "transports/socket/socket_engine.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "transports/inet/inet.hpp"

namespace mtperf {
namespace {

bool would_block(int err) {
  return err == EAGAIN || err == EWOULDBLOCK;
}

int io_timeout_ms(const EngineConfig& cfg) {
  int ms = cfg.sock ? cfg.sock->io_timeout_ms : 200;
  if (cfg.max_block_ns > 0) {
    ms = int(std::min<int64_t>(ms, std::max<int64_t>(1, (cfg.max_block_ns + 999'999) / 1'000'000)));
  }
  return ms;
}

}  // namespace

SocketEngine::SocketEngine(const EngineConfig& cfg)
    : cfg_(cfg),
      blocking_(cfg.single_flow && cfg.wait == Wait::block),
      io_timeout_ms_(io_timeout_ms(cfg)),
      depth_(std::bit_ceil(std::max<uint32_t>(cfg.queue_depth, 2))),
      pool_(cfg.buffers, cfg.buffer_size) {
  uint32_t n = std::max<uint32_t>(cfg.max_conns, 1);
  conns_.resize(n);
  ops_.resize(size_t(n) * 2 * depth_);
  free_.reserve(n);
  for (int i = int(n) - 1; i >= 0; --i)
    free_.push_back(i);
  runnable_.reserve(n);
  scratch_.reserve(n);
  events_.resize(std::min<uint32_t>(n, 256));
  if (!blocking_) {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epfd_ < 0) throw std::runtime_error(std::string("epoll_create1: ") + strerror(errno));
  }
}

SocketEngine::~SocketEngine() {
  for (size_t i = 0; i < conns_.size(); ++i) {
    if (conns_[i].fd >= 0) ::close(conns_[i].fd);
  }
  if (epfd_ >= 0) ::close(epfd_);
}

Caps SocketEngine::caps() const {
  Caps c;
  c.max_outstanding = depth_;
  c.unsignaled_sends = true;
  return c;
}

int SocketEngine::register_fd(int fd, Proto proto, bool listener, Origin origin) {
  if (free_.empty()) return -ENOSPC;
  int id = free_.back();
  free_.pop_back();
  Conn& c = conns_[id];
  // A closed connection's id may still sit in runnable_; keep the flag that says so, or a
  // reused id would be listed twice.
  bool listed = c.runnable;
  c = Conn{};
  c.runnable = listed;
  c.fd = fd;
  c.proto = proto;
  c.listener = listener;
  if (listener) {
    // A listener blocks as the engine's sockets do: in blocking mode accept4() itself waits,
    // bounded by SO_RCVTIMEO. What is set here, an accepted socket inherits (Linux copies the
    // listener's socket at accept): the per-socket options and, in blocking mode, the I/O
    // timeouts, set once instead of per connection.
    inet::set_nonblocking(fd, !blocking_);
    if (cfg_.sock) inet::apply_accepted_options(fd, Proto::tcp, *cfg_.sock);
    if (blocking_) inet::set_io_timeout(fd, io_timeout_ms_);
  } else if (blocking_) {
    if (origin == Origin::adopted) inet::set_nonblocking(fd, false);
    if (origin == Origin::adopted) inet::set_io_timeout(fd, io_timeout_ms_);
    if (origin == Origin::connected) {
      inet::set_io_timeout(fd, io_timeout_ms_, inet::IoDir::recv);
      c.snd_timeout = false;
    }
  } else if (origin != Origin::accepted) {
    inet::set_nonblocking(fd, true);
  }
  if (!blocking_) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.u32 = uint32_t(id);
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      int err = errno;
      c.fd = -1;
      free_.push_back(id);
      return -err;
    }
  }
  return id;
}

int SocketEngine::adopt(int fd, Proto proto) {
  return register_fd(fd, proto, false, Origin::adopted);
}

int SocketEngine::listen_adopt(int fd) {
  return register_fd(fd, Proto::tcp, true, Origin::adopted);
}

int SocketEngine::open(const inet::ConnectSpec& spec) {
  int fd = inet::connect_fast(spec);
  if (fd < 0) return fd;
  int id = register_fd(fd, spec.proto, false, Origin::connected);
  if (id < 0) ::close(fd);
  return id;
}

int SocketEngine::accept(int listen_id) {
  Conn& l = conns_[listen_id];
  int fd = do_accept(l, true);
  if (fd < 0) return fd;
  int id = register_fd(fd, Proto::tcp, false, Origin::accepted);
  if (id < 0) ::close(fd);
  return id;
}

void SocketEngine::close(int id) {
  Conn& c = conns_[id];
  if (c.fd < 0) return;
  ::close(c.fd);  // also leaves the epoll set
  c.fd = -1;
  c.sq = c.rq = Queue{};
  c.send_off = 0;
  c.send_err = 0;
  free_.push_back(id);
}

void SocketEngine::shutdown_send(int id) {
  if (conns_[id].fd >= 0) ::shutdown(conns_[id].fd, SHUT_WR);
}

bool SocketEngine::has_ready_work(const Conn& c) const {
  return (c.sq.size() > 0 && c.wr_ready) || (c.rq.size() > 0 && c.rd_ready);
}

[[gnu::always_inline]] inline int SocketEngine::do_send(Conn& c, const WorkReq& r, bool dontwait) {
  int flags = MSG_NOSIGNAL | (dontwait ? MSG_DONTWAIT : 0);
  for (;;) {
    ssize_t n = ::send(c.fd, r.buf.data + c.send_off, r.buf.len - c.send_off, flags);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (c.proto == Proto::udp) return int(n);
    c.send_off += uint32_t(n);
    if (c.send_off == r.buf.len) {
      c.send_off = 0;
      return int(r.buf.len);
    }
    // A short write on a stream socket: the rest goes out before the send completes.
  }
}

bool SocketEngine::send_now(Conn& c, const WorkReq& r) {
  int rc = do_send(c, r, true);
  if (rc >= 0) return true;
  // Would block: the queued send goes on from send_off, and may wait, in poll(). Failed: the
  // queued send completes with the error instead of trying again (a UDP socket's pending ICMP
  // error is reported once; a retry would hide it).
  if (!would_block(-rc)) c.send_err = rc;
  return false;
}

[[gnu::always_inline]] inline int SocketEngine::do_recv(Conn& c, const WorkReq& r, bool dontwait) {
  if (c.rd_eof) return 0;
  for (;;) {
    ssize_t n = ::recv(c.fd, r.buf.data, r.buf.len, dontwait ? MSG_DONTWAIT : 0);
    if (n >= 0) {
      if (n == 0 && c.proto == Proto::tcp) c.rd_eof = true;
      return int(n);
    }
    if (errno != EINTR) return -errno;
  }
}

int SocketEngine::do_accept(Conn& c, bool dontwait) {
  // In blocking mode the listener blocks (its SO_RCVTIMEO bounds the wait), and a call that
  // must not wait asks poll() first: SOCK_NONBLOCK in accept4 concerns the new socket, not the
  // call. In epoll mode the listener is non-blocking and the call never waits.
  if (dontwait && blocking_) {
    pollfd p{c.fd, POLLIN, 0};
    int rc = ::poll(&p, 1, 0);
    if (rc == 0) return -EAGAIN;
    if (rc < 0) return errno == EINTR ? -EAGAIN : -errno;
  }
  // The new socket is made blocking or not as this mode wants; its options come from the
  // listener (register_fd).
  int flags = SOCK_CLOEXEC | (blocking_ ? 0 : SOCK_NONBLOCK);
  for (;;) {
    int fd = ::accept4(c.fd, nullptr, nullptr, flags);
    if (fd >= 0) return fd;
    if (errno != EINTR && errno != ECONNABORTED) return -errno;
  }
}

[[gnu::always_inline]] inline size_t SocketEngine::run_sends(int id, std::span<Completion> out,
                                                             bool block) {
  Conn& c = conns_[id];
  size_t n = 0;
  if (blocking_) c.wr_ready = true;  // no readiness tracking without epoll
  while (n < out.size() && c.fd >= 0 && c.sq.size() > 0 && (block || c.wr_ready)) {
    const WorkReq& r = slot(id, true, c.sq.head);
    int rc = c.send_err;
    if (rc == 0) {
      if (block && !c.snd_timeout) [[unlikely]] {
        inet::set_io_timeout(c.fd, io_timeout_ms_, inet::IoDir::send);
        c.snd_timeout = true;
      }
      rc = do_send(c, r, !block);
    } else {
      c.send_err = 0;
    }
    if (rc < 0 && would_block(-rc)) {
      c.wr_ready = false;
      break;
    }
    // An unsignaled send (WorkReq::signal) is done once the kernel has it: only a failure is
    // reported.
    if (r.signal || rc < 0)
      out[n++] = Completion{r.cookie, rc, uint16_t(rc < 0 ? kCompError : 0), 0};
    c.sq.head++;
    // One wait per poll, as for receives: the sends behind it are only tried, so that a send
    // blocked on a full socket buffer (up to the I/O timeout) holds back no completion.
    block = false;
  }
  return n;
}

[[gnu::always_inline]] inline size_t SocketEngine::run_recvs(int id, std::span<Completion> out,
                                                             bool block, bool try_listener) {
  Conn& c = conns_[id];
  size_t n = 0;
  if (blocking_) c.rd_ready = true;
  while (n < out.size() && c.fd >= 0 && c.rq.size() > 0 && (block || c.rd_ready)) {
    const WorkReq& r = slot(id, false, c.rq.head);
    int rc;
    // A blocking listener is not tried after another operation has completed: that would cost
    // a poll() and mostly a failed accept4(). Its accept waits for a poll() where it comes first,
    // or is tried after a wait in vain (`try_listener`).
    if (c.listener && blocking_ && !block && !try_listener) break;
    if (c.listener) {
      rc = do_accept(c, !block);
      if (rc >= 0) {
        int fd = rc;
        rc = register_fd(fd, Proto::tcp, false, Origin::accepted);
        if (rc < 0) ::close(fd);
      }
    } else {
      rc = do_recv(c, r, !block);
    }
    if (rc < 0 && would_block(-rc)) {
      c.rd_ready = false;
      break;
    }
    out[n++] = Completion{r.cookie, rc, uint16_t(rc < 0 ? kCompError : 0), 0};
    c.rq.head++;
    block = false;  // one wait per poll: what follows is only what is already there
  }
  return n;
}

// Blocking mode with one connection holding work, as an rr or stream flow has all along: what
// progress() does for that one connection, without the scratch list and its three passes.
inline size_t SocketEngine::progress_one(std::span<Completion> out) {
  int id = runnable_[0];
  Conn& c = conns_[id];
  size_t n = 0;
  if (c.fd >= 0) {
    n = run_sends(id, out, true);
    if (n < out.size() && c.rq.size() > 0) n += run_recvs(id, out.subspan(n), true);
  }
  if (c.fd < 0 || (c.sq.size() == 0 && c.rq.size() == 0)) {
    c.runnable = false;
    runnable_.clear();
  }
  return n;
}

size_t SocketEngine::progress(std::span<Completion> out) {
  if (blocking_ && runnable_.size() == 1) return progress_one(out);
  size_t n = 0;
  scratch_.swap(runnable_);
  runnable_.clear();
  // Sends first, on every connection: they need nothing from the peer, and a send queued
  // behind a blocking receive could be what the peer is waiting for.
  for (int id : scratch_) {
    conns_[id].runnable = false;
    if (conns_[id].fd >= 0 && n < out.size()) n += run_sends(id, out.subspan(n), blocking_);
  }
  // Then receives and accepts. In blocking mode the first of them may wait (the request/
  // response pattern: send, then block for the answer, two syscalls); the rest are only tried.
  // Listeners come after the data connections there: the connection in hand is finished (its
  // request answered, its end read and closed) before the next one is accepted, as a bare
  // server loop does, so closing it is not on the path of the next transaction. A listener is
  // tried only where the wait before it timed out, so neither side starves the other.
  bool may_block = blocking_;
  bool waited_out = false;
  for (int pass = 0; pass < (blocking_ ? 2 : 1); ++pass) {
    for (int id : scratch_) {
      Conn& c = conns_[id];
      if (c.fd < 0 || c.rq.size() == 0 || n >= out.size()) continue;
      if (blocking_ && c.listener != (pass == 1)) continue;
      size_t got = run_recvs(id, out.subspan(n), may_block, waited_out);
      waited_out |= may_block && got == 0;
      n += got;
      may_block = false;
    }
  }
  for (int id : scratch_) {
    Conn& c = conns_[id];
    if (c.fd >= 0 && (c.sq.size() > 0 || c.rq.size() > 0) && (blocking_ || has_ready_work(c))) {
      make_runnable(id);
    }
  }
  scratch_.clear();
  return n;
}

int SocketEngine::wait_events(int64_t timeout_ns) {
  timespec ts{timeout_ns / 1000000000, timeout_ns % 1000000000};
  int n = epoll_pwait2(epfd_, events_.data(), int(events_.size()), &ts, nullptr);
  if (n < 0) return errno == EINTR ? 0 : -errno;
  for (int i = 0; i < n; ++i) {
    int id = int(events_[i].data.u32);
    Conn& c = conns_[id];
    if (c.fd < 0) continue;
    uint32_t ev = events_[i].events;
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) c.rd_ready = true;
    if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) c.wr_ready = true;
    if (has_ready_work(c)) make_runnable(id);
  }
  return n;
}

int SocketEngine::poll(std::span<Completion> out, Wait wait, int64_t timeout_ns) {
  if (blocking_) {
    // A request/response turn: one connection with one receive queued and no send (an
    // unsignaled send went out at post()). What progress() would do, without its loops.
    if (runnable_.size() == 1 && !out.empty()) {
      int id = runnable_[0];
      Conn& c = conns_[id];
      if (c.fd >= 0 && !c.listener && c.sq.size() == 0 && c.rq.size() == 1) {
        const WorkReq& r = slot(id, false, c.rq.head);
        int rc = do_recv(c, r, false);
        if (rc < 0 && would_block(-rc)) return 0;  // the I/O timeout: it stays queued
        out[0] = Completion{r.cookie, rc, uint16_t(rc < 0 ? kCompError : 0), 0};
        c.rq.head++;
        c.runnable = false;
        runnable_.clear();
        return 1;
      }
    }
    if (runnable_.empty()) {
      if (wait == Wait::block && timeout_ns > 0) {
        timespec ts{timeout_ns / 1000000000, timeout_ns % 1000000000};
        nanosleep(&ts, nullptr);
      }
      return 0;
    }
    return int(progress(out));
  }
  size_t n = progress(out);
  if (n > 0 || wait == Wait::none) return int(n);
  // Spin: ask the kernel for readiness without sleeping; the caller loops.
  int rc = wait_events(wait == Wait::spin ? 0 : timeout_ns);
  if (rc < 0) return rc;
  return int(progress(out));
}

}  // namespace mtperf
