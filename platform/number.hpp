#pragma once
// The one parser of numbers typed by a user (command-line options, a transport's -O values):
// whole numbers in a range, and numbers with a unit suffix (sizes in bytes, rates in bits/s).
// Each returns std::nullopt when the text is not such a number, so that the caller says what it
// expected in its own words, naming its option. No allocation; thread-safe.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>

namespace mtperf {

// A whole decimal number in lo..hi: digits only (no sign, no space, no suffix).
inline std::optional<uint64_t> parse_whole(std::string_view text, uint64_t lo = 0,
                                           uint64_t hi = UINT64_MAX) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < lo || v > hi) return std::nullopt;
  return v;
}

// A whole number in lo..hi, decimal, or hexadecimal after "0x" or "0X" ("0x1f": a cell header's
// fields).
inline std::optional<uint64_t> parse_whole_or_hex(std::string_view text, uint64_t lo = 0,
                                                  uint64_t hi = UINT64_MAX) {
  const bool hex = text.starts_with("0x") || text.starts_with("0X");
  if (hex) text.remove_prefix(2);
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v, hex ? 16 : 10);
  if (text.empty() || ec != std::errc() || ptr != end || v < lo || v > hi) return std::nullopt;
  return v;
}

// A unit suffix and what one of it is worth.
struct NumberUnit {
  std::string_view suffix;
  double scale;
};

// Sizes: K, M, G, T (either case, or KiB, MiB, GiB, TiB) are powers of 1024 bytes.
inline constexpr NumberUnit kSizeUnits[] = {
    {"K", 0x1p10}, {"k", 0x1p10}, {"KiB", 0x1p10}, {"M", 0x1p20}, {"m", 0x1p20}, {"MiB", 0x1p20},
    {"G", 0x1p30}, {"g", 0x1p30}, {"GiB", 0x1p30}, {"T", 0x1p40}, {"t", 0x1p40}, {"TiB", 0x1p40},
};
// Rates: k, M, G, T (either case) are powers of 1000 bits/s.
inline constexpr NumberUnit kRateUnits[] = {
    {"k", 1e3}, {"K", 1e3}, {"m", 1e6},  {"M", 1e6},
    {"g", 1e9}, {"G", 1e9}, {"t", 1e12}, {"T", 1e12},
};

// A non-negative finite decimal number ("64", "1.5") with an optional suffix from `units`: the
// number times the suffix's scale.
inline std::optional<double> parse_scaled(std::string_view text,
                                          std::span<const NumberUnit> units) {
  if (text.empty() || text.front() == '-') return std::nullopt;
  double v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || !std::isfinite(v)) return std::nullopt;
  std::string_view suffix(ptr, size_t(end - ptr));
  double scale = 1;
  if (!suffix.empty()) {
    const NumberUnit* unit = nullptr;
    for (const NumberUnit& u : units)
      if (u.suffix == suffix) unit = &u;
    if (!unit) return std::nullopt;
    scale = unit->scale;
  }
  double scaled = v * scale;
  if (!std::isfinite(scaled)) return std::nullopt;
  return scaled;
}

// A size in bytes ("64K", "1.5M", "65536"; kSizeUnits) that is a whole number of bytes, at most
// `max`.
inline std::optional<uint64_t> parse_size(std::string_view text, uint64_t max = uint64_t(1) << 60) {
  std::optional<double> v = parse_scaled(text, kSizeUnits);
  if (!v || *v != std::floor(*v) || *v >= 0x1p64 || uint64_t(*v) > max) return std::nullopt;
  return uint64_t(*v);
}

}  // namespace mtperf
