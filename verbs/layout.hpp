#pragma once
// How one worker's RDMA resources are laid out: its connection table, receives, landing slots
// and control words, sized by make_layout from the worker's shape (the transport fills it from
// the workload's engine configuration) and the options. Pure (no verbs header), so the memory
// budget can be computed before anything is allocated, and tested on any host.
//
// Registered memory of a worker, per device it uses:
//   pool  the workload's buffers (its engine configuration's count x size): sends come from there
//   area  [ shared slots | connection 0's block | connection 1's block | ... ], in slots of
//         slot_size bytes (a completion's buffer id is a slot's index):
//         shared slots: receive buffers of a shared receive queue (verb=send with an SRQ);
//         a connection's block: its control words (ctrl_slots slots: the credit word, 4 bytes
//         at 0, written by the peer; our count beside it; its trailers, kTrailerBytes per slot
//         from 8), then its own slots (receive buffers under send, landing slots the peer
//         writes into or reads from under the other verbs).
//         The area is registered for local access; each connection's block (or the part of it
//         its peer reaches: device_rules.hpp's remote_span) once more, for its peer alone, so
//         that no rkey reaches another connection's memory.
#include <cstdint>

#include "verbs/settings.hpp"

namespace mtperf::rdma {

struct Layout {
  Verb verb = Verb::send;
  uint32_t conns = 0;  // connection table: set-up's connections first, then crr's
  uint32_t depth = 0;  // receives and landing slots per connection
  bool srq = false;    // one shared receive queue for every connection of the worker
  uint32_t srq_depth = 0;
  uint32_t recv_per_qp = 0;     // receives posted per queue pair (0 with an SRQ)
  bool recv_buffers = false;    // receives carry a slot (send); else none: data lands elsewhere
  uint32_t granted = 0;         // credits each peer is granted (receives it may consume)
  uint32_t slot_size = 0;       // bytes
  uint32_t slots = 0;           // in the area, control words' slots included
  uint32_t shared_slots = 0;    // the shared receive queue's (send with an SRQ), first
  uint32_t slots_per_conn = 0;  // each connection's own (0 when receives share an SRQ's)
  uint32_t ctrl_stride = 0;     // bytes of control words per connection
  uint32_t ctrl_slots = 0;      // slots they take, first in the connection's block
  uint32_t conn_stride = 0;     // slots of a connection's block: ctrl_slots + slots_per_conn
  uint32_t sq_depth = 0;        // send-queue entries per queue pair wanted (the device may hold
                                // fewer: flow_math.hpp's send_queue_ask)

  uint64_t slots_bytes() const { return uint64_t(slots) * slot_size; }
  uint64_t area_bytes() const { return slots_bytes(); }
  // Slot i of connection `conn`'s own, and the first slot of its control words.
  constexpr uint32_t slot_index(uint32_t conn, uint32_t i) const {
    return shared_slots + conn * conn_stride + ctrl_slots + i;
  }
  constexpr uint32_t ctrl_index(uint32_t conn) const { return shared_slots + conn * conn_stride; }
  // The connection owning slot `index` (verbs whose slots are per connection), and which of its
  // slots it is.
  constexpr uint32_t conn_of_slot(uint32_t index) const {
    return (index - shared_slots) / conn_stride;
  }
  constexpr uint32_t slot_in_conn(uint32_t index) const {
    return (index - shared_slots) % conn_stride - ctrl_slots;
  }
};

// What a worker's resources are sized from.
struct WorkerShape {
  uint32_t worker = 0;           // which worker of its side (its completion vector)
  uint32_t max_conns = 1;        // connections and listeners alive at once
  uint32_t queue_depth = 16;     // outstanding work per connection and direction
  uint32_t buffer_size = 0;      // bytes of each of the workload's buffers
  bool per_transaction = false;  // crr: connections opened and closed on the data path
};

// Throws std::invalid_argument when the worker would hold more slots than a completion's
// 16-bit buffer id can name.
Layout make_layout(const WorkerShape& shape, const RdmaSettings& s);

// Completion-queue entries one device needs for a layout: every work request that can be
// outstanding at once (a queue pair in error completes all of them, signalled or not).
uint64_t cq_entries(const Layout& l);

}  // namespace mtperf::rdma
