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
  // Who measured: the CPUs in the process's affinity mask (0: unknown), the most CPU time it can
  // spend per second of wall time; and the process itself, as a random id drawn once per process
  // (0: unknown), so that a client and an in-process server can tell they are one process.
  int allowed_cpus = 0;
  uint64_t instance = 0;

  double cpu_s() const { return user_s + sys_s; }
};

// The process's totals since it started, with allowed_cpus and instance filled. Throws
// std::runtime_error if getrusage fails (an unreadable affinity leaves allowed_cpus 0).
ProcessCpu read_process_cpu();

// This process's random id (never 0), the same on every call.
uint64_t process_instance();

// after - before: the cost of a window; allowed_cpus and instance are after's.
ProcessCpu process_cpu_delta(const ProcessCpu& before, const ProcessCpu& after);

// CPU seconds as a percentage of one CPU over elapsed_s (can exceed 100 with several threads);
// 0 when elapsed_s <= 0.
double process_cpu_percent(const ProcessCpu& delta, double elapsed_s);

}  // namespace mtperf
