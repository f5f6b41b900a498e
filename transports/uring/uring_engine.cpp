#include "transports/uring/uring_engine.hpp"

#include <liburing.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "transports/inet/inet.hpp"

namespace mtperf {

struct UringEngine::Ring {
  io_uring ring{};
};

namespace {

constexpr uint64_t kInternal = ~uint64_t(0);  // cancels: their CQEs are dropped
constexpr uint32_t kCqeBatch = 64;

int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string err_text(int neg) {
  return std::strerror(-neg);
}

}  // namespace

UringEngine::UringEngine(const EngineConfig& cfg, const UringSettings& settings)
    : cfg_(cfg),
      set_(settings),
      ring_(std::make_unique<Ring>()),
      depth_(std::bit_ceil(std::max<uint32_t>(cfg.queue_depth, 2))),
      pool_(cfg.buffers, cfg.buffer_size) {
  // Closed connections keep their slot until their last operation ends: room for as many again.
  uint32_t n = std::max<uint32_t>(cfg.max_conns, 1);
  n += std::max<uint32_t>(n, 8);
  conns_.resize(n);
  free_conns_.reserve(n);
  for (int i = int(n) - 1; i >= 0; --i)
    free_conns_.push_back(i);
  size_t nops = size_t(n) * 2 * depth_;
  ops_.resize(nops);
  free_ops_.reserve(nops);
  for (size_t i = nops; i-- > 0;)
    free_ops_.push_back(uint32_t(i));
  cqes_.resize(kCqeBatch);
  setup_ring(settings);
}

void UringEngine::setup_ring(const UringSettings& s) {
  io_uring_params p{};
  uint32_t entries = std::clamp<uint32_t>(s.ring_size, 8, 32768);
  size_t want_cq = std::max<size_t>(size_t(entries) * 4, std::min<size_t>(ops_.size() * 2, 65536));
  p.flags = IORING_SETUP_CQSIZE;
  p.cq_entries = uint32_t(std::bit_ceil(want_cq));
  if (s.sqpoll) {
    p.flags |= IORING_SETUP_SQPOLL;
    p.sq_thread_idle = 100;  // ms
  }
  bool si = s.single_issuer && !s.sqpoll;
  if (s.single_issuer && s.sqpoll) {
    eff_.notes.push_back(
        "single_issuer: off, the kernel does not combine DEFER_TASKRUN with SQPOLL");
  }
  int rc = -EINVAL;
  if (si) {
    io_uring_params q = p;
    q.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    rc = io_uring_queue_init_params(entries, &ring_->ring, &q);
    if (rc == 0) {
      defer_taskrun_ = true;
      eff_.single_issuer = true;
    } else {
      eff_.notes.push_back("single_issuer: the kernel refused SINGLE_ISSUER|DEFER_TASKRUN (" +
                           err_text(rc) + "), running without");
    }
  }
  if (rc != 0) {
    io_uring_params q = p;
    if (!s.sqpoll) q.flags |= IORING_SETUP_COOP_TASKRUN;
    rc = io_uring_queue_init_params(entries, &ring_->ring, &q);
    if (rc == -EINVAL && !s.sqpoll) {  // a kernel before 5.19: no COOP_TASKRUN
      q = p;
      rc = io_uring_queue_init_params(entries, &ring_->ring, &q);
    }
  }
  if (rc != 0) {
    ring_.reset();
    throw std::runtime_error("io_uring_queue_init: " + err_text(rc) +
                             (rc == -EPERM || rc == -ENOSYS
                                  ? " (io_uring disabled: sysctl kernel.io_uring_disabled=0, or "
                                    "a seccomp profile that allows io_uring_setup)"
                                  : ""));
  }
  eff_.sqpoll = s.sqpoll;
  if (s.fixed_files) {
    rc = io_uring_register_files_sparse(&ring_->ring, uint32_t(conns_.size()));
    eff_.fixed_files = rc == 0;
    if (rc != 0)
      eff_.notes.push_back("fixed_files: registering the file table failed (" + err_text(rc) + ")");
  }
  eff_.zerocopy = s.zerocopy;
  if (s.fixed_buffers && !s.zerocopy) {
    eff_.notes.push_back("fixed_buffers: only zero-copy sends take registered buffers; unused");
  } else if (s.fixed_buffers && pool_.bytes() > 0) {
    iovec iov{pool_.base(), pool_.bytes()};
    rc = io_uring_register_buffers(&ring_->ring, &iov, 1);
    eff_.fixed_buffers = rc == 0;
    if (rc != 0) {
      eff_.notes.push_back("fixed_buffers: io_uring_register_buffers failed (" + err_text(rc) +
                           "; RLIMIT_MEMLOCK too small?), sending from unregistered buffers");
    }
  }
}

UringEngine::~UringEngine() {
  // Tearing the ring down cancels and waits for everything in flight; only then do the
  // descriptors go.
  if (ring_) io_uring_queue_exit(&ring_->ring);
  for (Conn& c : conns_) {
    if (c.fd >= 0) ::close(c.fd);
  }
}

Caps UringEngine::caps() const {
  Caps c;
  c.zero_copy = set_.zerocopy;
  c.max_outstanding = depth_;
  return c;
}

int UringEngine::register_fd(int fd, Proto proto, bool listener) {
  if (free_conns_.empty()) return -ENOSPC;
  int id = free_conns_.back();
  if (eff_.fixed_files) {
    int rc = io_uring_register_files_update(&ring_->ring, unsigned(id), &fd, 1);
    if (rc < 0) return rc;
  }
  free_conns_.pop_back();
  Conn& c = conns_[id];
  c = Conn{};
  c.fd = fd;
  c.proto = proto;
  c.listener = listener;
  // io_uring waits by itself (it polls and retries); a non-blocking descriptor would make some
  // kernels return EAGAIN to us instead.
  inet::set_nonblocking(fd, false);
  return id;
}

int UringEngine::adopt(int fd, Proto proto) {
  return register_fd(fd, proto, false);
}

int UringEngine::listen_adopt(int fd) {
  return register_fd(fd, Proto::tcp, true);
}

int UringEngine::open(const ConnectSpec& spec) {
  int fd = inet::connect_fast(spec);
  if (fd < 0) return fd;
  int id = register_fd(fd, spec.proto, false);
  if (id < 0) ::close(fd);
  return id;
}

int UringEngine::accept(int listen_id) {
  pollfd p{conns_[listen_id].fd, POLLIN, 0};
  if (::poll(&p, 1, 0) == 0) return -EAGAIN;  // the listener is blocking for io_uring's sake
  int fd = ::accept4(conns_[listen_id].fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return -errno;
  if (cfg_.sock) inet::apply_accepted_options(fd, Proto::tcp, *cfg_.sock);
  int id = register_fd(fd, Proto::tcp, false);
  if (id < 0) ::close(fd);
  return id;
}

void UringEngine::close(int id) {
  Conn& c = conns_[id];
  if (c.fd < 0 || c.closing) return;
  if (c.outstanding == 0) {
    finalize_close(id);
    return;
  }
  c.closing = true;
  // The peer must see the end now, not when our last operation happens to finish: shutdown
  // also wakes a pending receive. The descriptor itself stays open (so its number cannot be
  // reused under an SQE) until every operation has completed.
  ::shutdown(c.fd, SHUT_RDWR);
  for (OpSlot& o : ops_) {
    if (o.conn == id) o.dropped = true;
  }
  if (io_uring_sqe* sqe = static_cast<io_uring_sqe*>(get_sqe())) {
    unsigned flags = IORING_ASYNC_CANCEL_ALL;
    int fd = c.fd;
    if (eff_.fixed_files) {
      flags |= IORING_ASYNC_CANCEL_FD_FIXED;
      fd = id;
    }
    io_uring_prep_cancel_fd(sqe, fd, flags);
    io_uring_sqe_set_data64(sqe, kInternal);
  }
  io_uring_submit(&ring_->ring);
}

void UringEngine::finalize_close(int id) {
  Conn& c = conns_[id];
  if (eff_.fixed_files) {
    int none = -1;
    io_uring_register_files_update(&ring_->ring, unsigned(id), &none, 1);
  }
  ::close(c.fd);
  c = Conn{};
  free_conns_.push_back(id);
}

void UringEngine::shutdown_send(int id) {
  if (conns_[id].fd >= 0 && !conns_[id].closing) ::shutdown(conns_[id].fd, SHUT_WR);
}

void* UringEngine::get_sqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_->ring);
  if (sqe == nullptr) {  // the SQ ring is full: hand it to the kernel and try again
    io_uring_submit(&ring_->ring);
    sqe = io_uring_get_sqe(&ring_->ring);
  }
  return sqe;
}

