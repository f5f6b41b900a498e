#pragma once
// Fault injection on the emulated line, for driver-validation tests: cell loss, header (HEC)
// errors, payload bit errors and discard of CLP=1 cells. Deterministic for a given seed: the
// same seed and the same cells give the same faults on every run and machine (the generator is
// xoshiro256**, seeded by splitmix64; no std::random_device).
//
// Rare events are drawn as geometric gaps (how many cells, or bits, until the next event), so
// a clean cell costs a compare and a decrement, not a random draw per cell or per bit.
// Single-threaded; the counters may be read from any thread.
#include <cstdint>
#include <span>

#include "atmlink/cell.hpp"
#include "atmlink/counters.hpp"

namespace mtperf::atm {

// A small, fast, seedable generator (xoshiro256**, Blackman and Vigna).
class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed);
  std::uint64_t next();
  double uniform();                          // [0, 1), 53 random bits
  std::uint64_t below(std::uint64_t bound);  // [0, bound), bound > 0

 private:
  std::uint64_t s_[4];
};

// Trials that pass before the next event of probability p per trial (geometric, by inverse
// transform): 0 when p >= 1, UINT64_MAX ("never") when p <= 0.
std::uint64_t geometric_gap(Xoshiro256& rng, double p);

struct FaultConfig {
  double cell_loss_rate = 0;  // probability a cell vanishes
  double hec_error_rate = 0;  // probability a cell gets one flipped header bit (HEC included)
  double payload_ber = 0;     // probability each payload bit is flipped
  bool discard_clp1 = false;  // drop every cell with CLP = 1, as a congested switch would
  std::uint64_t seed = 1;
};

enum class CellFate : std::uint8_t { kPass, kLost, kClpDiscarded };

struct FaultCounters {
  Counter cells, lost, clp_discarded, hec_errors, payload_bit_errors;
};

class FaultInjector {
 public:
  // Throws std::invalid_argument if a rate is outside [0, 1].
  explicit FaultInjector(const FaultConfig& config);

  // Decides the fate of one cell and corrupts it in place when it passes with errors.
  CellFate apply(std::span<std::uint8_t, kCellBytes> cell);
  bool enabled() const { return enabled_; }
  const FaultCounters& counters() const { return counters_; }

 private:
  // Events before the next one, for a probability p per trial: geometric, "never" when p = 0.
  std::uint64_t gap(double p);
  void flip_payload_bits(std::span<std::uint8_t, kCellBytes> cell);

  FaultConfig config_;
  Xoshiro256 rng_;
  bool enabled_;
  std::uint64_t cells_to_loss_;
  std::uint64_t cells_to_hec_;
  std::uint64_t bits_to_error_;
  FaultCounters counters_;
};

}  // namespace mtperf::atm
