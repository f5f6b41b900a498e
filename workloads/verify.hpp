#pragma once
// Payload verification (--verify): every byte a flow sends is a function of the test's seed, the
// flow, the direction and the byte's position; the receiver checks every byte it takes in.
//
// A direction of a flow is a byte stream (TCP: the connection's bytes in that direction, from
// 0; UDP: datagram `seq` of size S covers stream offsets [seq * S, seq * S + S), its header
// excluded from the check). Byte o of a stream is byte o % 8 (little-endian) of
//   word(w) = table[w % kTableWords] ^ (key + w * kStep),   w = o / 8,
// where table is kTableWords words drawn from the key (splitmix64). The table makes the bytes
// depend on the key; the w * kStep term (a bijection of w: kStep is odd) makes every position
// distinct, so a lost, duplicated or reordered block shows as a mismatch where it lands, not
// only a flipped bit. Cost: a load, an xor, an add and a store per 8 bytes (bench_verify).
//
// Receiver accounting (VerifyStats): bytes checked, receives (TCP) or datagrams (UDP) holding
// at least one wrong byte, wrong bytes, and the first kKeptMismatches described: where, what
// was expected, what came, and up to 64 received bytes around it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace mtperf {

class Pattern {
 public:
  static constexpr size_t kTableWords = 512;  // 4 KiB, stays in L1
  static constexpr uint64_t kStep = 0x9e3779b97f4a7c15ull;

  Pattern() : Pattern(0) {}
  explicit Pattern(uint64_t key);

  // Writes stream bytes [offset, offset + n) to dst.
  void fill(std::byte* dst, uint64_t offset, size_t n) const noexcept;
  // The index of the first byte of src[0, n) that is not stream byte offset + index; n when
  // all are.
  size_t first_mismatch(const std::byte* src, uint64_t offset, size_t n) const noexcept;
  uint8_t byte_at(uint64_t offset) const noexcept {
    return uint8_t(word(offset >> 3) >> ((offset & 7) * 8));
  }

 private:
  uint64_t word(uint64_t w) const noexcept { return table_[w % kTableWords] ^ (key_ + w * kStep); }

  std::array<uint64_t, kTableWords> table_;
  uint64_t key_;
};

// The key of one direction of one flow: direction 0 is what the flow's client side sends (a
// stream sender's bytes, rr requests), 1 what its server side sends (rr responses).
uint64_t verify_key(uint64_t seed, uint32_t flow, int direction);

struct VerifyMismatch {
  static constexpr size_t kAround = 64;
  uint64_t seq = 0;     // UDP: the datagram's sequence number; TCP: 0
  uint64_t offset = 0;  // TCP: in the direction's stream; UDP: in the datagram
  uint8_t expected = 0, got = 0;
  uint64_t around_offset = 0;  // offset (same reckoning) of around[0]
  uint8_t around_len = 0;
  std::array<uint8_t, kAround> around{};
};

struct VerifyStats {
  static constexpr size_t kKeptMismatches = 4;
  bool enabled = false;
  uint64_t bytes_checked = 0;
  uint64_t bad_receives = 0;  // receives (TCP) or datagrams (UDP) with at least one wrong byte
  uint64_t bad_bytes = 0;
  uint32_t kept = 0;
  std::array<VerifyMismatch, kKeptMismatches> first{};

  // Checks n received bytes at `offset` of the stream `p` draws (UDP: of datagram `seq`, whose
  // stream offsets start at `base`); counts, and describes the first mismatches.
  void check(const Pattern& p, const std::byte* data, size_t n, uint64_t offset, uint64_t base = 0,
             uint64_t seq = 0) noexcept {
    bytes_checked += n;
    size_t at = p.first_mismatch(data, base + offset, n);
    if (at != n) [[unlikely]]
      record_bad(p, data, n, offset, base, seq, at);
  }
  // Adds another side's or flow's figures (the descriptions up to kKeptMismatches).
  void merge(const VerifyStats& o);

 private:
  void record_bad(const Pattern& p, const std::byte* data, size_t n, uint64_t offset, uint64_t base,
                  uint64_t seq, size_t at) noexcept;
};

// "offset 123456 (datagram 7): expected 0x3a, got 0x00" and a hex dump of the bytes around it,
// one line per 16 bytes, each starting with `indent`.
std::string describe(const VerifyMismatch& m, const std::string& indent);

}  // namespace mtperf
