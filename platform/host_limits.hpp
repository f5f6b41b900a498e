#pragma once
// What this host lets a test use, read from <root>/proc: the congestion-control algorithms a
// socket may choose, and the memory the host has. The server checks a client's test against
// them before it sets anything up.
#include <cstdint>
#include <string>
#include <vector>

namespace mtperf {

// The congestion-control names a socket may set: <root>/proc/sys/net/ipv4/
// tcp_allowed_congestion_control, or tcp_available_congestion_control for a privileged
// (CAP_NET_ADMIN) process, which may pick any loaded algorithm. Never a name that is not listed:
// a privileged setsockopt(TCP_CONGESTION) with an unknown name makes the kernel try to load a
// module of that name. Throws std::runtime_error naming the file when it cannot be read.
std::vector<std::string> congestion_controls(bool privileged, const std::string& root = "/");

// Parses the whitespace-separated list of such a file (at most 64 names of at most 15 chars).
std::vector<std::string> parse_congestion_list(const std::string& text);

// MemTotal of <root>/proc/meminfo, in bytes. Throws std::runtime_error naming the file.
uint64_t mem_total_bytes(const std::string& root = "/");
// Parses /proc/meminfo text; `origin` names the source in errors.
uint64_t parse_mem_total(const std::string& text, const std::string& origin);

// Whether this process may choose any loaded congestion control (effective uid 0: CAP_NET_ADMIN).
bool privileged_network();

}  // namespace mtperf
