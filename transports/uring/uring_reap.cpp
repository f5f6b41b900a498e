// The io_uring engine's completion side: CQEs become Completions (uring_engine.hpp).
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "platform/clock.hpp"
#include "transports/inet/inet.hpp"
#include "transports/uring/uring_ring.hpp"

namespace mtperf {
namespace {

Completion make(uint64_t cookie, int32_t res, uint16_t flags = 0) {
  Completion c;
  c.cookie = cookie;
  c.bytes = res;
  c.flags = uint16_t(flags | (res < 0 ? kCompError : 0));
  return c;
}

}  // namespace

// A send's or an accept's own CQE: the operation is retried (EINTR, a short TCP send), or ends
// with `res`, its result. False while it goes on: retried, or its zero-copy buffer not yet
// released.
inline bool UringEngine::op_ended(uint32_t index, int32_t& res, uint32_t flags) {
  OpSlot& o = ops_[index];
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
  // The stream's bytes of this send are all in the kernel (or it failed): the next may go.
  if (conns_[o.conn].tx_issued == int32_t(index)) {
    conns_[o.conn].tx_issued = -1;
    kick_tx(o.conn);
  }
  return o.notifs == 0;  // else wait for the buffer to be released
}

int UringEngine::handle(uint64_t user_data, int32_t res, uint32_t flags, Completion* out) {
  if (user_data == kUringInternal) return 0;
  uint32_t index = uint32_t(user_data);
  OpSlot& o = ops_[index];
  // The CQE of an unsignaled send that was let go of before it ended (its connection closed
  // under it, a UDP request given up on): its slot is free or holds a newer operation.
  if (o.conn < 0 || o.gen != uint32_t(user_data >> 32)) return 0;
  if (o.op == Op::recv) return handle_recv(index, res, flags, out);
  if (o.link_peer >= 0) {
    // A linked send has a CQE only when it failed (or came up short), and then the kernel ends
    // its recv without one (REQ_F_SKIP_LINK_CQES): the recv goes on alone, or ends if dropped.
    uint32_t r = uint32_t(o.link_peer);
    o.link_peer = -1;
    ops_[r].link_peer = -1;
    if (o.dropped || ops_[r].dropped || !issue(r)) release(r);
  }
  o.skip = false;
  if (flags & IORING_CQE_F_NOTIF) {  // zero-copy: the kernel is done with (part of) the buffer
    if (--o.notifs > 0 || !o.sent_all) return 0;
    res = o.result;
  } else if (o.dropped) {
    if (flags & IORING_CQE_F_MORE) {
      ++o.notifs;  // the buffer is not free before its notification
      o.sent_all = true;
    } else {
      release(index);
    }
    return 0;
  } else if (!op_ended(index, res, flags)) {
    return 0;
  }
  if (o.dropped) {
    release(index);
    return 0;
  }
  out[0] = make(o.cookie, res);
  release(index);
  return 1;
}

int UringEngine::handle_recv(uint32_t index, int32_t res, uint32_t flags, Completion* out) {
  OpSlot& o = ops_[index];
  int n = 0;
  if (o.link_peer >= 0) {
    // The recv of a send->recv chain ran: its send succeeded, and had no CQE of its own.
    uint32_t s = uint32_t(o.link_peer);
    o.link_peer = -1;
    ops_[s].link_peer = -1;
    if (!ops_[s].dropped) out[n++] = make(ops_[s].cookie, int32_t(ops_[s].buf.len));
    release(s);
  }
  bool has_buf = (flags & IORING_CQE_F_BUFFER) != 0;
  uint16_t bid = uint16_t(flags >> IORING_CQE_BUFFER_SHIFT);
  if (has_buf) ++pbuf_held_;
  bool more = (flags & IORING_CQE_F_MORE) != 0;
  if (o.dropped) {
    if (has_buf) give_back(bid);
    if (!more) release(index);
    return n;
  }
  if (!eff_.multishot) {
    if (res == -EINTR && issue(index)) return n;
    out[n++] = make(o.cookie, res);
    release(index);
    return n;
  }
  if (res > 0 && has_buf) {
    Completion c = make(o.cookie, res, kCompMore | kCompBuffer);
    c.buf_id = bid;
    c.data = pbufs_.get(bid).data;
    out[n++] = c;
    // The kernel ended the receive (CQ overflow, ...): arm it again; it stays one operation.
    if (!more) rearm_or_starve(index);
    return n;
  }
  if (res == -ENOBUFS || res == -EINTR) {  // out of provided buffers: again once one is back
    if (has_buf) give_back(bid);
    if (!more) rearm_or_starve(index);
    return n;
  }
  // End of stream or an error: the receive is over for the worker too.
  if (has_buf) give_back(bid);
  if (more) return n;
  out[n++] = make(o.cookie, res);
  release(index);
  return n;
}

int UringEngine::reap(std::span<Completion> out) {
  io_uring& ring = ring_->ring;
  size_t n = 0;
  while (backlog_head_ < backlog_.size() && n < out.size())
    out[n++] = backlog_[backlog_head_++];
  if (backlog_head_ < backlog_.size()) return int(n);
  backlog_.clear();
  backlog_head_ = 0;
  while (n < out.size()) {
    // A CQE gives at most two completions (a linked send and its recv): peek no more than fit,
    // so at most one waits in the backlog.
    size_t room = out.size() - n;
    unsigned want = unsigned(std::min<size_t>((room + 1) / 2, cqes_.size()));
    auto** batch = reinterpret_cast<io_uring_cqe**>(cqes_.data());
    unsigned got = io_uring_peek_batch_cqe(&ring, batch, want);
    if (got == 0) break;
    for (unsigned i = 0; i < got; ++i) {
      Completion two[2];
      int k = handle(batch[i]->user_data, batch[i]->res, batch[i]->flags, two);
      for (int j = 0; j < k; ++j) {
        if (n < out.size()) {
          out[n++] = two[j];
        } else {
          backlog_.push_back(two[j]);
        }
      }
    }
    io_uring_cq_advance(&ring, got);
    cqes_seen_ += got;
  }
  return int(n);
}

bool UringEngine::needs_enter() const {
  return defer_taskrun_ || io_uring_sq_ready(&ring_->ring) > 0 ||
         io_uring_cq_has_overflow(&ring_->ring);
}

int UringEngine::poll(std::span<Completion> out, Wait wait, int64_t timeout_ns) {
  io_uring& ring = ring_->ring;
  if (out.size() > set_.cqe_batch) out = out.first(std::max<uint32_t>(set_.cqe_batch, 1));
  if (!starved_.empty()) rearm_starved();
  int n = reap(out);
  if (n > 0) {
    // What the worker queued goes in with the next wait, one io_uring_enter for both, unless
    // there are more CQEs to hand out first, which would hold it back.
    if (io_uring_sq_ready(&ring) > 0 && io_uring_cq_ready(&ring) > 0) submit();
    return n;
  }
  int64_t deadline = now_ns() + std::max<int64_t>(timeout_ns, 0);
  for (;;) {
    if (wait == Wait::block && timeout_ns > 0) {
      int64_t left = std::max<int64_t>(deadline - now_ns(), 0);
      __kernel_timespec ts{left / 1000000000, left % 1000000000};
      io_uring_cqe* cqe = nullptr;
      unlink();
      int rc = io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ts, nullptr);
      if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) return rc;
    } else if (needs_enter()) {
      unlink();
      int rc = io_uring_submit_and_get_events(&ring);
      if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) return rc;
    }
    n = reap(out);
    if (n > 0 || wait == Wait::none || now_ns() >= deadline) return n;
  }
}

}  // namespace mtperf
