#include "platform/clock.hpp"

#include <catch2/catch.hpp>

#include <climits>
#include <thread>

using namespace mtperf;

TEST_CASE("now_ns is monotonic and in ns") {
  int64_t a = now_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  int64_t b = now_ns();
  CHECK(b - a >= 2'000'000);
  CHECK(b - a < 10'000'000'000);
}

TEST_CASE("coarse_now_ns is the same clock at a coarser step") {
  // The coarse clock lags the precise one by at most a tick (<= 10 ms), never leads it.
  int64_t coarse = coarse_now_ns();
  int64_t precise = now_ns();
  CHECK(coarse <= precise);
  CHECK(precise - coarse < 100'000'000);
}

TEST_CASE("deadline_in and ms_until") {
  int64_t d = deadline_in(1000);
  int left = ms_until(d);
  CHECK(left > 900);
  CHECK(left <= 1000);
  CHECK(ms_until(now_ns() - 1'000'000'000) == 0);  // passed: 0, never negative
  CHECK(ms_until(INT64_MAX / 2) == INT32_MAX);     // far away: clamped
  int64_t before = now_ns();
  int64_t now = deadline_in(-5);  // a negative timeout is now
  int64_t after = now_ns();
  CHECK(now >= before);
  CHECK(now <= after);
}