bool UringEngine::issue(uint32_t index) {
  OpSlot& o = ops_[index];
  Conn& c = conns_[o.conn];
  io_uring_sqe* sqe = static_cast<io_uring_sqe*>(get_sqe());
  if (sqe == nullptr) return false;
  int fd = eff_.fixed_files ? o.conn : c.fd;
  std::byte* data = o.buf.data + o.off;
  uint32_t len = o.buf.len - o.off;
  switch (o.op) {
    case Op::send: {
      int flags = MSG_NOSIGNAL | (c.proto == Proto::tcp ? MSG_WAITALL : 0);
      if (eff_.zerocopy) {
        io_uring_prep_send_zc(sqe, fd, data, len, flags, 0);
        if (eff_.fixed_buffers) {
          sqe->ioprio |= IORING_RECVSEND_FIXED_BUF;
          sqe->buf_index = 0;  // the whole pool is registered buffer 0
        }
      } else {
        io_uring_prep_send(sqe, fd, data, len, flags);
      }
      break;
    }
    case Op::recv:
      io_uring_prep_recv(sqe, fd, data, len, 0);
      break;
    case Op::accept:
      io_uring_prep_accept(sqe, fd, nullptr, nullptr, SOCK_CLOEXEC);
      break;
    default:
      break;
  }
  if (eff_.fixed_files) sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data64(sqe, uint64_t(index));
  return true;
}

