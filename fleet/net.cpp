#include "fleet/net.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "platform/number.hpp"
#include "transports/api/control_socket.hpp"

namespace mtperf::fleet {
namespace {

// The numeric host of an address, without its port.
std::string host_of(const SockAddr& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.family() == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a.get())->sin_addr, buf, sizeof buf);
  else if (a.family() == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a.get())->sin6_addr, buf,
              sizeof buf);
  return buf;
}

void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

void split_host_port(const std::string& text, uint16_t default_port, std::string& host,
                     uint16_t& port) {
  port = default_port;
  std::string rest;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos) throw std::invalid_argument("'" + text + "': no ']'");
    host = text.substr(1, close - 1);
    rest = text.substr(close + 1);
    if (!rest.empty() && rest[0] != ':')
      throw std::invalid_argument("'" + text + "': expected ':PORT' after ']'");
  } else {
    size_t colon = text.find(':');
    if (colon != std::string::npos && text.find(':', colon + 1) != std::string::npos) {
      host = text;  // a bare IPv6 address
      return;
    }
    host = text.substr(0, colon);
    if (colon != std::string::npos) rest = text.substr(colon);
  }
  if (rest.empty()) return;
  const auto v = parse_whole(std::string_view(rest).substr(1), 1, 65535);
  if (!v) throw std::invalid_argument("'" + text + "': the port must be in 1..65535");
  port = uint16_t(*v);
}

std::string join_host_port(const std::string& host, uint16_t port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

int listen_tcp(const std::string& host, uint16_t port) {
  const std::string where = join_host_port(host.empty() ? "0.0.0.0" : host, port);
  return control_socket::listen(control_socket::resolve(where, port), 1024);
}

int connect_tcp(const std::string& host, uint16_t port, int timeout_ms, const std::string& source) {
  int fd = control_socket::connect(control_socket::resolve(join_host_port(host, port), port),
                                   timeout_ms, source);
  no_delay(fd);
  return fd;
}

int accept_within(int listen_fd, int timeout_ms) {
  int fd = control_socket::accept(listen_fd, timeout_ms);
  if (fd >= 0) no_delay(fd);
  return fd;
}

uint16_t local_port(int fd) {
  return control_socket::local_address(fd).port();
}

std::string local_host(int fd) {
  try {
    return host_of(control_socket::local_address(fd));
  } catch (const std::exception&) {
    return "";
  }
}

std::string peer_host(int fd) {
  try {
    return host_of(control_socket::peer_address(fd));
  } catch (const std::exception&) {
    return "";
  }
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

bool is_loopback(const std::string& address) {
  return address.rfind("127.", 0) == 0 || address == "::1" || address == "localhost";
}

}  // namespace mtperf::fleet
