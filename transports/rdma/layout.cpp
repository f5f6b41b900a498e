#include "transports/rdma/layout.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "transports/rdma/flow_math.hpp"

namespace mtperf::rdma {

namespace {
constexpr uint32_t kMaxSlots = 65536;  // Completion::buf_id is 16 bits
}

Layout make_layout(const EngineConfig& cfg, const RdmaSettings& s, bool per_transaction) {
  Layout l;
  l.verb = s.verb;
  uint32_t flows_conns = std::max<uint32_t>(cfg.max_conns, 1);
  // crr: connections closed on the data path keep their entry until their last event.
  l.conns = flows_conns + (per_transaction ? std::max<uint32_t>(flows_conns, 8) : 0);
  l.depth = recv_depth(cfg.queue_depth, per_transaction, s.recv_depth);
  if (uint64_t(l.conns) * l.depth > kMaxSlots) {
    l.depth = std::max<uint32_t>(kMaxSlots / l.conns, 4);
    if (uint64_t(l.conns) * l.depth > kMaxSlots) {
      throw std::invalid_argument("rdma: " + std::to_string(l.conns) +
                                  " connections on one worker is more than it can give landing "
                                  "slots; use more threads (--threads)");
    }
  }
  bool consumes = s.verb == Verb::send || s.verb == Verb::write_imm;
  l.srq = consumes &&
          (s.srq == SrqMode::on || (s.srq == SrqMode::automatic && flows_conns > kSrqAbove));
  l.recv_buffers = s.verb == Verb::send;
  if (l.srq) {
    uint32_t share = srq_share(l.depth);
    l.srq_depth = l.conns * share;
    l.granted = granted_credits(share);
  } else {
    // write and read consume receives only with the end-of-stream SEND: one, and a spare.
    l.recv_per_qp = consumes ? l.depth : 2;
    l.granted = consumes ? granted_credits(l.depth) : 0;
  }
  l.slot_size = slot_bytes(std::max<uint32_t>(cfg.buffer_size, 1));
  bool shared_slots = l.srq && s.verb == Verb::send;
  l.slots_per_conn = shared_slots ? 0 : l.depth;
  l.slots = shared_slots ? l.srq_depth : l.conns * l.depth;
  l.ctrl_stride = (8 + kTrailerBytes * l.depth + 63) / 64 * 64;
  // Sends in flight, reads in flight (read: one per slot), credit words and the end of stream.
  l.sq_depth = cfg.queue_depth + (s.verb == Verb::read ? l.depth : 0) + kSqSpare;
  return l;
}

uint64_t cq_entries(const Layout& l) {
  return uint64_t(l.conns) * (l.sq_depth + l.recv_per_qp) + l.srq_depth;
}

}  // namespace mtperf::rdma
