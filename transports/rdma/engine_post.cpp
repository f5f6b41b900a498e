// The rdma engine's send side: queued requests become one ibv_post_send chain per queue pair,
// within the send queue's room and the peer's credits, selectively signalled (engine.hpp).
#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

#include "transports/rdma/engine.hpp"
#include "verbs/flow_math.hpp"

namespace mtperf::rdma {

namespace {

uint32_t inline_limit(const DeviceRes& d) {
  return d.max_inline;  // what the device granted, within -O inline
}

}  // namespace

void RdmaEngine::mark_dirty(int id) {
  Conn& c = conns_[id];
  if (c.dirty) return;
  c.dirty = true;
  dirty_.push_back(id);
}

int RdmaEngine::flush() {
  for (size_t i = 0; i < dirty_.size(); ++i) {
    int id = dirty_[i];
    if (conns_[id].dirty) post_conn(id);
  }
  dirty_.clear();
  return 0;
}

uint32_t RdmaEngine::build_wr(int id, const Pending& p, ibv_send_wr& wr, ibv_sge* sge) {
  Conn& c = conns_[id];
  wr = ibv_send_wr{};
  wr.sg_list = sge;
  if (p.kind == kSqFin) {
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.imm_data = htonl(c.reposted);
    return 0;
  }
  if (p.kind == kSqFlush) {
    add_credit_write(id, wr, sge[0]);
    return 1;
  }
  auto landing = [&](uint64_t n) {
    return c.peer.addr + uint64_t(n % c.peer.slots) * c.peer.slot_size;
  };
  if (p.kind == kSqRead) {
    uint32_t i = lay_.slot_in_conn(p.slot);
    sge[0] = {uint64_t(uintptr_t(slot_ptr(p.slot))), mode_.read_size, c.dev->area_mr->lkey};
    wr.opcode = IBV_WR_RDMA_READ;
    wr.wr.rdma.remote_addr = landing(i);
    wr.wr.rdma.rkey = c.peer.rkey;
    wr.num_sge = 1;
    return 1;
  }
  uint32_t len = p.buf.len;
  sge[0] = {uint64_t(uintptr_t(p.buf.data)), len, c.dev->pool_lkey()};
  wr.num_sge = 1;
  switch (verb_) {
    case Verb::send:
      wr.opcode = IBV_WR_SEND_WITH_IMM;
      wr.imm_data = htonl(c.reposted);
      break;
    case Verb::write_imm:
      wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
      wr.imm_data = htonl(c.reposted);
      wr.wr.rdma.remote_addr = landing(c.writes++);
      break;
    case Verb::write:
      wr.opcode = IBV_WR_RDMA_WRITE;
      if (mode_.memory_poll) {
        // Right-aligned against the trailer the peer polls (flow_math.hpp).
        uint32_t s = slot_of(c.writes, c.peer.slots);
        auto* t = reinterpret_cast<uint8_t*>(res_->ctrl(uint32_t(id))) + 8 +
                  kTrailerBytes * (s % lay_.depth);
        encode_trailer(t, len, slot_stamp(c.writes, c.peer.slots));
        sge[1] = {uint64_t(uintptr_t(t)), kTrailerBytes, c.dev->area_mr->lkey};
        wr.num_sge = 2;
        wr.wr.rdma.remote_addr = landing(s) + c.peer.slot_size - kTrailerBytes - len;
        len += kTrailerBytes;
        ++c.writes;
      } else {
        wr.wr.rdma.remote_addr = landing(c.writes++);
      }
      break;
    case Verb::read:
      break;
  }
  wr.wr.rdma.rkey = c.peer.rkey;  // unused by a SEND
  if (len <= inline_limit(*c.dev)) wr.send_flags |= IBV_SEND_INLINE;
  return uint32_t(wr.num_sge);
}

void RdmaEngine::add_credit_write(int id, ibv_send_wr& wr, ibv_sge& sge) {
  Conn& c = conns_[id];
  // Our count goes out from the connection's control words (4 bytes after the word the peer
  // writes into); inline where the device allows, so the next count cannot overtake it.
  auto* out = reinterpret_cast<uint32_t*>(res_->ctrl(uint32_t(id)) + 4);
  *out = htonl(c.reposted);
  sge = {uint64_t(uintptr_t(out)), 4, c.dev->area_mr->lkey};
  wr = ibv_send_wr{};
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.rdma.remote_addr = c.peer.credit_addr;
  wr.wr.rdma.rkey = c.peer.rkey;
  if (inline_limit(*c.dev) >= 4) wr.send_flags |= IBV_SEND_INLINE;
  ++ctr_.credit_writes;
}

RdmaEngine::Batch RdmaEngine::gather(int id, uint32_t room) {
  Conn& c = conns_[id];
  Batch b;
  uint32_t credits = consumes_ ? credits_left(c.peer.credits, c.sent, c.peer_reposted) : UINT32_MAX;
  ibv_sge* sg = sges_.data();
  while (c.pend_head != c.pend_tail && b.n < room && b.n + 1 < wrs_.size()) {
    const Pending& p = pend_[size_t(id) * (pend_mask_ + 1) + (c.pend_head & pend_mask_)];
    bool takes = consumes_ && (p.kind == kSqSend || p.kind == kSqQuiet);
    if (takes && credits == 0) {
      if (!c.starved) {
        c.starved = true;
        starved_.push_back(id);
        ++ctr_.credit_waits;
      }
      break;
    }
    ibv_send_wr& wr = wrs_[b.n];
    sg += build_wr(id, p, wr, sg);
    b.tells |= wr.opcode == IBV_WR_SEND_WITH_IMM || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
    if (takes) {
      --credits;
      ++c.sent;
    }
    int32_t bytes = p.kind == kSqRead    ? int32_t(mode_.read_size)
                    : p.kind == kSqFlush ? 0
                                         : int32_t(p.buf.len);
    sq_entry(id, c.sq_tail + b.n) = {p.cookie, bytes, p.kind, p.slot};
    if (p.kind != kSqQuiet) b.last_wanted = b.n;
    ++c.pend_head;
    ++b.n;
  }
  // Our receives' count goes back with the chain's immediates, or else by a write once due.
  if (consumes_ && !b.tells && b.n < room &&
      credit_update_due(c.reposted, c.announced, lay_.granted)) {
    add_credit_write(id, wrs_[b.n], *sg);
    sq_entry(id, c.sq_tail + b.n) = {0, 0, kSqCredit, 0};
    b.tells = true;
    ++b.n;
  }
  return b;
}

void RdmaEngine::link_chain(int id, const Batch& b) {
  Conn& c = conns_[id];
  uint32_t cap = c.dev->sq_cap;
  uint32_t every =
      stream_ ? signal_interval(signal_every_, stream_window(tx_depth_, cap)) : signal_every_;
  uint32_t in_flight = c.sq_tail - c.sq_head;
  for (uint32_t i = 0; i < b.n; ++i) {
    uint8_t kind = sq_entry(id, c.sq_tail + i).kind;
    bool wanted = kind == kSqSend || kind == kSqRead || kind == kSqFin;
    // Reads deliver data, FINs end streams and a flush is there to complete what is before it:
    // each is signalled.
    bool sig = kind == kSqRead || kind == kSqFin || kind == kSqFlush ||
               signal_wr(wanted, !stream_ && i == b.last_wanted, c.unsig_run, every,
                         cap - (in_flight + i + 1), stream_);
    c.unsig_run = sig ? 0 : c.unsig_run + 1;
    if (sig) c.sig_end = c.sq_tail + i + 1;
    if (kind == kSqSend) c.want_end = c.sq_tail + i + 1;
    ibv_send_wr& wr = wrs_[i];
    if (sig) wr.send_flags |= IBV_SEND_SIGNALED;
    wr.wr_id = make_wr_id(uint32_t(id), c.gen, false, c.sq_tail + i);
    wr.next = i + 1 < b.n ? &wrs_[i + 1] : nullptr;
    ++(sig ? ctr_.signalled : ctr_.unsignaled);
  }
}

void RdmaEngine::note_tail(int id) {
  Conn& c = conns_[id];
  if (c.tail_listed || !stream_ || !tail_needs_flush(c.sq_head, c.want_end, c.sig_end)) return;
  c.tail_listed = true;
  tails_.push_back(id);
}

bool RdmaEngine::flush_tails() {
  bool queued = false;
  size_t keep = 0;
  for (size_t i = 0; i < tails_.size(); ++i) {
    int id = tails_[i];
    Conn& c = conns_[id];
    if (!c.tail_listed) continue;  // closed since
    if (c.st == St::up && c.pend_head != c.pend_tail) {
      tails_[keep++] = id;  // what is queued goes first (credits permitting); then we look again
      continue;
    }
    c.tail_listed = false;
    if (c.st != St::up || !tail_needs_flush(c.sq_head, c.want_end, c.sig_end)) continue;
    Pending p;
    p.kind = kSqFlush;
    queued |= push_pending(c, id, p);
  }
  tails_.resize(keep);
  return queued;
}

void RdmaEngine::post_conn(int id) {
  Conn& c = conns_[id];
  c.dirty = false;
  if (c.st != St::up) return;
  Batch b = gather(id, c.dev->sq_cap - (c.sq_tail - c.sq_head));
  if (b.n == 0) return;
  if (b.tells) c.announced = c.reposted;
  link_chain(id, b);
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(c.qp, wrs_.data(), &bad);
  ++ctr_.chains;
  uint32_t posted = rc == 0 ? b.n : uint32_t(bad - wrs_.data());
  if (rc != 0) {
    // What was not posted fails with the connection (its sends complete with the error).
    for (uint32_t i = posted; i < b.n; ++i) {
      const SqEntry& e = sq_entry(id, c.sq_tail + i);
      if (e.kind == kSqSend || e.kind == kSqQuiet) {
        push_ready({e.cookie, -rc, kCompError, 0, nullptr});
      }
    }
  }
  c.sq_tail += posted;
  note_tail(id);
  if (rc != 0) {
    // Unsignaled requests posted before complete only with a later signalled one, which may
    // never come now: the queue pair goes to the error state, where every request it holds
    // completes (flushed), and the connection's sends are retired with the failure.
    ibv_qp_attr err{};
    err.qp_state = IBV_QPS_ERR;
    vx_.modify_qp(c.qp, &err, IBV_QP_STATE);
    fail_conn(id, rc, std::string("ibv_post_send: ") + std::strerror(rc));
  }
}

}  // namespace mtperf::rdma
