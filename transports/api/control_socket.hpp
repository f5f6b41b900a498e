#pragma once
// The kernel TCP sockets of the control connection (control/): what the client and the server
// need to find, open and describe it, whatever transport the test's flows take. Set-up path
// only: functions throw std::runtime_error naming the address and the system error, except
// where documented otherwise. Implemented by the kernel-socket set-up (transports/inet/), so
// that control/ includes nothing of a transport's folder.
#include <cstdint>
#include <string>

#include "transports/api/transport.hpp"

namespace mtperf::control_socket {

// "HOST", "HOST:PORT", "[V6]:PORT" or "V6"; default_port applies when none is given. Names go
// through getaddrinfo.
SockAddr resolve(const std::string& host_port, uint16_t default_port);

// A listening TCP socket on `where` (port 0: the kernel picks; read it back with
// local_address()).
int listen(const SockAddr& where, int backlog);

// A TCP connection to `server`, waiting at most timeout_ms. Throws with "connect to ADDR: ...".
int connect(const SockAddr& server, int timeout_ms);
// The same from the local address `source` (numeric; "" = any), so that the peer sees it.
int connect(const SockAddr& server, int timeout_ms, const std::string& source);

// The next connection on listen_fd, waiting at most timeout_ms; -1 with errno set when none
// came (ETIMEDOUT) or accept failed.
int accept(int listen_fd, int timeout_ms);

SockAddr local_address(int fd);
SockAddr peer_address(int fd);

// Raises RLIMIT_NOFILE to its hard limit (a server holds many sessions' descriptors).
void raise_fd_limit() noexcept;

}  // namespace mtperf::control_socket
