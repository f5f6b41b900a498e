#include "platform/file_limit.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "platform/read_file.hpp"

namespace mtperf {
namespace {

// Descriptors beyond the flows': the control connection, stdio, /proc readers, the epoll and
// io_uring instances of the workers.
constexpr uint64_t kFileMargin = 256;

uint64_t from_rlim(rlim_t v) {
  return v == RLIM_INFINITY ? UINT64_MAX : uint64_t(v);
}

uint64_t nr_open() {
  try {
    return std::stoull(read_file("/proc/sys/fs/nr_open"));
  } catch (const std::exception&) {
    return 1u << 20;  // the kernel's default
  }
}

}  // namespace

FileLimit file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return {};
  return {from_rlim(r.rlim_cur), from_rlim(r.rlim_max)};
}

uint64_t open_files() {
  std::error_code ec;
  uint64_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec))
    ++n;
  return n;
}

uint64_t file_limit_to_set(uint64_t needed, const FileLimit& now, bool may_raise_hard,
                           uint64_t nr_open_max) {
  if (needed <= now.soft) return now.soft;
  if (needed <= now.hard) return needed;
  if (may_raise_hard && needed <= nr_open_max) return needed;
  return 0;
}

bool make_room_for_files(uint64_t more) {
  const FileLimit now = file_limit();
  const uint64_t needed = open_files() + more + kFileMargin;
  if (needed <= now.soft) return true;
  uint64_t to = file_limit_to_set(needed, now, true, nr_open());
  if (to == 0) return false;
  rlimit r{};
  r.rlim_cur = rlim_t(to);
  r.rlim_max = now.hard == UINT64_MAX ? RLIM_INFINITY : rlim_t(to > now.hard ? to : now.hard);
  return ::setrlimit(RLIMIT_NOFILE, &r) == 0;
}

void ensure_open_files(uint64_t more, const std::string& what) {
  if (make_room_for_files(more)) return;
  const FileLimit now = file_limit();
  const uint64_t needed = open_files() + more + kFileMargin;
  const uint64_t max_open = nr_open();
  std::ostringstream m;
  m << what << " need about " << needed << " open files, over this process's limit (RLIMIT_NOFILE "
    << "soft " << now.soft << ", hard " << now.hard << (needed > max_open ? ", fs.nr_open " : "")
    << (needed > max_open ? std::to_string(max_open) : std::string()) << "): raise it with "
    << "`ulimit -n " << needed << "` (as root, or LimitNOFILE= in a systemd unit, or nofile in "
    << "/etc/security/limits.conf), or run fewer flows (-P)";
  throw std::runtime_error(m.str());
}

uint32_t parse_port_range(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  uint64_t lo = 0, hi = 0;
  if (!(in >> lo >> hi) || lo > hi || hi > 65535)
    throw std::runtime_error(origin + ": not a port range: '" + text.substr(0, 64) + "'");
  return uint32_t(hi - lo + 1);
}

uint32_t local_port_count(const std::string& root) {
  const std::string path = root + "/proc/sys/net/ipv4/ip_local_port_range";
  try {
    return parse_port_range(read_file(path), path);
  } catch (const std::exception&) {
    return 0;
  }
}

void check_local_ports(uint64_t ports, const std::string& what, const std::string& root) {
  const uint32_t range = local_port_count(root);
  if (range == 0 || ports <= range) return;
  throw std::runtime_error(what + " need " + std::to_string(ports) +
                           " local ports, more than net.ipv4.ip_local_port_range holds (" +
                           std::to_string(range) +
                           "): widen it (sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\") "
                           "or run fewer flows (-P)");
}

}  // namespace mtperf
