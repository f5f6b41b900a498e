// Kernel-socket set-up shared by the socket-based transports.
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <vector>

#include <catch2/catch.hpp>

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
  int tcp = inet::make_socket(AF_INET, Proto::tcp, SocketOptions{});
  CHECK(reuseaddr_of(tcp) != 0);  // listeners rebind ports left in TIME_WAIT
  ::close(tcp);

  std::vector<int> fds;
  std::set<uint16_t> ports;
  for (int i = 0; i < 400; ++i) {
    int fd = inet::listen_on(inet::numeric("127.0.0.1", 0), Proto::udp, SocketOptions{}, 4);
    fds.push_back(fd);
    ports.insert(inet::local_address(fd).port());
  }
  CHECK(ports.size() == fds.size());
  for (int fd : fds)
    ::close(fd);
}

TEST_CASE("numeric addresses parse without a resolver and name what is wrong", "[inet]") {
  CHECK(inet::numeric("127.0.0.1", 7).to_string() == "127.0.0.1:7");
  CHECK(inet::numeric("::1", 7).to_string() == "[::1]:7");
  CHECK_THROWS_WITH(inet::numeric("localhost", 7), Catch::Contains("'localhost'"));
  CHECK_THROWS_AS(inet::numeric("[::1]", 7), std::invalid_argument);
}
