#include "platform/system.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

namespace mtperf {

SystemFacts read_system_facts(const std::string& root) {
  SystemFacts f;
  utsname u{};
  if (uname(&u) == 0) {
    f.host = u.nodename;
    f.kernel = u.release;
    f.machine = u.machine;
  }
  std::ifstream in(root + "/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) f.cpu_model = line.substr(colon + 2);
      break;
    }
  }
  f.online_cpus = int(sysconf(_SC_NPROCESSORS_ONLN));
  return f;
}

}  // namespace mtperf
