#pragma once
// What the fuzz targets share: the libFuzzer entry point, a check that aborts with a message
// (an invariant broken by some input is a finding, as a crash is), and a reader that takes
// fields and length-prefixed records off the input.
//
// Every target is also linked with replay_main.cpp into a plain executable that runs the target
// over its seed corpus and its regressions (ctest fuzz/<target>), so the inputs found once keep
// being checked by every build, with or without clang and libFuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace mtperf::fuzz {

// Aborts, naming the invariant, when `ok` is false.
inline void check(bool ok, const char* invariant) {
  if (ok) return;
  std::fprintf(stderr, "fuzz: invariant broken: %s\n", invariant);
  std::abort();
}

// Reads the input front to back; past its end every field reads as zero and every span as
// empty, so a target never has to test the length first.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return at_ >= size_; }
  std::size_t left() const { return size_ - at_; }

  std::uint8_t u8() { return empty() ? 0 : data_[at_++]; }
  // Big-endian; each part is read in its own statement, as the operands of | are unsequenced.
  std::uint16_t u16() {
    const unsigned hi = u8();
    return std::uint16_t(hi << 8 | u8());
  }
  std::uint32_t u32() {
    const std::uint32_t hi = u16();
    return hi << 16 | u16();
  }
  std::uint64_t u64() {
    const std::uint64_t hi = u32();
    return hi << 32 | u32();
  }

  // Up to n bytes (fewer at the end of the input).
  std::span<const std::uint8_t> take(std::size_t n) {
    n = std::min(n, left());
    std::span<const std::uint8_t> out(data_ + at_, n);
    at_ += n;
    return out;
  }
  std::span<const std::uint8_t> rest() { return take(left()); }
  // A record: a 2-byte big-endian length, then that many bytes (fewer at the end).
  std::span<const std::uint8_t> record() { return take(u16()); }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

}  // namespace mtperf::fuzz
