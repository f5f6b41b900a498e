// The control connection's sockets (transports/api/control_socket.hpp): the kernel-socket
// set-up every socket-based transport uses, with the defaults of a control connection.
#include "transports/api/control_socket.hpp"

#include "transports/inet/inet.hpp"

namespace mtperf::control_socket {

SockAddr resolve(const std::string& host_port, uint16_t default_port) {
  return inet::resolve(host_port, default_port);
}

int listen(const SockAddr& where, int backlog) {
  return inet::listen_on(where, Proto::tcp, SocketOptions{}, backlog);
}

int connect(const SockAddr& server, int timeout_ms) {
  return inet::connect_to(server, Proto::tcp, SocketOptions{}, timeout_ms);
}

int connect(const SockAddr& server, int timeout_ms, const std::string& source) {
  SocketOptions o;
  o.source = source;
  return inet::connect_to(server, Proto::tcp, o, timeout_ms);
}

int accept(int listen_fd, int timeout_ms) {
  return inet::accept_within(listen_fd, timeout_ms);
}

SockAddr local_address(int fd) {
  return inet::local_address(fd);
}

SockAddr peer_address(int fd) {
  return inet::peer_address(fd);
}

void raise_fd_limit() noexcept {
  inet::raise_fd_limit();
}

}  // namespace mtperf::control_socket
