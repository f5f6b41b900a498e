#pragma once
// One direction of an emulated line: a transmit queue of segmented PDUs, the pacer that lets
// each PDU onto the line when its last cell would have left at the line's cell rate, the
// propagation delay, and fault injection on the cells as they arrive. Pure logic, time passed in.
//
//   enqueue(SDU) ──segment──> [queued PDUs] ──pacer──> [in flight, due = sent + delay]
//                                                          ──faults──> on_cell(53 bytes)
//
// Storage is allocated once, in the constructor: a ring of cells and a ring of PDU descriptors.
// A PDU occupies consecutive cells of the ring (when it does not fit before the end, it starts
// again at cell 0), so segmentation writes straight into the ring and delivery reads from it.
// Nothing on the per-PDU or per-cell path allocates, throws or formats.
//
// Backpressure: enqueue() refuses a PDU when the rings are full and says so; the caller keeps
// the packet (and stops reading from its source) rather than dropping it.
//
// Single-threaded; counters() may be read from any thread.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "atmlink/aal5.hpp"
#include "atmlink/counters.hpp"
#include "atmlink/faults.hpp"
#include "atmlink/line.hpp"

namespace mtperf::atm {

inline constexpr std::uint64_t kNoEvent = std::numeric_limits<std::uint64_t>::max();

struct WireConfig {
  PacerConfig pacer;
  FaultConfig faults;
  std::uint64_t propagation_ns = 0;           // one-way delay added to every PDU, 0..1 s
  std::size_t max_pdu_cells = kAal5MaxCells;  // the largest PDU enqueue() must accept
  std::size_t queue_pdus = 8;  // PDUs that may wait for the line beyond those in flight
};

struct alignas(64) WireCounters {
  Counter pdus_sent, cells_sent;  // onto the line (charged to the pacer)
  Counter cells_delivered;        // handed to the receiver after faults
  Counter refused;                // enqueue() calls refused for lack of room (backpressure)
  Counter segment_errors;         // SDUs that could not be segmented (too large)
};

class Wire {
 public:
  // Throws std::invalid_argument when the config is out of range.
  explicit Wire(const WireConfig& config);

  // Whether a PDU of `cells` cells would be accepted now.
  bool has_room(std::size_t cells) const;
  // PDUs waiting for the line (not yet sent).
  std::size_t queued() const { return desc_count_ - in_flight_; }

  enum class Enqueue : std::uint8_t { kOk, kFull, kTooLarge };
  // Segments sdu onto the queue as the cells of one PDU on params.vc.
  Enqueue enqueue(const SduParts& sdu, const SegmentParams& params);

  // Lets due PDUs onto the line and hands every cell that has arrived by now_ns to on_cell, in
  // order, after fault injection (lost cells are not handed over). on_cell may enqueue on this
  // wire. Returns the time of the next event (a PDU due or arriving), or kNoEvent.
  template <class OnCell>
  std::uint64_t advance(std::uint64_t now_ns, OnCell&& on_cell);

  // Inside advance()'s on_cell: when the arriving PDU's last cell left the sender, by the
  // pacer's cell clock (ns of the clock passed in).
  std::uint64_t arriving_sent_ns() const { return desc(0).left_ns; }
  const WireCounters& counters() const { return counters_; }
  const FaultCounters& fault_counters() const { return faults_.counters(); }
  const Pacer& pacer() const { return pacer_; }
  const WireConfig& config() const { return config_; }

 private:
  struct Desc {
    std::uint32_t first = 0;  // first cell in the ring
    std::uint32_t cells = 0;
    std::uint64_t due_ns = 0;   // in flight: when its cells arrive
    std::uint64_t left_ns = 0;  // in flight: when its last cell left, by the pacer's clock
  };
  std::uint8_t* cell_at(std::uint32_t i) { return ring_.data() + std::size_t(i) * kCellBytes; }
  Desc& desc(std::size_t i) { return descs_[(desc_head_ + i) % descs_.size()]; }
  const Desc& desc(std::size_t i) const { return descs_[(desc_head_ + i) % descs_.size()]; }
  // Where a PDU of `cells` cells would start, or -1 when there is no room.
  std::int64_t place(std::size_t cells) const;
  void send_due(std::uint64_t now_ns);
  void release_head();

  WireConfig config_;
  Pacer pacer_;
  FaultInjector faults_;
  std::vector<std::uint8_t> ring_;  // ring_cells_ * 53 bytes
  std::uint32_t ring_cells_ = 0;
  std::uint32_t write_ = 0;  // next free cell, when the ring is not empty
  std::vector<Desc> descs_;
  std::size_t desc_head_ = 0, desc_count_ = 0, in_flight_ = 0;
  WireCounters counters_;
};

template <class OnCell>
std::uint64_t Wire::advance(std::uint64_t now_ns, OnCell&& on_cell) {
  for (;;) {
    send_due(now_ns);
    if (in_flight_ == 0 || desc(0).due_ns > now_ns) break;
    // Copy the head: on_cell may enqueue, which moves the tail but never the head's cells.
    const Desc head = desc(0);
    for (std::uint32_t c = 0; c < head.cells; ++c) {
      std::span<std::uint8_t, kCellBytes> cell(cell_at(head.first + c), kCellBytes);
      if (faults_.apply(cell) != CellFate::kPass) continue;
      counters_.cells_delivered.add();
      on_cell(std::span<const std::uint8_t, kCellBytes>(cell));
    }
    release_head();
  }
  std::uint64_t next = kNoEvent;
  if (in_flight_ > 0) next = desc(0).due_ns;
  if (queued() > 0) {
    const std::uint64_t wait = pacer_.ns_until_send(desc(in_flight_).cells, now_ns);
    next = std::min(next, now_ns + wait);
  }
  return next;
}

}  // namespace mtperf::atm
