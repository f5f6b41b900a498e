#include "verbs/layout.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "verbs/flow_math.hpp"

namespace mtperf::rdma {

uint64_t cq_entries(const Layout& l) {
  return uint64_t(l.conns) * (l.sq_depth + l.recv_per_qp) + l.srq_depth;
}

namespace {

constexpr uint32_t kMaxSlots = 65536;  // a completion's buffer id is 16 bits

// The slots of a layout whose connections have `depth` receives or landing slots each (the
// sizes that follow from the depth filled in).
uint64_t place(Layout& l, uint32_t depth) {
  l.depth = depth;
  bool consumes = l.verb == Verb::send || l.verb == Verb::write_imm;
  if (l.srq) {
    uint32_t share = srq_share(l.depth);
    l.srq_depth = l.conns * share;
    l.granted = granted_credits(share);
  } else {
    // write and read consume receives only with the end-of-stream SEND: one, and a spare.
    l.recv_per_qp = consumes ? l.depth : 2;
    l.granted = consumes ? granted_credits(l.depth) : 0;
  }
  bool shared = l.srq && l.verb == Verb::send;
  l.shared_slots = shared ? l.srq_depth : 0;
  l.slots_per_conn = shared ? 0 : l.depth;
  l.ctrl_stride = (8 + kTrailerBytes * l.depth + 63) / 64 * 64;
  l.ctrl_slots = (l.ctrl_stride + l.slot_size - 1) / l.slot_size;
  l.conn_stride = l.ctrl_slots + l.slots_per_conn;
  uint64_t slots = l.shared_slots + uint64_t(l.conns) * l.conn_stride;
  l.slots = uint32_t(std::min<uint64_t>(slots, UINT32_MAX));
  return slots;
}

}  // namespace

Layout make_layout(const WorkerShape& shape, const RdmaSettings& s) {
  Layout l;
  l.verb = s.verb;
  uint32_t flows_conns = std::max<uint32_t>(shape.max_conns, 1);
  // crr: connections closed on the data path keep their entry until their last event.
  l.conns = flows_conns + (shape.per_transaction ? std::max<uint32_t>(flows_conns, 8) : 0);
  bool consumes = s.verb == Verb::send || s.verb == Verb::write_imm;
  l.srq = consumes &&
          (s.srq == SrqMode::on || (s.srq == SrqMode::automatic && flows_conns > kSrqAbove));
  l.recv_buffers = s.verb == Verb::send;
  l.slot_size = slot_bytes(std::max<uint32_t>(shape.buffer_size, 1));
  uint32_t depth = recv_depth(shape.queue_depth, shape.per_transaction, s.recv_depth);
  if (place(l, depth) > kMaxSlots) {
    // Fewer receives and landing slots per connection, so that a slot's index fits a
    // completion's buffer id.
    depth = std::max<uint32_t>(std::min<uint64_t>(depth, kMaxSlots / l.conns), 4);
    while (depth > 4 && place(l, depth) > kMaxSlots)
      --depth;
    if (place(l, depth) > kMaxSlots) {
      throw std::invalid_argument("rdma: " + std::to_string(l.conns) +
                                  " connections on one worker is more than it can give landing "
                                  "slots; use more threads (--threads)");
    }
  }
  // Sends in flight, reads in flight (read: one per slot), credit words and the end of stream.
  l.sq_depth = shape.queue_depth + (s.verb == Verb::read ? l.depth : 0) + kSqSpare;
  return l;
}

}  // namespace mtperf::rdma
