#include "platform/rusage.hpp"

#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

#include "platform/affinity.hpp"

#include <sys/resource.h>

namespace mtperf {
namespace {

double seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

}  // namespace

ProcessCpu read_process_cpu() {
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) {
    throw std::runtime_error(std::string("getrusage(RUSAGE_SELF) failed: ") + std::strerror(errno));
  }
  ProcessCpu p;
  p.user_s = seconds(ru.ru_utime);
  p.sys_s = seconds(ru.ru_stime);
  p.voluntary_switches = ru.ru_nvcsw;
  p.involuntary_switches = ru.ru_nivcsw;
  try {
    p.allowed_cpus = static_cast<int>(process_affinity().size());
  } catch (const std::runtime_error&) {
    p.allowed_cpus = 0;  // unknown: the host's CPU count still bounds the figure
  }
  p.instance = process_instance();
  return p;
}

uint64_t process_instance() {
  static const uint64_t id = [] {
    std::random_device rd;
    const uint64_t v = (uint64_t(rd()) << 32) ^ rd();
    return v != 0 ? v : 1;
  }();
  return id;
}

ProcessCpu process_cpu_delta(const ProcessCpu& before, const ProcessCpu& after) {
  ProcessCpu d;
  d.user_s = after.user_s - before.user_s;
  d.sys_s = after.sys_s - before.sys_s;
  d.voluntary_switches = after.voluntary_switches - before.voluntary_switches;
  d.involuntary_switches = after.involuntary_switches - before.involuntary_switches;
  d.allowed_cpus = after.allowed_cpus;
  d.instance = after.instance;
  return d;
}

double process_cpu_percent(const ProcessCpu& delta, double elapsed_s) {
  if (!(elapsed_s > 0.0)) return 0.0;
  return delta.cpu_s() / elapsed_s * 100.0;
}

}  // namespace mtperf
