#include "atmlink/wire.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mtperf::atm {
namespace {

constexpr std::uint64_t kMaxPropagationNs = 1'000'000'000;

}  // namespace

Wire::Wire(const WireConfig& config)
    : config_(config), pacer_(config.pacer), faults_(config.faults) {
  if (config.propagation_ns > kMaxPropagationNs)
    throw std::invalid_argument("propagation delay " + std::to_string(config.propagation_ns) +
                                " ns exceeds 1 s");
  if (config.max_pdu_cells < 1 || config.max_pdu_cells > kAal5MaxCells)
    throw std::invalid_argument("wire: max PDU cells must be 1.." + std::to_string(kAal5MaxCells));
  if (config.queue_pdus < 1 || config.queue_pdus > 4096)
    throw std::invalid_argument("wire: queue depth must be 1..4096 PDUs");
  // Room for the PDUs in flight during the propagation delay plus the bucket's burst (both
  // counted in cells, since small PDUs may be many), and for the queue of full-size PDUs.
  const double delay_cells =
      static_cast<double>(config.propagation_ns) * config.pacer.rate.cells_per_s() / 1e9;
  const std::uint64_t flight = static_cast<std::uint64_t>(delay_cells) + config.pacer.bucket_cells;
  const std::uint64_t cells = flight + (config.queue_pdus + 2) * config.max_pdu_cells;
  if (cells > (std::uint64_t{1} << 26))
    throw std::invalid_argument("wire: propagation delay times rate needs too large a buffer");
  ring_cells_ = static_cast<std::uint32_t>(cells);
  ring_.assign(std::size_t(ring_cells_) * kCellBytes, 0);
  descs_.resize(flight + config.queue_pdus + 2);
}

std::int64_t Wire::place(std::size_t cells) const {
  if (desc_count_ == descs_.size() || cells > ring_cells_) return -1;
  if (desc_count_ == 0) return 0;
  const std::uint32_t read = desc(0).first;
  if (write_ == read) return -1;  // full: the queue reaches all the way round
  if (write_ > read) {
    if (ring_cells_ - write_ >= cells) return write_;
    return cells < read ? 0 : -1;  // wrap; strictly less keeps write != read while in use
  }
  return read - write_ > cells ? static_cast<std::int64_t>(write_) : -1;
}

bool Wire::has_room(std::size_t cells) const {
  return queued() < config_.queue_pdus && place(cells) >= 0;
}

Wire::Enqueue Wire::enqueue(const SduParts& sdu, const SegmentParams& params) {
  const std::size_t cells = aal5_cell_count(sdu.size());
  if (sdu.size() > kAal5MaxSduBytes || cells > config_.max_pdu_cells) {
    counters_.segment_errors.add();
    return Enqueue::kTooLarge;
  }
  const std::int64_t at = has_room(cells) ? place(cells) : -1;
  if (at < 0) {
    counters_.refused.add();
    return Enqueue::kFull;
  }
  const auto first = static_cast<std::uint32_t>(at);
  const auto r =
      aal5_segment(sdu, params, std::span<std::uint8_t>(cell_at(first), cells * kCellBytes));
  if (r.status != SegmentStatus::kOk) {
    counters_.segment_errors.add();
    return Enqueue::kTooLarge;
  }
  descs_[(desc_head_ + desc_count_) % descs_.size()] =
      Desc{first, static_cast<std::uint32_t>(cells), 0, 0};
  ++desc_count_;
  write_ = first + static_cast<std::uint32_t>(cells);
  if (write_ == ring_cells_) write_ = 0;
  return Enqueue::kOk;
}

void Wire::send_due(std::uint64_t now_ns) {
  while (queued() > 0) {
    Desc& d = desc(in_flight_);
    if (pacer_.ns_until_send(d.cells, now_ns) != 0) return;
    d.left_ns = pacer_.charge(d.cells, now_ns);
    d.due_ns = now_ns + config_.propagation_ns;
    ++in_flight_;
    counters_.pdus_sent.add();
    counters_.cells_sent.add(d.cells);
  }
}

void Wire::release_head() {
  desc_head_ = (desc_head_ + 1) % descs_.size();
  --desc_count_;
  --in_flight_;
  if (desc_count_ == 0) write_ = 0;
}

}  // namespace mtperf::atm
