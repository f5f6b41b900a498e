#pragma once
// CPU sets: which CPUs are online, and pinning the calling thread to some of them.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mtperf {

// CPUs online now (sysconf(_SC_NPROCESSORS_ONLN)); at least 1.
int online_cpu_count();

// The online CPU ids from <root>/sys/devices/system/cpu/online, ascending. Throws
// std::runtime_error naming the file when it cannot be read or parsed.
std::vector<int> online_cpus(const std::string& root = "/");

// Parses the kernel's CPU list format: comma-separated ids and inclusive ranges, e.g.
// "0-3,8-11" or "0,2,4" (surrounding whitespace and a trailing newline are allowed; "" is the
// empty set). Returns sorted unique ids. Throws std::invalid_argument saying which element is
// wrong (not a number, a reversed range, a negative id).
std::vector<int> parse_cpu_list(std::string_view text);
// The same syntax read as an order of CPUs ("1,0" is CPU 1 then CPU 0; ranges run ascending):
// worker i goes to entry i. Duplicates are kept (two workers on one CPU is a choice).
std::vector<int> parse_cpu_order(std::string_view text);

// Throws std::invalid_argument naming the first CPU of `cpus` that is not online under `root`,
// and the CPUs that are ("CPU 5 is not online here (online: 0-1)").
void check_cpus_online(std::span<const int> cpus, const std::string& root = "/");

// Formats ids back into the compact form ("0-3,8").
std::string format_cpu_list(std::span<const int> cpus);

// Binds the calling thread to one CPU. Throws std::runtime_error naming the CPU and the error
// text (e.g. the CPU is offline or outside the process's cpuset).
void pin_current_thread(int cpu);

// Binds the calling thread to a set of CPUs (e.g. the CPUs of a NUMA node); same errors.
void set_current_thread_affinity(std::span<const int> cpus);

// The CPUs the calling thread may run on, ascending.
std::vector<int> current_thread_affinity();

// The CPUs the process may run on (sched_getaffinity of its main thread, which mtperf never
// pins; workers pin only within it), ascending. Throws std::runtime_error with the error text.
std::vector<int> process_affinity();

}  // namespace mtperf
