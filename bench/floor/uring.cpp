// The io_uring floor: the operations mtperf's io_uring transport issues with its defaults
// (transports/uring/, `-T uring`), in a bare ring loop, one ring per thread:
//
//   ring     256 SQ entries; the CQ 4x that, or two per operation slot the engine keeps
//            (IORING_SETUP_CQSIZE); IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN
//   send     IORING_OP_SEND with MSG_NOSIGNAL | MSG_WAITALL, one per connection in the kernel;
//            the rest of a short send goes before the next. rr: IOSQE_CQE_SKIP_SUCCESS
//            (cqe_skip), so a send has a CQE only when it fails or ends short
//   receive  one multishot recv per connection (IORING_RECV_MULTISHOT, IOSQE_BUFFER_SELECT)
//            into a provided-buffer ring (group 0) of Options::recv_size() buffers, 8 per
//            connection, at least 16, at most 32 MiB; each buffer goes back once counted, and
//            a receive the kernel ends (no IORING_CQE_F_MORE, ENOBUFS) is armed again at once
//   wait     io_uring_submit_and_wait_timeout for 1 CQE, 100 ms: what is queued goes in with
//            the wait, one io_uring_enter a turn
//   reap     up to 64 CQEs a turn (cqe_batch); with more left, what the turn queued is
//            submitted at once
//
// Not used, as by default: fixed files and buffers, ring_fd, SQPOLL, zero-copy sends, links
// (with a multishot receive armed no receive follows a send, so the engine begins no chain).
// Sockets are blocking and carry no I/O timeouts, as the engine adopts them. The loops count
// with one relaxed store per completion, as the socket floor does, and read no clock.
#include <liburing.h>
#include <sys/socket.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/floor/floor.hpp"

