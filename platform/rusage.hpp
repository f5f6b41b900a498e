#pragma once
// The mtperf process's own CPU cost (getrusage(RUSAGE_SELF)): every thread of the process,
// workers and reporter alike, so users see what the tool itself cost beside the host figures.
#include <cstdint>

namespace mtperf {

struct ProcessCpu {
  double user_s = 0.0;               // CPU seconds in user mode
  double sys_s = 0.0;                // CPU seconds in the kernel on the process's behalf
  int64_t voluntary_switches = 0;    // blocked waiting (e.g. in recv, epoll_wait)
  int64_t involuntary_switches = 0;  // preempted

  double cpu_s() const { return user_s + sys_s; }
};

// The process's totals since it started. Throws std::runtime_error if getrusage fails.
ProcessCpu read_process_cpu();

// after - before: the cost of a window.
ProcessCpu process_cpu_delta(const ProcessCpu& before, const ProcessCpu& after);

// CPU seconds as a percentage of one CPU over elapsed_s (can exceed 100 with several threads);
// 0 when elapsed_s <= 0.
double process_cpu_percent(const ProcessCpu& delta, double elapsed_s);

}  // namespace mtperf
