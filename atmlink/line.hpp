#pragma once
// The emulated line: its cell rate and a pacer that spaces PDUs at that rate.
//
// Rates: a SONET line carries cells in its payload, 53 bytes = 424 bits each, so
//   OC-3c:  149.76 Mbit/s payload / 424 = 353,207.55 cells/s (2,831.2 ns per cell)
//   OC-12c: 599.04 Mbit/s payload / 424 = 1,412,830.19 cells/s (707.8 ns per cell)
// A rate is kept as an exact fraction (cells per second = num / den) so that the pacer's
// virtual clock does not drift over long runs.
//
// Pacing: a virtual clock, the time the line finishes its last charged cell. A PDU of k cells
// is due when its last cell would have left the line; charging it advances the clock by
// k cell times. When the sender is late (a sleep overshoots by 50-100 us in a VM), the clock
// lags real time and the next PDUs are due at once, so the lost time is made up: credit is kept
// up to bucket_cells cell times (never less than the PDU itself). Pure logic, time passed in.
//
// Window bound: credit is never more than the bucket, however long the line idled, so over any
// window of W ns (whatever its edges) the cells let onto the line are at most
//   rate x W + max(bucket_cells, the largest PDU's cells)
// (plus the 1 ns the clock's whole-ns comparison may give away, under 0.002 cells at OC-12c).
// That max() is the burst allowance: one bucket, saved while idle, spent once; 4096 cells by
// default = 11.6 ms of line time at OC-3c, 2.9 ms at OC-12c. A window that starts on a busy
// line finds the bucket already spent. tests/atmlink/test_pacer.cpp checks the bound.
#include <cstdint>
#include <string_view>

namespace mtperf::atm {

struct LineRate {
  std::uint64_t num = 0;  // cells per second = num / den; both > 0
  std::uint64_t den = 1;

  double cells_per_s() const { return static_cast<double>(num) / static_cast<double>(den); }
  double payload_bps() const { return cells_per_s() * 424.0; }
  // ns per cell, rounded; for display. The pacer uses the exact fraction.
  double ns_per_cell() const { return 1e9 * static_cast<double>(den) / static_cast<double>(num); }

  // Throws std::invalid_argument unless 1 <= cells_per_s <= 100,000,000.
  static LineRate from_cells_per_s(double cells_per_s);
  static LineRate from_payload_bps(std::uint64_t bits_per_s);
};

inline constexpr LineRate kOc3c{149'760'000, 424};
inline constexpr LineRate kOc12c{599'040'000, 424};

// "oc3", "oc12", or a cell rate ("353207.5", "100000"); throws std::invalid_argument.
LineRate parse_line_rate(std::string_view text);

struct PacerConfig {
  LineRate rate = kOc12c;
  std::uint32_t bucket_cells = 4096;  // credit kept across late wake-ups, in cell times
};

class Pacer {
 public:
  explicit Pacer(const PacerConfig& config);  // throws std::invalid_argument on a bad config

  // ns to wait before a PDU of `cells` cells is due; 0 when it may go now.
  std::uint64_t ns_until_send(std::uint32_t cells, std::uint64_t now_ns) const;
  // Charges a PDU of `cells` cells sent at now_ns; returns the time its last cell leaves.
  std::uint64_t charge(std::uint32_t cells, std::uint64_t now_ns);

  const PacerConfig& config() const { return config_; }
  std::uint64_t cells_charged() const { return cells_charged_; }

 private:
  // The virtual clock after lost credit beyond the bucket is dropped: ns and a remainder in
  // units of 1/num ns, so that cell times add up exactly.
  struct Clock {
    std::uint64_t ns = 0;
    std::uint64_t rem = 0;
  };
  Clock start_for(std::uint32_t cells, std::uint64_t now_ns) const;
  Clock advance(Clock c, std::uint64_t cells) const;

  PacerConfig config_;
  Clock clock_;
  bool started_ = false;
  std::uint64_t cells_charged_ = 0;
};

}  // namespace mtperf::atm
