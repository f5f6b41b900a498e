#pragma once
// The two host limits that bound how many flows one run can open, besides memory: open files
// (RLIMIT_NOFILE: every connection, listener and TCP_INFO copy is a descriptor) and local ports
// (net.ipv4.ip_local_port_range: every listener bound to port 0 and every connection to one
// server address takes one). Both are checked before any connection is made, so a run that
// cannot open all its flows fails at once, naming the limit and the fix, instead of running short.
#include <cstdint>
#include <string>

namespace mtperf {

struct FileLimit {
  uint64_t soft = 0, hard = 0;  // RLIM_INFINITY reads as UINT64_MAX
};

// This process's RLIMIT_NOFILE.
FileLimit file_limit();
// The descriptors this process has open now (entries of /proc/self/fd; 0 when unreadable).
uint64_t open_files();

// What ensure_open_files decides, pure: the soft (and, when `may_raise_hard`, hard) limit to set
// so that `needed` descriptors fit, or 0 when they cannot.
uint64_t file_limit_to_set(uint64_t needed, const FileLimit& now, bool may_raise_hard,
                           uint64_t nr_open);

// Makes room for `more` descriptors beyond those open now (plus a margin for the control
// connection, logs and /proc reads): raises the soft limit, up to the hard one, and the hard one
// too where this process may (CAP_SYS_RESOURCE, up to fs.nr_open). Throws std::runtime_error
// naming `what` ("10000 flows"), the limit and the fix when it cannot.
void ensure_open_files(uint64_t more, const std::string& what);
// The same without the error: true when `more` descriptors fit (the limits raised as far as this
// process may), false when they do not (nothing changed).
bool make_room_for_files(uint64_t more);

// The number of ports in <root>/proc/sys/net/ipv4/ip_local_port_range ("32768 60999" has 28232);
// 0 when unreadable.
uint32_t local_port_count(const std::string& root = "/");
// Parses that file's text: "LOW HIGH". Throws std::runtime_error naming `origin`.
uint32_t parse_port_range(const std::string& text, const std::string& origin);

// Throws std::runtime_error when `ports` local ports are more than the range holds, naming
// `what`, the range and the fix. `ports`: what this side takes from the range.
void check_local_ports(uint64_t ports, const std::string& what, const std::string& root = "/");

}  // namespace mtperf
