#pragma once
// The few TCP calls the fleet's control connections need (set-up path only; every wait
// bounded). Errors throw std::runtime_error naming the address and the system error.
#include <cstdint>
#include <string>

namespace mtperf::fleet {

// "HOST", "HOST:PORT", "[V6]:PORT": the host and the port (default_port when none is given).
void split_host_port(const std::string& text, uint16_t default_port, std::string& host,
                     uint16_t& port);
// A listening TCP socket on host:port ("" or "0.0.0.0": any IPv4 address; port 0: any port).
int listen_tcp(const std::string& host, uint16_t port);
// Connects to host:port within timeout_ms (names resolved with getaddrinfo), from the local
// address `source` when one is given; the connected fd.
int connect_tcp(const std::string& host, uint16_t port, int timeout_ms,
                const std::string& source = "");
// accept() waiting at most timeout_ms; -1 when nothing arrived.
int accept_within(int listen_fd, int timeout_ms);
uint16_t local_port(int fd);
// The numeric addresses of the socket's two ends ("" on error).
std::string local_host(int fd);
std::string peer_host(int fd);
// "HOST:PORT" or "[V6]:PORT".
std::string join_host_port(const std::string& host, uint16_t port);
std::string host_name();
// 127.0.0.0/8, ::1 or "localhost".
bool is_loopback(const std::string& address);

}  // namespace mtperf::fleet
