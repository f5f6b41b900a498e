#include "atmlink/faults.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace mtperf::atm {
namespace {

constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kPayloadBits = kCellPayloadBytes * 8;
constexpr std::uint64_t kHeaderBits = kHeaderBytes * 8;

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

void check_rate(double rate, const char* name) {
  if (!(rate >= 0.0 && rate <= 1.0)) {
    throw std::invalid_argument(std::string("fault injection ") + name + " " +
                                std::to_string(rate) + " must lie in [0, 1]");
  }
}

}  // namespace

Xoshiro256::Xoshiro256(std::uint64_t seed) {
  for (auto& word : s_)
    word = splitmix64(seed);
}

std::uint64_t Xoshiro256::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Xoshiro256::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

std::uint64_t Xoshiro256::below(std::uint64_t bound) {
  // Multiply-shift: the bias is below 2^-32 for the small bounds used here.
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
}

FaultInjector::FaultInjector(const FaultConfig& config) : config_(config), rng_(config.seed) {
  check_rate(config.cell_loss_rate, "cell loss rate");
  check_rate(config.hec_error_rate, "HEC error rate");
  check_rate(config.payload_ber, "payload bit-error rate");
  enabled_ = config.cell_loss_rate > 0 || config.hec_error_rate > 0 || config.payload_ber > 0 ||
             config.discard_clp1;
  cells_to_loss_ = gap(config.cell_loss_rate);
  cells_to_hec_ = gap(config.hec_error_rate);
  bits_to_error_ = gap(config.payload_ber);
}

std::uint64_t geometric_gap(Xoshiro256& rng, double p) {
  if (p <= 0) return kNever;
  if (p >= 1) return 0;
  // Inverse transform of the geometric distribution: trials that pass before the next event.
  const double g = std::floor(std::log1p(-rng.uniform()) / std::log1p(-p));
  return g >= 1.8e19 ? kNever : static_cast<std::uint64_t>(g);
}

std::uint64_t FaultInjector::gap(double p) {
  return geometric_gap(rng_, p);
}

void FaultInjector::flip_payload_bits(std::span<std::uint8_t, kCellBytes> cell) {
  std::uint64_t bit = 0;
  while (bits_to_error_ < kPayloadBits - bit) {
    bit += bits_to_error_;
    cell[kHeaderBytes + bit / 8] ^= static_cast<std::uint8_t>(0x80u >> (bit % 8));
    counters_.payload_bit_errors.add();
    ++bit;
    bits_to_error_ = gap(config_.payload_ber);
  }
  if (bits_to_error_ != kNever) bits_to_error_ -= kPayloadBits - bit;
}

CellFate FaultInjector::apply(std::span<std::uint8_t, kCellBytes> cell) {
  counters_.cells.add();
  if (!enabled_) return CellFate::kPass;
  if (config_.discard_clp1 && (cell[3] & 0x1u)) {
    counters_.clp_discarded.add();
    return CellFate::kClpDiscarded;
  }
  if (cells_to_loss_ == 0) {
    cells_to_loss_ = gap(config_.cell_loss_rate);
    counters_.lost.add();
    return CellFate::kLost;
  }
  if (cells_to_loss_ != kNever) --cells_to_loss_;
  if (cells_to_hec_ == 0) {
    cells_to_hec_ = gap(config_.hec_error_rate);
    const auto bit = rng_.below(kHeaderBits);
    cell[bit / 8] ^= static_cast<std::uint8_t>(0x80u >> (bit % 8));
    counters_.hec_errors.add();
  } else if (cells_to_hec_ != kNever) {
    --cells_to_hec_;
  }
  if (bits_to_error_ != kNever) flip_payload_bits(cell);
  return CellFate::kPass;
}

}  // namespace mtperf::atm
