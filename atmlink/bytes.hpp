#pragma once
// Big-endian 16-bit fields, as the ATM cells, AAL5 trailers, LANE frames and captures carry them.
#include <cstdint>

namespace mtperf::atm {

inline std::uint16_t load_be16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

inline void store_be16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v & 0xFF);
}

}  // namespace mtperf::atm
