#pragma once
// Kernel-socket set-up shared by every transport that rides on kernel sockets (socket, uring,
// clip, lane) and by the control connection. Set-up path only: functions throw
// std::runtime_error with a message naming the address and the system error, except where a
// function is documented to return -errno (those are used on the crr data path).
#include <cstdint>
#include <string>

#include "transports/api/transport.hpp"

namespace mtperf::inet {

// Where and how a socket-based engine's open() connects (crr).
struct ConnectSpec {
  SockAddr remote;
  Proto proto = Proto::tcp;
  const SocketOptions* opts = nullptr;
  const SockAddr* source = nullptr;  // local address (port 0) to bind first; null or AF_UNSPEC: any
};

// Parses "HOST", "HOST:PORT", "[V6]:PORT" or "V6"; default_port applies when none is given.
// Resolves names with getaddrinfo (numeric addresses need no resolver).
SockAddr resolve(const std::string& host_port, uint16_t default_port);

// A socket with every option of `opts` applied (buffers, nodelay, congestion control, device,
// source address, busy poll, MPTCP). `family` is AF_INET or AF_INET6.
int make_socket(int family, Proto proto, const SocketOptions& opts);

// Listening (TCP) or bound (UDP) socket on `where` (port 0: the kernel picks; read it back with
// local_address()).
int listen_on(const SockAddr& where, Proto proto, const SocketOptions& opts, int backlog = 1024);

// Connect with a bounded wait. Throws with "connect to ADDR: <reason>".
int connect_to(const SockAddr& remote, Proto proto, const SocketOptions& opts, int timeout_ms);

// Data-path connect for crr: blocking connect on a loaded socket; returns fd or -errno.
int connect_fast(const SockAddr& remote, Proto proto, const SocketOptions& opts) noexcept;
// The same for an engine's open(): the spec's options, or the defaults when it has none.
int connect_fast(const ConnectSpec& spec) noexcept;

// Applies the per-socket options to an accepted socket (buffers, nodelay, busy poll).
void apply_accepted_options(int fd, Proto proto, const SocketOptions& opts);

SockAddr local_address(int fd);
SockAddr peer_address(int fd);

void set_nonblocking(int fd, bool on);
// SO_RCVTIMEO/SO_SNDTIMEO: a blocking call returns EAGAIN after this long, so no wait is
// unbounded and a worker can notice the end of the test.
void set_io_timeout(int fd, int timeout_ms);
// One of the two: SO_RCVTIMEO (it bounds a blocking accept() too) or SO_SNDTIMEO.
enum class IoDir { recv, send };
void set_io_timeout(int fd, int timeout_ms, IoDir dir);

// Bounded-wait helpers for set-up exchanges (control frames, flow hellos). Return false on
// timeout, EOF or error; errno says which (ETIMEDOUT for a timeout, 0 for EOF).
bool write_all(int fd, const void* data, size_t len, int timeout_ms);
bool read_exact(int fd, void* data, size_t len, int timeout_ms);

// Accept with a bounded wait; -1 with errno = ETIMEDOUT when nothing arrived in time.
int accept_within(int listen_fd, int timeout_ms);

// Raises RLIMIT_NOFILE to its hard limit (many flows need many descriptors).
void raise_fd_limit() noexcept;

}  // namespace mtperf::inet