int UringEngine::post(int id, std::span<const WorkReq> reqs) {
  Conn& c = conns_[id];
  if (c.fd < 0 || c.closing) return -EBADF;
  int n = 0;
  for (const WorkReq& r : reqs) {
    if (r.op == Op::write || r.op == Op::read) return n > 0 ? n : -EOPNOTSUPP;
    if ((r.op == Op::accept) != c.listener) return n > 0 ? n : -EINVAL;
    uint32_t& dir = r.op == Op::send ? c.sends : c.recvs;
    if (dir == depth_ || free_ops_.empty()) break;
    uint32_t index = free_ops_.back();
    OpSlot& o = ops_[index];
    o = OpSlot{};
    o.conn = id;
    o.op = r.op;
    o.buf = r.buf;
    o.cookie = r.cookie;
    if (!issue(index)) break;
    free_ops_.pop_back();
    ++dir;
    ++c.outstanding;
    ++n;
  }
  return n;
}

int UringEngine::flush() {
  if (io_uring_sq_ready(&ring_->ring) == 0) return 0;
  int rc = io_uring_submit(&ring_->ring);
  return rc == -EINTR || rc == -EAGAIN || rc == -EBUSY ? 0 : rc;
}

void UringEngine::release(uint32_t index) {
  OpSlot& o = ops_[index];
  Conn& c = conns_[o.conn];
  (o.op == Op::send ? c.sends : c.recvs)--;
  int id = o.conn;
  o.conn = -1;
  free_ops_.push_back(index);
  if (--c.outstanding == 0 && c.closing) finalize_close(id);
}

