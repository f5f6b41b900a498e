#pragma once
// The one monotonic clock of mtperf: timestamps, phase boundaries and set-up deadlines are all
// CLOCK_MONOTONIC nanoseconds (signed, so that differences and "time left" may go below zero).
// Every function here is a vDSO read: no system call, no allocation, no lock; safe on the data
// path and from any thread.
#include <time.h>

#include <algorithm>
#include <cstdint>

namespace mtperf {

// CLOCK_MONOTONIC now, in ns.
inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The same clock at the kernel tick's resolution (1-10 ms), read without the TSC: for a loop
// that only checks deadlines with it.
inline int64_t coarse_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The deadline timeout_ms from now, in ns of now_ns() (a negative timeout counts as 0).
inline int64_t deadline_in(int timeout_ms) {
  return now_ns() + int64_t(std::max(timeout_ms, 0)) * 1'000'000;
}

// CLOCK_REALTIME now, in ns: the one clock hosts share (through NTP or PTP), for start times
// agreed across hosts (`mtperf fleet`); never for intervals.
inline int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Whole ms left until deadline_ns, in [0, INT32_MAX]: a poll() timeout.
inline int ms_until(int64_t deadline_ns) {
  return int(std::clamp<int64_t>((deadline_ns - now_ns()) / 1'000'000, 0, INT32_MAX));
}

}  // namespace mtperf