namespace mtperf::floors {
namespace {

constexpr uint32_t kSqEntries = 256;   // ring_size
constexpr unsigned kCqeBatch = 64;     // cqe_batch
constexpr long kWaitNs = 100'000'000;  // the worker's longest wait (kMaxPollNs)
constexpr uint32_t kEngineDepth = 8;   // the engine's operation slots per connection and direction
constexpr uint64_t kMaxProvidedBytes = 32u << 20;
constexpr int kSendFlags = MSG_NOSIGNAL | MSG_WAITALL;

// user_data: the flow's index, and whether the CQE is a receive's.
uint64_t tag(size_t flow, bool recv) {
  return (uint64_t(flow) << 1) | (recv ? 1 : 0);
}

bool transient(int rc) {
  return rc == -ETIME || rc == -EINTR || rc == -EAGAIN || rc == -EBUSY;
}

class Ring {
 public:
  // A ring for `conns` connections; `buf_size` > 0: with a provided-buffer ring of such buffers.
  Ring(uint32_t conns, uint32_t buf_size);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  void send(int fd, const char* data, uint32_t len, uint64_t user_data, bool quiet) {
    io_uring_sqe* sqe = get_sqe();
    io_uring_prep_send(sqe, fd, data, len, kSendFlags);
    if (quiet) sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
    io_uring_sqe_set_data64(sqe, user_data);
  }
  void recv(int fd, uint64_t user_data) {
    io_uring_sqe* sqe = get_sqe();
    io_uring_prep_recv_multishot(sqe, fd, nullptr, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = 0;
    io_uring_sqe_set_data64(sqe, user_data);
  }
  // A receive's CQE: gives its buffer back and arms the receive again where the kernel ended
  // it. Returns the bytes that came, 0 at the end of the stream, -errno when the receive is
  // over, or -ENOBUFS when nothing came and it is armed again.
  int32_t received(int fd, uint64_t user_data, int32_t res, uint32_t flags);
  // One turn: hands up to kCqeBatch CQEs to on_cqe(user_data, res, flags); with none there,
  // first submits what is queued and waits for one. Returns 0, or the wait's -errno (-ETIME:
  // nothing came in 100 ms).
  template <class F>
  int turn(F on_cqe);

 private:
  io_uring_sqe* get_sqe() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {  // the SQ ring is full: hand it to the kernel; then there is room
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
  }

  io_uring ring_{};
  io_uring_buf_ring* br_ = nullptr;
  uint32_t buf_size_ = 0, mask_ = 0;
  std::vector<char> bufs_;
  io_uring_cqe* cqes_[kCqeBatch];
};

Ring::Ring(uint32_t conns, uint32_t buf_size) : buf_size_(buf_size) {
  // The engine keeps room for as many closed connections again, with kEngineDepth slots per
  // direction each; its CQ holds two CQEs per slot.
  size_t slots = size_t(conns + std::max<uint32_t>(conns, 8)) * 2 * kEngineDepth;
  io_uring_params p{};
  p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  p.cq_entries =
      uint32_t(std::bit_ceil(std::max<size_t>(kSqEntries * 4, std::min<size_t>(slots * 2, 65536))));
  int rc = io_uring_queue_init_params(kSqEntries, &ring_, &p);
  if (rc != 0) {
    throw std::runtime_error(std::string("io_uring_queue_init (SINGLE_ISSUER|DEFER_TASKRUN, as "
                                         "-T uring by default; kernel >= 6.1): ") +
                             std::strerror(-rc));
  }
  if (buf_size == 0) return;
  uint64_t want = std::max<uint64_t>(uint64_t(conns) * 8, 16);
  want = std::min<uint64_t>(want, std::max<uint64_t>(kMaxProvidedBytes / buf_size, 2));
  uint32_t entries = uint32_t(std::bit_floor(std::min<uint64_t>(want, 32768)));
  bufs_.assign(size_t(entries) * buf_size, 'Z');  // touched now, not in the window
  // The ring's entries must be page-aligned memory shared with the kernel.
  size_t bytes = std::max<size_t>(entries * sizeof(io_uring_buf), 4096);
  void* mem = nullptr;
  if (posix_memalign(&mem, 4096, bytes) != 0) {
    io_uring_queue_exit(&ring_);
    throw std::runtime_error("no memory for the provided-buffer ring");
  }
  std::memset(mem, 0, bytes);
  br_ = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(br_);
  io_uring_buf_reg reg{};
  reg.ring_addr = uint64_t(uintptr_t(mem));
  reg.ring_entries = entries;
  reg.bgid = 0;
  rc = io_uring_register_buf_ring(&ring_, &reg, 0);
  if (rc != 0) {
    io_uring_queue_exit(&ring_);
    std::free(br_);
    throw std::runtime_error(std::string("io_uring_register_buf_ring (multishot, as -T uring "
                                         "by default; kernel >= 5.19): ") +
                             std::strerror(-rc));
  }
  mask_ = entries - 1;
  for (uint32_t i = 0; i < entries; ++i)
    io_uring_buf_ring_add(br_, bufs_.data() + size_t(i) * buf_size, buf_size, uint16_t(i),
                          int(mask_), int(i));
  io_uring_buf_ring_advance(br_, int(entries));
}

Ring::~Ring() {
  io_uring_queue_exit(&ring_);  // cancels what is armed and waits for it
  std::free(br_);
}

int32_t Ring::received(int fd, uint64_t user_data, int32_t res, uint32_t flags) {
  if (flags & IORING_CQE_F_BUFFER) {
    uint16_t bid = uint16_t(flags >> IORING_CQE_BUFFER_SHIFT);
    io_uring_buf_ring_add(br_, bufs_.data() + size_t(bid) * buf_size_, buf_size_, bid, int(mask_),
                          0);
    io_uring_buf_ring_advance(br_, 1);
  }
  if (res == -EINTR) res = -ENOBUFS;
  if (!(flags & IORING_CQE_F_MORE) && (res > 0 || res == -ENOBUFS)) recv(fd, user_data);
  return res;
}

template <class F>
int Ring::turn(F on_cqe) {
  unsigned n = io_uring_peek_batch_cqe(&ring_, cqes_, kCqeBatch);
  int rc = 0;
  if (n == 0) {
    __kernel_timespec ts{0, kWaitNs};
    io_uring_cqe* cqe = nullptr;
    rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
    rc = std::min(rc, 0);
    n = io_uring_peek_batch_cqe(&ring_, cqes_, kCqeBatch);
  }
  for (unsigned i = 0; i < n; ++i)
    on_cqe(cqes_[i]->user_data, cqes_[i]->res, cqes_[i]->flags);
  io_uring_cq_advance(&ring_, n);
  if (io_uring_sq_ready(&ring_) > 0 && io_uring_cq_ready(&ring_) > 0) io_uring_submit(&ring_);
  return rc;
}

// Runs a loop body that sets up its own ring (a SINGLE_ISSUER ring belongs to the thread that
// made it): a set-up failure is printed and ends the floor with an error.
template <class F>
void guarded(Shared& s, F body) {
  try {
    body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "floor: %s\n", e.what());
    s.fail(EIO);
  }
}

struct Flow {
  int fd = -1;
  uint64_t acc = 0;   // bytes toward the current request or response
  uint32_t sent = 0;  // bytes of a send cut short, already sent
  bool shut = false;
  bool done = false;
};

enum class Sent { failed, rest, whole };

// A send's CQE (res bytes of what was left of `msg`): the rest of a short send goes at once.
Sent sent(Ring& r, Flow& f, size_t i, const std::vector<char>& msg, int32_t res, bool quiet) {
  if (res < 0) return Sent::failed;
  f.sent += uint32_t(res);
  if (f.sent >= msg.size()) {
    f.sent = 0;
    return Sent::whole;
  }
  r.send(f.fd, msg.data() + f.sent, uint32_t(msg.size() - f.sent), tag(i, false), quiet);
  return Sent::rest;
}

}  // namespace

void uring_stream_send(int fd, uint32_t size, Shared& s) {
  guarded(s, [&] {
    Ring r(1, 0);
    std::vector<char> buf(size, 'Z');
    Flow f{fd};
    r.send(fd, buf.data(), size, tag(0, false), false);
    bool busy = true;  // a send is in the kernel
    while (busy) {
      int rc = r.turn([&](uint64_t, int32_t res, uint32_t) {
        Sent k = sent(r, f, 0, buf, res, false);
        if (k == Sent::failed) {
          s.fail(-res);
          busy = false;
        } else if (k == Sent::whole) {
          busy = !s.stop.load(std::memory_order_relaxed);
          if (busy) r.send(fd, buf.data(), size, tag(0, false), false);
        }
      });
      if (rc < 0 && !transient(rc)) s.fail(-rc);
      if ((rc < 0 && !transient(rc)) || (rc == -ETIME && s.stop.load())) break;
    }
  });
  ::shutdown(fd, SHUT_WR);
}

void uring_stream_recv(int fd, uint32_t size, Counter& c, Shared& s) {
  guarded(s, [&] {
    Ring r(1, size);
    r.recv(fd, tag(0, true));
    bool open = true;
    while (open) {
      int rc = r.turn([&](uint64_t, int32_t res, uint32_t flags) {
        int32_t n = r.received(fd, tag(0, true), res, flags);
        if (n > 0) {
          c.add(uint64_t(n));
        } else if (n != -ENOBUFS) {
          open = false;
        }
      });
      if (rc < 0 && !transient(rc)) break;
    }
  });
  ::shutdown(fd, SHUT_WR);
}

void uring_rr_client(const std::vector<int>& fds, const Options& o, Shared& s) {
  guarded(s, [&] {
    Ring r(uint32_t(fds.size()), o.recv_size());
    std::vector<char> req(o.req_size, 'Z');
    std::vector<Flow> flows(fds.size());
    for (size_t i = 0; i < fds.size(); ++i) {
      flows[i].fd = fds[i];
      r.send(fds[i], req.data(), o.req_size, tag(i, false), true);
      r.recv(fds[i], tag(i, true));
    }
    size_t live = flows.size();
    auto end = [&](Flow& f, int err) {
      if (err != 0 && !f.shut) s.fail(err);
      f.done = true;
      --live;
    };
    while (live > 0) {
      int rc = r.turn([&](uint64_t t, int32_t res, uint32_t flags) {
        Flow& f = flows[t >> 1];
        if (!(t & 1)) {  // a send's CQE: it failed, or ended short
          if (!f.done && sent(r, f, t >> 1, req, res, true) == Sent::failed) end(f, -res);
          return;
        }
        int32_t n = r.received(f.fd, t, res, flags);
        if (f.done || n == -ENOBUFS) return;
        if (n <= 0) {
          end(f, n < 0 ? -n : ECONNRESET);
          return;
        }
        f.acc += uint64_t(n);
        if (f.acc < o.resp_size) return;
        f.acc -= o.resp_size;
        s.counters[0].add(1);
        if (!s.stop.load(std::memory_order_relaxed)) {
          r.send(f.fd, req.data(), o.req_size, t & ~uint64_t(1), true);
        } else if (!f.shut) {
          ::shutdown(f.fd, SHUT_WR);  // the server answers with its own end
          f.shut = true;
        }
      });
      if (rc < 0 && !transient(rc)) s.fail(-rc);
      if ((rc < 0 && !transient(rc)) || (rc == -ETIME && s.stop.load())) break;
    }
  });
}

void uring_rr_server(const std::vector<int>& fds, const Options& o, Shared& s) {
  guarded(s, [&] {
    Ring r(uint32_t(fds.size()), o.recv_size());
    std::vector<char> resp(o.resp_size, 'Z');
    std::vector<Flow> flows(fds.size());
    for (size_t i = 0; i < fds.size(); ++i) {
      flows[i].fd = fds[i];
      r.recv(fds[i], tag(i, true));
    }
    size_t live = flows.size();
    while (live > 0) {
      int rc = r.turn([&](uint64_t t, int32_t res, uint32_t flags) {
        Flow& f = flows[t >> 1];
        if (!(t & 1)) {
          if (!f.done && sent(r, f, t >> 1, resp, res, true) == Sent::failed) {
            f.done = true;
            --live;
          }
          return;
        }
        int32_t n = r.received(f.fd, t, res, flags);
        if (f.done || n == -ENOBUFS) return;
        if (n <= 0) {
          ::shutdown(f.fd, SHUT_WR);
          f.done = true;
          --live;
          return;
        }
        for (f.acc += uint64_t(n); f.acc >= o.req_size; f.acc -= o.req_size)
          r.send(f.fd, resp.data(), o.resp_size, t & ~uint64_t(1), true);
      });
      if ((rc < 0 && !transient(rc)) || (rc == -ETIME && s.stop.load())) break;
    }
  });
}

}  // namespace mtperf::floors
