#pragma once
// Per-VC counters. Each counter has a single writer (the thread that owns the reassembler or
// fault injector) and may be read by a reporter thread at any time, so the value is a relaxed
// atomic updated with load+store: on x86-64 that is a plain add, with no locked instruction.
#include <atomic>
#include <cstdint>

namespace mtperf::atm {

class Counter {
 public:
  // Single writer only: two threads adding to one Counter would lose counts.
  void add(std::uint64_t n = 1) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t load() const noexcept { return value_.load(std::memory_order_relaxed); }
  void reset() noexcept { value_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

// A plain copy of VcCounters, for reports and tests.
struct VcCountersSnapshot {
  std::uint64_t cells = 0;          // every cell handed to the reassembler
  std::uint64_t pdus = 0;           // CPCS-PDUs delivered (CRC, length and size all good)
  std::uint64_t sdu_bytes = 0;      // bytes of the delivered SDUs
  std::uint64_t hec_errors = 0;     // cells discarded for an uncorrectable header
  std::uint64_t hec_corrected = 0;  // headers repaired (correction mode only)
  std::uint64_t crc_errors = 0;     // PDUs whose CRC-32 failed
  std::uint64_t length_errors = 0;  // PDUs whose length field disagrees with the cell count
  std::uint64_t oversize = 0;       // PDUs longer than the configured maximum SDU
  std::uint64_t timeouts = 0;       // partial PDUs abandoned by the reassembly timer
  std::uint64_t drops = 0;          // cells discarded outside any PDU check (see Reassembler)
};

struct alignas(64) VcCounters {
  Counter cells, pdus, sdu_bytes, hec_errors, hec_corrected, crc_errors, length_errors, oversize,
      timeouts, drops;

  VcCountersSnapshot snapshot() const noexcept {
    return {cells.load(),         pdus.load(),       sdu_bytes.load(),     hec_errors.load(),
            hec_corrected.load(), crc_errors.load(), length_errors.load(), oversize.load(),
            timeouts.load(),      drops.load()};
  }
};

}  // namespace mtperf::atm
