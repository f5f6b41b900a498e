#pragma once
// What the link tests share: a sink that keeps what each side was handed, and a fake clock that
// jumps from event to event.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "atmlink/link.hpp"

namespace mtperf::atm::test {

inline constexpr std::uint64_t kUs = 1'000;
inline constexpr std::uint64_t kMs = 1'000 * kUs;
inline constexpr std::uint64_t kSecondNs = 1'000 * kMs;

struct Collect : LinkSink {
  std::vector<std::vector<std::uint8_t>> got[2];
  void deliver(Side to, std::span<const std::uint8_t> p) override {
    got[int(to)].emplace_back(p.begin(), p.end());
  }
};

// Runs the link until `until` or until it has nothing to do, jumping the clock to each event.
inline void run_until(AtmLink& link, Collect& sink, std::uint64_t& now, std::uint64_t until) {
  while (now < until) {
    const std::uint64_t next = link.advance(now, sink);
    now = std::min(std::max(next, now + 1), until);
  }
}

inline const VcStats& vc_stats(const LinkStats& s, int from, int to) {
  for (const VcStats& v : s.vcs)
    if (v.from == from && v.to == to) return v;
  FAIL("no VC " << from << "->" << to);
  return s.vcs.front();
}

}  // namespace mtperf::atm::test
