#pragma once
// CPU time accounting from <root>/proc/stat, sampled at the edges of a measured window.
//
// Counters are in clock ticks (USER_HZ, normally 100 per second); utilization figures are
// percentages of the time of the CPUs concerned, so the tick length never matters. Guest time is
// already included in user and nice by the kernel and is not counted again.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mtperf {

struct CpuTimes {
  uint64_t user = 0;
  uint64_t nice = 0;
  uint64_t system = 0;
  uint64_t idle = 0;
  uint64_t iowait = 0;
  uint64_t irq = 0;
  uint64_t softirq = 0;
  uint64_t steal = 0;

  uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};

struct CpuSnapshot {
  CpuTimes total;                 // the "cpu" line: every CPU together
  std::vector<CpuTimes> per_cpu;  // the "cpuN" lines, in file order
  std::vector<int> cpu_ids;       // cpu_ids[i] is the N of per_cpu[i]; only online CPUs appear
};

// Reads and parses <root>/proc/stat. Throws std::runtime_error naming the file (and the line
// for a malformed one) when it cannot be read or parsed. Kernels older than 2.6.11 print fewer
// columns; the missing ones read as 0.
CpuSnapshot read_cpu_snapshot(const std::string& root = "/");

// Parses /proc/stat text; `origin` names the source in error messages.
CpuSnapshot parse_cpu_snapshot(const std::string& text, const std::string& origin);

// Shares of the window's CPU time, each in percent of the time of the CPUs concerned (a total
// over 8 CPUs that are all busy is 100, not 800). util = 100 - idle - iowait, so steal and irq
// time count as busy; user + nice + sys + irq + softirq + steal = util.
struct CpuUsage {
  double util = 0.0;
  double user = 0.0;
  double nice = 0.0;
  double sys = 0.0;
  double irq = 0.0;
  double softirq = 0.0;
  double iowait = 0.0;
  double steal = 0.0;
  double idle = 0.0;
  // Ticks that passed over the window (all columns). 0 means the counters did not move: then
  // every percentage is 0 and the figures carry no information.
  uint64_t ticks = 0;
};

struct CpuUtilization {
  CpuUsage total;
  std::vector<std::pair<int, CpuUsage>> per_cpu;  // (cpu id, usage), ascending cpu id
  int cpus = 0;  // CPUs present in both snapshots (the CPU count for service demand)
};

// Utilization between two snapshots of the same host. CPUs present in only one snapshot
// (hot-plugged during the window) are left out of per_cpu and cpus; the total comes from the
// "cpu" line, which the kernel sums over every possible CPU. A counter that went backwards
// (a CPU brought back online restarts some) contributes 0 rather than a huge wrapped delta.
CpuUtilization cpu_utilization(const CpuSnapshot& before, const CpuSnapshot& after);

// Usage of one CPU (or the total) between two readings of its counters.
CpuUsage cpu_usage(const CpuTimes& before, const CpuTimes& after);

}  // namespace mtperf
