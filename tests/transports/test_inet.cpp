// Kernel-socket set-up shared by the socket-based transports.
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "platform/tcp_socket.hpp"
#include "transports/inet/inet.hpp"

using namespace mtperf;

namespace {

int reuseaddr_of(int fd) {
  int v = -1;
  socklen_t len = sizeof v;
  REQUIRE(getsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &v, &len) == 0);
  return v;
}

}  // namespace

TEST_CASE("UDP sockets never share a port: no SO_REUSEADDR on them", "[inet]") {
  // With SO_REUSEADDR the kernel may give one ephemeral port to several UDP sockets, and a
  // flow's datagrams then land on another flow's socket.
  int udp = inet::make_socket(AF_INET, Proto::udp, SocketOptions{});
  CHECK(reuseaddr_of(udp) == 0);
  ::close(udp);
  int tcp = inet::listen_on(numeric_address("127.0.0.1", 0), Proto::tcp, SocketOptions{}, 4);
  CHECK(reuseaddr_of(tcp) != 0);  // listeners rebind ports left in TIME_WAIT
  ::close(tcp);

  std::vector<int> fds;
  std::set<uint16_t> ports;
  for (int i = 0; i < 400; ++i) {
    int fd = inet::listen_on(numeric_address("127.0.0.1", 0), Proto::udp, SocketOptions{}, 4);
    fds.push_back(fd);
    ports.insert(inet::local_address(fd).port());
  }
  CHECK(ports.size() == fds.size());
  for (int fd : fds)
    ::close(fd);
}

TEST_CASE("numeric addresses parse without a resolver and name what is wrong", "[inet]") {
  CHECK(numeric_address("127.0.0.1", 7).to_string() == "127.0.0.1:7");
  CHECK(numeric_address("::1", 7).to_string() == "[::1]:7");
  CHECK_THROWS_WITH(numeric_address("localhost", 7), Catch::Contains("'localhost'"));
  CHECK_THROWS_AS(numeric_address("[::1]", 7), std::invalid_argument);
}

TEST_CASE("crr's data-path connects apply every socket option, as set-up's do", "[inet]") {
  int listener = inet::listen_on(numeric_address("127.0.0.1", 0), Proto::tcp, SocketOptions{}, 16);
  SocketOptions o;
  o.sndbuf = 96 * 1024;
  o.rcvbuf = 80 * 1024;
  o.congestion = "reno";       // built into every kernel
  bool root = geteuid() == 0;  // SO_BINDTODEVICE needs CAP_NET_RAW before Linux 5.7
  if (root) o.bind_device = "lo";
  o.nodelay = true;
  SockAddr source = numeric_address("127.0.0.1", 0);
  inet::ConnectSpec spec;
  spec.remote = inet::local_address(listener);
  spec.opts = &o;
  spec.source = &source;
  int fast = inet::connect_fast(spec);
  int slow = inet::connect_to(spec.remote, Proto::tcp, o, 2000);
  REQUIRE(fast >= 0);
  auto get = [](int fd, int level, int name) {
    int v = -1;
    socklen_t len = sizeof v;
    REQUIRE(getsockopt(fd, level, name, &v, &len) == 0);
    return v;
  };
  for (int fd : {fast, slow}) {
    CHECK(get(fd, SOL_SOCKET, SO_SNDBUF) == get(slow, SOL_SOCKET, SO_SNDBUF));
    CHECK(get(fd, SOL_SOCKET, SO_SNDBUF) >= o.sndbuf);  // the kernel doubles it
    CHECK(get(fd, SOL_SOCKET, SO_RCVBUF) >= o.rcvbuf);
    CHECK(get(fd, IPPROTO_TCP, TCP_NODELAY) != 0);
    CHECK(congestion_of(fd) == "reno");
    char dev[IFNAMSIZ] = {};
    socklen_t len = sizeof dev;
    REQUIRE(getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, &len) == 0);
    CHECK(std::string(dev) == (root ? "lo" : ""));
  }
  ::close(fast);
  ::close(slow);
  ::close(listener);
}
