#include "atmlink/line.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "platform/number.hpp"

namespace mtperf::atm {
namespace {

constexpr double kMaxCellsPerS = 100'000'000.0;  // 42 Gbit/s of cells: beyond any SONET rate
constexpr std::uint64_t kRateDen = 1000;         // from_cells_per_s keeps milli-cells/s

}  // namespace

LineRate LineRate::from_cells_per_s(double cells_per_s) {
  if (!(cells_per_s >= 1.0 && cells_per_s <= kMaxCellsPerS)) {
    throw std::invalid_argument("line rate " + std::to_string(cells_per_s) +
                                " cells/s is out of range: give 1 to 100000000 cells/s, "
                                "or oc3 / oc12");
  }
  return {static_cast<std::uint64_t>(std::llround(cells_per_s * kRateDen)), kRateDen};
}

LineRate LineRate::from_payload_bps(std::uint64_t bits_per_s) {
  return from_cells_per_s(static_cast<double>(bits_per_s) / 424.0);
}

LineRate parse_line_rate(std::string_view text) {
  if (text == "oc3" || text == "oc3c") return kOc3c;
  if (text == "oc12" || text == "oc12c") return kOc12c;
  // A plain number: cells per second carry no unit suffix.
  const std::optional<double> value = parse_scaled(text, {});
  if (!value) {
    throw std::invalid_argument("line rate '" + std::string(text) +
                                "' is not oc3, oc12 or a number of cells per second");
  }
  return LineRate::from_cells_per_s(*value);
}

Pacer::Pacer(const PacerConfig& config) : config_(config) {
  if (config.rate.num == 0 || config.rate.den == 0) {
    throw std::invalid_argument("pacer line rate must be positive");
  }
  // Cells fit a 64-bit product below: cells (< 2^32) * den * 1e9 must stay < 2^64.
  if (config.rate.den > 1'000'000) {
    throw std::invalid_argument("pacer rate denominator too large; use LineRate helpers");
  }
  if (config.bucket_cells == 0) {
    throw std::invalid_argument("pacer bucket depth must be at least 1 cell");
  }
}

Pacer::Clock Pacer::advance(Clock c, std::uint64_t cells) const {
  const std::uint64_t num = config_.rate.num;
  const unsigned __int128 scaled =
      static_cast<unsigned __int128>(cells) * config_.rate.den * 1'000'000'000u + c.rem;
  c.ns += static_cast<std::uint64_t>(scaled / num);
  c.rem = static_cast<std::uint64_t>(scaled % num);
  return c;
}

// Credit older than the bucket (or the PDU, if larger) is dropped: the clock may lag now_ns by
// at most that many cell times.
// A line never used yet is idle with full credit, like one that has been idle for long: a
// sender that asks again after waiting must find its PDU due, not a target moving with now_ns.
Pacer::Clock Pacer::start_for(std::uint32_t cells, std::uint64_t now_ns) const {
  const std::uint64_t depth = std::max<std::uint64_t>(config_.bucket_cells, cells);
  const Clock floor_span = advance(Clock{0, 0}, depth);
  const Clock floor{now_ns > floor_span.ns ? now_ns - floor_span.ns : 0, 0};
  if (!started_) return floor;
  if (clock_.ns < floor.ns) return floor;
  return clock_;
}

std::uint64_t Pacer::ns_until_send(std::uint32_t cells, std::uint64_t now_ns) const {
  const Clock done = advance(start_for(cells, now_ns), cells);
  return done.ns > now_ns ? done.ns - now_ns : 0;
}

std::uint64_t Pacer::charge(std::uint32_t cells, std::uint64_t now_ns) {
  clock_ = advance(start_for(cells, now_ns), cells);
  started_ = true;
  cells_charged_ += cells;
  return clock_.ns;
}

}  // namespace mtperf::atm
