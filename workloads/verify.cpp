#include "workloads/verify.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace mtperf {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t load64(const std::byte* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

Pattern::Pattern(uint64_t key) : key_(key) {
  uint64_t state = key;
  for (auto& w : table_)
    w = splitmix64(state);
}

uint64_t verify_key(uint64_t seed, uint32_t flow, int direction) {
  uint64_t state = seed ^ (uint64_t(flow) << 1) ^ uint64_t(direction & 1);
  splitmix64(state);
  return splitmix64(state);
}

void Pattern::fill(std::byte* dst, uint64_t offset, size_t n) const noexcept {
  size_t i = 0;
  for (; i < n && ((offset + i) & 7) != 0; ++i)
    dst[i] = std::byte(byte_at(offset + i));
  uint64_t w = (offset + i) >> 3;
  // Whole words: the table index runs on from w % kTableWords, the position term by kStep.
  uint64_t pos = key_ + w * kStep;
  size_t j = w % kTableWords;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = table_[j] ^ pos;
    std::memcpy(dst + i, &v, 8);
    pos += kStep;
    j = (j + 1) % kTableWords;
  }
  for (; i < n; ++i)
    dst[i] = std::byte(byte_at(offset + i));
}

size_t Pattern::first_mismatch(const std::byte* src, uint64_t offset, size_t n) const noexcept {
  size_t i = 0;
  for (; i < n && ((offset + i) & 7) != 0; ++i) {
    if (uint8_t(src[i]) != byte_at(offset + i)) return i;
  }
  uint64_t w = (offset + i) >> 3;
  uint64_t pos = key_ + w * kStep;
  size_t j = w % kTableWords;
  // Blocks of 32 words or fewer compared without a branch per word; a block that differs is
  // searched byte by byte.
  while (i + 8 <= n) {
    size_t words = std::min<size_t>((n - i) / 8, 32);
    uint64_t diff = 0, p = pos;
    size_t k = j;
    for (size_t x = 0; x < words; ++x) {
      diff |= load64(src + i + 8 * x) ^ (table_[k] ^ p);
      p += kStep;
      k = (k + 1) % kTableWords;
    }
    if (diff != 0) {
      for (size_t b = 0; b < 8 * words; ++b) {
        if (uint8_t(src[i + b]) != byte_at(offset + i + b)) return i + b;
      }
    }
    i += 8 * words;
    pos = p;
    j = k;
  }
  for (; i < n; ++i) {
    if (uint8_t(src[i]) != byte_at(offset + i)) return i;
  }
  return n;
}

void VerifyStats::record_bad(const Pattern& p, const std::byte* data, size_t n, uint64_t offset,
                             uint64_t base, uint64_t seq, size_t at) noexcept {
  ++bad_receives;
  uint64_t wrong = 0;
  for (size_t i = at; i < n; ++i)
    wrong += uint8_t(data[i]) != p.byte_at(base + offset + i);
  bad_bytes += wrong;
  if (kept >= kKeptMismatches) return;
  VerifyMismatch& m = first[kept++];
  m.seq = seq;
  m.offset = offset + at;
  m.expected = p.byte_at(base + offset + at);
  m.got = uint8_t(data[at]);
  // 64 bytes from the 16-byte line that holds the mismatch, within what was received.
  size_t from = at - at % 16;
  from = from >= 16 ? from - 16 : 0;
  size_t len = std::min(VerifyMismatch::kAround, n - from);
  m.around_offset = offset + from;
  m.around_len = uint8_t(len);
  std::memcpy(m.around.data(), data + from, len);
}

void VerifyStats::merge(const VerifyStats& o) {
  enabled = enabled || o.enabled;
  bytes_checked += o.bytes_checked;
  bad_receives += o.bad_receives;
  bad_bytes += o.bad_bytes;
  for (uint32_t i = 0; i < o.kept && kept < kKeptMismatches; ++i)
    first[kept++] = o.first[i];
}

std::string describe(const VerifyMismatch& m, const std::string& indent) {
  char line[160];
  std::string out;
  if (m.seq != 0) {
    std::snprintf(line, sizeof line, "datagram %llu, byte %llu: expected 0x%02x, got 0x%02x\n",
                  static_cast<unsigned long long>(m.seq), static_cast<unsigned long long>(m.offset),
                  m.expected, m.got);
  } else {
    std::snprintf(line, sizeof line, "stream offset %llu: expected 0x%02x, got 0x%02x\n",
                  static_cast<unsigned long long>(m.offset), m.expected, m.got);
  }
  out += indent + line;
  for (size_t i = 0; i < m.around_len; i += 16) {
    int k = std::snprintf(line, sizeof line, "%10llu ",
                          static_cast<unsigned long long>(m.around_offset + i));
    for (size_t b = i; b < std::min<size_t>(i + 16, m.around_len); ++b) {
      bool here = m.around_offset + b == m.offset;
      k +=
          std::snprintf(line + k, sizeof line - size_t(k), here ? "[%02x]" : " %02x ", m.around[b]);
    }
    out += indent + line + "\n";
  }
  return out;
}

}  // namespace mtperf
