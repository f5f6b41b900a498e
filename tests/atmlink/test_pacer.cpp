// The pacer never lets a measurement window carry more than the line rate: over any window of
// W ns the cells it releases are at most rate x W plus the burst allowance of line.hpp
// (max(bucket_cells, the largest PDU) cells), however the sender idles, oversleeps or bursts.
// Time is a fake clock advanced by the test: nothing here sleeps or reads the wall clock.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "atmlink/line.hpp"

using namespace mtperf::atm;

namespace {

struct Release {
  std::uint64_t at_ns;
  std::uint32_t cells;
};

// A deterministic generator (no seeding from time: the test must give the same answer always).
struct Lcg {
  std::uint64_t state = 0x9e3779b97f4a7c15u;
  std::uint64_t next(std::uint64_t bound) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return (state >> 33) % bound;
  }
};

// A sender that alternates greedy phases (it asks for the line as soon as the pacer allows,
// waking up to 100 us late) with idle phases long enough to fill any bucket, for `span_ns`.
// PDU sizes vary from 1 cell to max_pdu cells. Returns every release, in time order.
std::vector<Release> drive(Pacer& pacer, std::uint64_t span_ns, std::uint32_t max_pdu) {
  std::vector<Release> out;
  Lcg rng;
  std::uint64_t now = 0;
  while (now < span_ns) {
    const std::uint64_t busy_until = now + 5'000'000 + rng.next(60'000'000);  // 5-65 ms
    while (now < busy_until) {
      const auto cells = static_cast<std::uint32_t>(1 + rng.next(max_pdu));
      const std::uint64_t wait = pacer.ns_until_send(cells, now);
      if (wait > 0) now += wait + rng.next(100'000);  // a late wake-up
      pacer.charge(cells, now);
      out.push_back({now, cells});
    }
    now += 20'000'000 + rng.next(200'000'000);  // idle 20-220 ms: credit piles up, if allowed
  }
  return out;
}

// The most cells released in any window [t, t + window_ns]; the worst window starts at a
// release, so a two-pointer sweep over the releases sees every window.
std::uint64_t most_in_window(const std::vector<Release>& r, std::uint64_t window_ns) {
  std::uint64_t most = 0, in = 0;
  std::size_t end = 0;
  for (std::size_t begin = 0; begin < r.size(); ++begin) {
    while (end < r.size() && r[end].at_ns <= r[begin].at_ns + window_ns)
      in += r[end++].cells;
    most = std::max(most, in);
    in -= r[begin].cells;
  }
  return most;
}

// Windows aligned on a fixed grid (as --interval reports are): the most cells in any of them.
std::uint64_t most_in_grid(const std::vector<Release>& r, std::uint64_t window_ns,
                           std::uint64_t offset_ns) {
  std::uint64_t most = 0, in = 0, edge = offset_ns + window_ns;
  for (const Release& x : r) {
    if (x.at_ns < offset_ns) continue;
    while (x.at_ns >= edge) {
      most = std::max(most, in);
      in = 0;
      edge += window_ns;
    }
    in += x.cells;
  }
  return std::max(most, in);
}

}  // namespace

TEST_CASE("no window carries more than the line's cells plus one burst allowance") {
  struct Line {
    const char* name;
    LineRate rate;
  };
  for (const Line line : {Line{"OC-3c", kOc3c}, Line{"OC-12c", kOc12c}}) {
    for (const std::uint32_t bucket : {1u, 192u, 4096u}) {
      for (const std::uint32_t max_pdu : {1u, 32u, 192u}) {
        Pacer pacer(PacerConfig{line.rate, bucket});
        const std::vector<Release> releases = drive(pacer, 2'000'000'000, max_pdu);
        const double allowance = std::max(bucket, max_pdu);  // line.hpp: the burst allowance
        for (const std::uint64_t window_ns :
             {std::uint64_t{100'000}, std::uint64_t{1'000'000}, std::uint64_t{10'000'000},
              std::uint64_t{100'000'000}, std::uint64_t{1'000'000'000}}) {
          // rate x window, plus the 1 ns the clock's whole-ns comparison may give away.
          const double line_cells = line.rate.cells_per_s() * double(window_ns + 1) / 1e9;
          INFO(line.name << ", bucket " << bucket << " cells, PDUs of 1.." << max_pdu
                         << " cells, window " << window_ns << " ns: line carries " << line_cells
                         << " cells + " << allowance);
          CHECK(double(most_in_window(releases, window_ns)) <= line_cells + allowance);
          for (const std::uint64_t offset : {std::uint64_t{0}, window_ns / 3})
            CHECK(double(most_in_grid(releases, window_ns, offset)) <= line_cells + allowance);
        }
      }
    }
  }
}

TEST_CASE("a greedy sender still fills its windows at the line rate") {
  // The bound above is not met by starving the line: back to back, a window of 100 ms carries
  // the line's cells to within one PDU and the sender's lateness.
  for (const LineRate rate : {kOc3c, kOc12c}) {
    Pacer pacer(PacerConfig{rate, 4096});
    std::uint64_t now = 0, cells = 0;
    while (now < 100'000'000) {
      const std::uint64_t wait = pacer.ns_until_send(32, now);
      if (wait > 0) now += wait + 50'000;
      pacer.charge(32, now);
      cells += 32;
    }
    // Short by at most one PDU and one late wake-up (50 us of cells).
    const double line_cells = rate.cells_per_s() * 0.1;
    CHECK(double(cells) >= line_cells - 32 - rate.cells_per_s() * 50e-6);
    CHECK(double(cells) <= line_cells + 4096 + 32);
  }
}

TEST_CASE("credit saved while idle is one allowance, however long the idle time") {
  for (const LineRate rate : {kOc3c, kOc12c}) {
    Pacer pacer(PacerConfig{rate, 4096});
    pacer.charge(1, 0);
    // Idle for an hour, then as much as the pacer lets go at one instant.
    const std::uint64_t later = 3600ull * 1'000'000'000;
    std::uint64_t burst = 0;
    while (pacer.ns_until_send(1, later) == 0 && burst < 10'000'000) {
      pacer.charge(1, later);
      ++burst;
    }
    CHECK(burst <= 4096);
    CHECK(burst >= 4095);
  }
}