bool UringEngine::handle(uint64_t user_data, int32_t res, uint32_t flags, Completion& out) {
  if (user_data == kInternal) return false;
  uint32_t index = uint32_t(user_data);
  OpSlot& o = ops_[index];
  if (flags & IORING_CQE_F_NOTIF) {  // zero-copy: the kernel is done with (part of) the buffer
    if (--o.notifs > 0 || !o.sent_all) return false;
    res = o.result;
  } else if (o.dropped) {
    if (flags & IORING_CQE_F_MORE) {
      ++o.notifs;  // the buffer is not free before its notification
      o.sent_all = true;
    } else {
      release(index);
    }
    return false;
  } else {
    if (flags & IORING_CQE_F_MORE) ++o.notifs;
    if (res == -EINTR || (o.op == Op::accept && res == -ECONNABORTED)) {
      if (issue(index)) return false;
      res = -EBUSY;  // no SQE for the retry: report rather than lose the operation
    }
    if (o.op == Op::send && res > 0 && conns_[o.conn].proto == Proto::tcp) {
      o.off += uint32_t(res);
      if (o.off < o.buf.len) {  // a short send: the remainder goes before the send completes
        if (issue(index)) return false;
        res = -EBUSY;
      } else {
        res = int32_t(o.buf.len);
      }
    }
    if (o.op == Op::accept && res >= 0) {
      int fd = res;
      if (cfg_.sock) inet::apply_accepted_options(fd, Proto::tcp, *cfg_.sock);
      res = register_fd(fd, Proto::tcp, false);
      if (res < 0) ::close(fd);
    }
    o.result = res;
    o.sent_all = true;
    if (o.notifs > 0) return false;  // wait for the buffer to be released
  }
  if (o.dropped) {
    release(index);
    return false;
  }
  out = Completion{o.cookie, res, uint16_t(res < 0 ? kCompError : 0), 0};
  release(index);
  return true;
}

int UringEngine::reap(std::span<Completion> out) {
  io_uring& ring = ring_->ring;
  size_t n = 0;
  while (n < out.size()) {
    unsigned want = unsigned(std::min<size_t>(out.size() - n, cqes_.size()));
    auto** batch = reinterpret_cast<io_uring_cqe**>(cqes_.data());
    unsigned got = io_uring_peek_batch_cqe(&ring, batch, want);
    if (got == 0) break;
    for (unsigned i = 0; i < got; ++i) {
      io_uring_cqe* cqe = batch[i];
      if (handle(cqe->user_data, cqe->res, cqe->flags, out[n])) ++n;
    }
    io_uring_cq_advance(&ring, got);
  }
  return int(n);
}

bool UringEngine::needs_enter() const {
  return defer_taskrun_ || io_uring_sq_ready(&ring_->ring) > 0 ||
         io_uring_cq_has_overflow(&ring_->ring);
}

int UringEngine::poll(std::span<Completion> out, Wait wait, int64_t timeout_ns) {
  io_uring& ring = ring_->ring;
  int n = reap(out);
  if (n > 0) return n;
  int64_t deadline = mono_ns() + std::max<int64_t>(timeout_ns, 0);
  for (;;) {
    if (wait == Wait::block && timeout_ns > 0) {
      int64_t left = std::max<int64_t>(deadline - mono_ns(), 0);
      __kernel_timespec ts{left / 1000000000, left % 1000000000};
      io_uring_cqe* cqe = nullptr;
      int rc = io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ts, nullptr);
      if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) return rc;
    } else if (needs_enter()) {
      int rc = io_uring_submit_and_get_events(&ring);
      if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) return rc;
    }
    n = reap(out);
    if (n > 0 || wait == Wait::none || mono_ns() >= deadline) return n;
  }
}

}  // namespace mtperf
