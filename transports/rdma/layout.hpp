#pragma once
// How one worker's RDMA resources are sized, from the workload's EngineConfig and the options:
// its connection table, receives, landing slots and control words. Pure (no verbs header), so
// the memory budget can be computed before anything is allocated, and tested on any host.
//
// Registered memory of a worker, per device it uses:
//   pool  the workload's buffers (EngineConfig::buffers x buffer_size): sends come from there
//   area  [ slots: slots x slot_size | control: conns x ctrl_stride ]
//         slots: receive buffers (verb=send), or each connection's landing slots (the peer
//         writes into them, or reads from them); control: each connection's credit word
//         (4 bytes at 0, written by the peer) and its trailers (kTrailerBytes per slot, from 8)
#include <cstdint>

#include "transports/api/transport.hpp"
#include "transports/rdma/settings.hpp"

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
  uint32_t slots = 0;           // in the area
  uint32_t slots_per_conn = 0;  // each connection's own (0 when receives share an SRQ's)
  uint32_t ctrl_stride = 0;     // bytes of control words per connection
  uint32_t sq_depth = 0;        // send-queue entries per queue pair wanted (the device may hold
                                // fewer: flow_math.hpp's send_queue_ask)

  uint64_t slots_bytes() const { return uint64_t(slots) * slot_size; }
  uint64_t area_bytes() const { return slots_bytes() + uint64_t(conns) * ctrl_stride; }
  // The connection owning slot `index` (verbs whose slots are per connection).
  uint32_t conn_of_slot(uint32_t index) const { return index / slots_per_conn; }
};

// Throws std::invalid_argument when the worker would hold more slots than a completion's
// 16-bit buffer id can name.
Layout make_layout(const EngineConfig& cfg, const RdmaSettings& s, bool per_transaction);

// Completion-queue entries one device needs for a layout: every work request that can be
// outstanding at once (a queue pair in error completes all of them, signalled or not).
uint64_t cq_entries(const Layout& l);

}  // namespace mtperf::rdma
