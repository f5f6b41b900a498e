#include "transports/uring/uring_engine.hpp"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "transports/inet/inet.hpp"
#include "transports/uring/uring_ring.hpp"

namespace mtperf {

namespace {

constexpr uint64_t kMaxProvidedBytes = 32u << 20;  // memory for the provided-buffer ring

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
  cqes_.resize(kUringCqeBatch);
  backlog_.reserve(8);
  starved_.reserve(nops);
  setup_ring(settings);
  if (settings.multishot) setup_buf_ring();
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
  register_features(s);
}

// What the ring offers beyond the basics, each falling back with a note where the kernel or a
// limit says no: the file table, linked and skipped completions, the ring fd, the buffers.
void UringEngine::register_features(const UringSettings& s) {
  int rc = 0;
  if (s.fixed_files) {
    rc = io_uring_register_files_sparse(&ring_->ring, uint32_t(conns_.size()));
    eff_.fixed_files = rc == 0;
    if (rc != 0)
      eff_.notes.push_back("fixed_files: registering the file table failed (" + err_text(rc) + ")");
  }
  eff_.zerocopy = s.zerocopy;
  if (s.link && s.zerocopy) {
    eff_.notes.push_back("link: off, a zero-copy send completes at its notification");
  } else if (s.link && !(ring_->ring.features & IORING_FEAT_CQE_SKIP)) {
    eff_.notes.push_back("link: off, the kernel has no IOSQE_CQE_SKIP_SUCCESS");
  } else {
    eff_.link = s.link;
  }
  if (s.cqe_skip && s.zerocopy) {
    eff_.notes.push_back("cqe_skip: off, a zero-copy send completes at its notification");
  } else if (s.cqe_skip && !(ring_->ring.features & IORING_FEAT_CQE_SKIP)) {
    eff_.notes.push_back("cqe_skip: off, the kernel has no IOSQE_CQE_SKIP_SUCCESS");
  } else {
    eff_.cqe_skip = s.cqe_skip;
  }
  if (s.ring_fd) {
    rc = io_uring_register_ring_fd(&ring_->ring);
    eff_.ring_fd = rc == 1;
    if (rc != 1) {
      eff_.notes.push_back("ring_fd: io_uring_register_ring_fd failed (" +
                           err_text(rc < 0 ? rc : -EINVAL) + ")");
    }
  }
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

uint32_t UringEngine::provided_buffers(const EngineConfig& cfg, const UringSettings& s) {
  if (s.buf_ring_entries != 0) return s.buf_ring_entries;
  uint32_t size = std::max<uint32_t>(cfg.buffer_size, 1);
  // Room for a batch of receives on every connection before the worker hands buffers back.
  uint64_t want = std::max<uint64_t>(uint64_t(std::max<uint32_t>(cfg.max_conns, 1)) * 8, 16);
  want = std::min<uint64_t>(want, std::max<uint64_t>(kMaxProvidedBytes / size, 2));
  return uint32_t(std::bit_floor(std::min<uint64_t>(want, 32768)));
}

uint64_t UringEngine::overhead_bytes(const EngineConfig& cfg, const UringSettings& s) {
  uint64_t n = std::max<uint32_t>(cfg.max_conns, 1);
  n += std::max<uint64_t>(n, 8);  // closed connections keep their slot (see the constructor)
  uint64_t depth = std::bit_ceil(std::max<uint32_t>(cfg.queue_depth, 2));
  uint64_t ops = n * 2 * depth;
  uint64_t tables = n * (sizeof(Conn) + sizeof(int)) +
                    ops * (sizeof(OpSlot) + sizeof(uint32_t) * 2 + sizeof(Completion));
  uint64_t sq = std::clamp<uint32_t>(s.ring_size, 8, 32768);
  uint64_t cq = std::bit_ceil(std::max<uint64_t>(sq * 4, std::min<uint64_t>(ops * 2, 65536)));
  uint64_t rings = sq * (64 + 4) + cq * 16;  // SQEs, the SQ index array, CQEs
  uint64_t provided = 0;
  if (s.multishot) {
    uint64_t entries = provided_buffers(cfg, s);
    provided = entries * (std::max<uint32_t>(cfg.buffer_size, 1) + 16);
  }
  return tables + rings + provided;
}

void UringEngine::setup_buf_ring() {
  uint32_t size = std::max<uint32_t>(cfg_.buffer_size, 1);
  uint32_t entries = provided_buffers(cfg_, set_);
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  size_t bytes = (size_t(entries) * sizeof(io_uring_buf) + page - 1) / page * page;
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    eff_.notes.push_back("multishot: off, no memory for the buffer ring");
    return;
  }
  auto* br = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(br);
  io_uring_buf_reg reg{};
  reg.ring_addr = uint64_t(uintptr_t(mem));
  reg.ring_entries = entries;
  reg.bgid = kUringBufGroup;
  int rc = io_uring_register_buf_ring(&ring_->ring, &reg, 0);
  if (rc != 0) {
    munmap(mem, bytes);
    eff_.notes.push_back("multishot: off, io_uring_register_buf_ring failed (" + err_text(rc) +
                         "; kernel before 5.19?), single receives");
    return;
  }
  buf_ring_ = mem;
  buf_ring_bytes_ = bytes;
  buf_ring_mask_ = entries - 1;
  pbufs_ = BufferPool(entries, size);
  for (uint32_t i = 0; i < entries; ++i) {
    io_uring_buf_ring_add(br, pbufs_.get(i).data, size, uint16_t(i), int(buf_ring_mask_), int(i));
  }
  io_uring_buf_ring_advance(br, int(entries));
  eff_.multishot = true;
  eff_.buf_ring_entries = entries;
}

UringEngine::~UringEngine() {
  // Tearing the ring down cancels and waits for everything in flight; only then do the
  // descriptors and the provided buffers go.
  if (ring_) io_uring_queue_exit(&ring_->ring);
  if (buf_ring_) munmap(buf_ring_, buf_ring_bytes_);
  for (Conn& c : conns_) {
    if (c.fd >= 0) ::close(c.fd);
  }
}

Caps UringEngine::caps() const {
  Caps c;
  c.max_outstanding = depth_;
  c.provides_recv_buffers = eff_.multishot;
  c.linked_ops = eff_.link;
  c.unsignaled_sends = eff_.cqe_skip;
  return c;
}

void UringEngine::give_back(uint16_t buf_id) {
  auto* br = static_cast<io_uring_buf_ring*>(buf_ring_);
  io_uring_buf_ring_add(br, pbufs_.get(buf_id).data, pbufs_.size(), buf_id, int(buf_ring_mask_), 0);
  io_uring_buf_ring_advance(br, 1);
  --pbuf_held_;
}

void UringEngine::recycle(uint16_t buf_id) {
  give_back(buf_id);
  if (!starved_.empty()) rearm_starved();
}

void UringEngine::rearm_or_starve(uint32_t index) {
  if (pbuf_held_ <= buf_ring_mask_ && issue(index)) {
    ++rearms_;
  } else {
    starved_.push_back(index);
  }
}

void UringEngine::rearm_starved() {
  size_t keep = 0;
  for (uint32_t index : starved_) {
    if (ops_[index].dropped) {
      release(index);
    } else if (pbuf_held_ <= buf_ring_mask_ && issue(index)) {
      ++rearms_;
    } else {
      starved_[keep++] = index;
    }
  }
  starved_.resize(keep);
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

int UringEngine::open(const inet::ConnectSpec& spec) {
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

// The connection's operations that never reached the kernel end here, without a completion.
void UringEngine::release_unsubmitted(int id) {
  Conn& c = conns_[id];
  // Receives waiting for a provided buffer are in no SQE.
  size_t keep = 0;
  for (uint32_t index : starved_) {
    if (ops_[index].conn == id) {
      release(index);
    } else {
      starved_[keep++] = index;
    }
  }
  starved_.resize(keep);
  // Nor are queued sends.
  for (int32_t i = c.tx_head; i >= 0;) {
    int32_t next = ops_[i].tx_next;
    ops_[i].tx_next = -1;
    release(uint32_t(i));
    i = next;
  }
  c.tx_head = c.tx_tail = -1;
}

void UringEngine::close(int id) {
  Conn& c = conns_[id];
  if (c.fd < 0 || c.closing) return;
  unlink();
  release_unsubmitted(id);
  // An unsignaled send is done by the WorkReq::signal contract. Should it still be in the
  // kernel, the shutdown below ends it, and its CQE carries an old generation: dropped.
  bool quiet = c.quiet >= 0;
  retire_quiet(c);
  if (c.outstanding == 0) {
    if (quiet) ::shutdown(c.fd, SHUT_RDWR);
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
    io_uring_sqe_set_data64(sqe, kUringInternal);
  }
  submit();
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
    submit();
    sqe = io_uring_get_sqe(&ring_->ring);
  }
  return sqe;
}

void UringEngine::unlink() {
  if (open_link_ < 0) return;
  static_cast<io_uring_sqe*>(open_link_sqe_)->flags &=
      uint8_t(~(IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS));
  ops_[open_link_].skip = false;
  open_link_ = -1;
  open_link_sqe_ = nullptr;
}

int UringEngine::submit() {
  unlink();
  return io_uring_submit(&ring_->ring);
}

bool UringEngine::issue(uint32_t index, bool link, bool follows) {
  OpSlot& o = ops_[index];
  Conn& c = conns_[o.conn];
  if (!follows) unlink();  // nothing may come between a linked send and its recv
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
      if (eff_.multishot) {
        io_uring_prep_recv_multishot(sqe, fd, nullptr, 0, 0);
        sqe->flags |= IOSQE_BUFFER_SELECT;
        sqe->buf_group = kUringBufGroup;
      } else {
        io_uring_prep_recv(sqe, fd, data, len, 0);
        // The answer to a linked send cannot be there yet: wait for it without trying first.
        if (follows) sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
      }
      break;
    case Op::accept:
      io_uring_prep_accept(sqe, fd, nullptr, nullptr, SOCK_CLOEXEC);
      break;
    default:
      break;
  }
  if (eff_.fixed_files) sqe->flags |= IOSQE_FIXED_FILE;
  // A failure, and a TCP send cut short (MSG_WAITALL: short is a failure), still has a CQE.
  if (o.quiet) sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
  io_uring_sqe_set_data64(sqe, (uint64_t(o.gen) << 32) | index);
  if (link) {
    sqe->flags |= IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
    o.skip = true;
    open_link_ = int32_t(index);
    open_link_sqe_ = sqe;
  }
  return true;
}

int UringEngine::post(int id, std::span<const WorkReq> reqs) {
  Conn& c = conns_[id];
  if (c.fd < 0 || c.closing) return -EBADF;
  int n = 0;
  for (const WorkReq& r : reqs) {
    if (r.op == Op::write || r.op == Op::read) return n > 0 ? n : -EOPNOTSUPP;
    if ((r.op == Op::accept) != c.listener) return n > 0 ? n : -EINVAL;
    if (r.op == Op::send) {
      retire_quiet(c);  // the workload knows the previous one is done
      kick_tx(id);
    }
    uint32_t& dir = r.op == Op::send ? c.sends : c.recvs;
    if (dir == depth_ || free_ops_.empty()) break;
    uint32_t index = free_ops_.back();
    OpSlot& o = ops_[index];
    uint32_t gen = o.gen + 1;
    o = OpSlot{};
    o.gen = gen;
    o.conn = id;
    o.op = r.op;
    o.buf = r.buf;
    o.cookie = r.cookie;
    if (r.op == Op::send && c.proto == Proto::tcp && (c.tx_issued >= 0 || c.tx_head >= 0)) {
      // Another send of this stream is still in the kernel: this one waits its turn, signalled
      // (a skipped CQE would leave the queue behind it waiting), and outside any chain.
      if (c.tx_tail >= 0) {
        ops_[c.tx_tail].tx_next = int32_t(index);
      } else {
        c.tx_head = int32_t(index);
      }
      c.tx_tail = int32_t(index);
      free_ops_.pop_back();
      ++dir;
      ++c.outstanding;
      ++n;
      continue;
    }
    // The recv that answers a linked send on this connection joins its chain. With multishot
    // no recv ever follows (it stays armed), so no chain is begun.
    int32_t head = open_link_;
    bool follows = head >= 0 && r.op == Op::recv && !eff_.multishot && ops_[head].conn == id;
    bool link = r.link && r.op == Op::send && eff_.link && !eff_.multishot;
    // A linked send is already reported from its recv's CQE: it stays an ordinary op (the
    // workload ignores the success of an unsignaled send, whoever reports it).
    o.quiet = !r.signal && r.op == Op::send && eff_.cqe_skip && !link;
    if (!issue(index, link, follows)) break;
    if (o.quiet) c.quiet = int32_t(index);
    if (r.op == Op::send && c.proto == Proto::tcp) c.tx_issued = int32_t(index);
    if (follows && open_link_ == head) {  // get_sqe did not have to submit the head alone
      ops_[head].link_peer = int32_t(index);
      o.link_peer = head;
      open_link_ = -1;
      open_link_sqe_ = nullptr;
    }
    free_ops_.pop_back();
    ++dir;
    ++c.outstanding;
    ++n;
  }
  return n;
}

int UringEngine::flush() {
  if (io_uring_sq_ready(&ring_->ring) == 0) return 0;
  int rc = submit();
  return rc == -EINTR || rc == -EAGAIN || rc == -EBUSY ? 0 : rc;
}

void UringEngine::kick_tx(int id) {
  Conn& c = conns_[id];
  if (c.tx_issued >= 0 || c.tx_head < 0 || c.closing) return;
  uint32_t index = uint32_t(c.tx_head);
  if (!issue(index)) return;  // no SQE: the next completion or post on the ring tries again
  c.tx_head = ops_[index].tx_next;
  if (c.tx_head < 0) c.tx_tail = -1;
  ops_[index].tx_next = -1;
  c.tx_issued = int32_t(index);
}

void UringEngine::release(uint32_t index) {
  OpSlot& o = ops_[index];
  Conn& c = conns_[o.conn];
  if (c.tx_issued == int32_t(index)) c.tx_issued = -1;  // an unsignaled send, retired
  (o.op == Op::send ? c.sends : c.recvs)--;
  int id = o.conn;
  if (c.quiet == int32_t(index)) c.quiet = -1;
  o.conn = -1;
  free_ops_.push_back(index);
  if (--c.outstanding == 0 && c.closing) finalize_close(id);
}

void UringEngine::retire_quiet(Conn& c) {
  if (c.quiet >= 0) release(uint32_t(c.quiet));  // release() clears c.quiet
}

}  // namespace mtperf
