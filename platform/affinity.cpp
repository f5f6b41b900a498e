#include "platform/affinity.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "platform/text.hpp"

namespace mtperf {
namespace {

int parse_cpu_id(std::string_view token, std::string_view whole) {
  const std::string_view t = trim(token);
  int id = -1;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), id);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || id < 0) {
    throw std::invalid_argument("invalid CPU list '" + std::string(whole) + "': '" +
                                std::string(t) + "' is not a CPU number");
  }
  if (id >= CPU_SETSIZE) {
    throw std::invalid_argument("invalid CPU list '" + std::string(whole) + "': CPU " +
                                std::to_string(id) + " is beyond the largest supported (" +
                                std::to_string(CPU_SETSIZE - 1) + ")");
  }
  return id;
}

}  // namespace

int online_cpu_count() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

std::vector<int> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus = parse_cpu_order(text);
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

void check_cpus_online(std::span<const int> cpus, const std::string& root) {
  const std::vector<int> online = online_cpus(root);
  for (int c : cpus) {
    if (!std::binary_search(online.begin(), online.end(), c)) {
      throw std::invalid_argument("CPU " + std::to_string(c) +
                                  " is not online here (online: " + format_cpu_list(online) + ")");
    }
  }
}

std::vector<int> parse_cpu_order(std::string_view text) {
  const std::string_view whole = trim(text);
  std::vector<int> cpus;
  if (whole.empty()) return cpus;
  size_t pos = 0;
  while (pos <= whole.size()) {
    const size_t comma = std::min(whole.find(',', pos), whole.size());
    const std::string_view element = whole.substr(pos, comma - pos);
    const size_t dash = element.find('-');
    if (dash == std::string_view::npos) {
      cpus.push_back(parse_cpu_id(element, whole));
    } else {
      const int first = parse_cpu_id(element.substr(0, dash), whole);
      const int last = parse_cpu_id(element.substr(dash + 1), whole);
      if (last < first) {
        throw std::invalid_argument("invalid CPU list '" + std::string(whole) + "': range '" +
                                    std::string(trim(element)) + "' runs backwards");
      }
      for (int c = first; c <= last; ++c)
        cpus.push_back(c);
    }
    pos = comma + 1;
  }
  return cpus;
}

std::string format_cpu_list(std::span<const int> cpus) {
  std::vector<int> sorted(cpus.begin(), cpus.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1)
      ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    if (j > i) out += '-' + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> online_cpus(const std::string& root) {
  const std::string path = (std::filesystem::path(root) / "sys/devices/system/cpu/online").string();
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  std::string line;
  std::getline(in, line);
  try {
    std::vector<int> cpus = parse_cpu_list(line);
    if (cpus.empty()) throw std::invalid_argument("no CPU is listed");
    return cpus;
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(path + ":1: " + e.what());
  }
}

void set_current_thread_affinity(std::span<const int> cpus) {
  const std::string list = format_cpu_list(cpus);
  if (cpus.empty()) throw std::runtime_error("cannot pin thread to an empty CPU set");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) {
      throw std::runtime_error("cannot pin thread to CPU " + std::to_string(c) +
                               ": not a valid CPU number");
    }
    CPU_SET(c, &set);
  }
  // pthread_setaffinity_np returns the error rather than setting errno.
  const int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (err != 0) {
    // Saying which CPUs are allowed turns "Invalid argument" into something a user can act on.
    std::string allowed;
    try {
      allowed = " (allowed CPUs: " + format_cpu_list(current_thread_affinity()) + ")";
    } catch (const std::runtime_error&) {
    }
    throw std::runtime_error(std::string("cannot pin thread to CPU") +
                             (cpus.size() > 1 ? "s " : " ") + list + ": " + std::strerror(err) +
                             allowed);
  }
}

void pin_current_thread(int cpu) {
  set_current_thread_affinity(std::span<const int>(&cpu, 1));
}

std::vector<int> current_thread_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int err = pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
  if (err != 0) {
    throw std::runtime_error(std::string("cannot read the thread's CPU affinity: ") +
                             std::strerror(err));
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

std::vector<int> process_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(getpid(), sizeof(set), &set) != 0) {
    throw std::runtime_error(std::string("cannot read the process's CPU affinity: ") +
                             std::strerror(errno));
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace mtperf
