#include "platform/host_limits.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "platform/read_file.hpp"

namespace mtperf {
namespace {}  // namespace

std::vector<std::string> parse_congestion_list(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  std::string name;
  while (in >> name && out.size() < 64) {
    if (name.size() <= 15) out.push_back(name);
  }
  return out;
}

std::vector<std::string> congestion_controls(bool privileged, const std::string& root) {
  const char* file =
      privileged ? "tcp_available_congestion_control" : "tcp_allowed_congestion_control";
  return parse_congestion_list(read_file(root + "/proc/sys/net/ipv4/" + file));
}

uint64_t parse_mem_total(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("MemTotal:")) continue;
    std::istringstream f(line.substr(9));
    uint64_t kib = 0;
    std::string unit;
    if (!(f >> kib >> unit) || unit != "kB" || kib == 0 || kib > (uint64_t(1) << 50)) {
      throw std::runtime_error(origin + ": malformed MemTotal line '" + line + "'");
    }
    return kib * 1024;
  }
  throw std::runtime_error(origin + ": no MemTotal line");
}

uint64_t mem_total_bytes(const std::string& root) {
  std::string path = root + "/proc/meminfo";
  return parse_mem_total(read_file(path), path);
}

bool privileged_network() {
  return geteuid() == 0;
}

}  // namespace mtperf
