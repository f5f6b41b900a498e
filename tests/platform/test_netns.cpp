// Namespace test hosts: builds a real 2-adapter testbed, checks its addresses, connects over TCP
// across each subnet, and checks that nothing named with the testbed prefix is left behind.
// Needs root; skipped (exit 77) otherwise.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <regex>

#include <nlohmann/json.hpp>

#include "platform/exec.hpp"
#include "platform/netns.hpp"
#include "platform/topology.hpp"
#include "tests/support/namespaces.hpp"

MTPERF_TEST_REQUIRES(mtperf::test::why_no_namespaces("netns tests"));

namespace {

std::string own_prefix() {
  return std::string(mtperf::kTestbedPrefix) + std::to_string(::getpid()) + "-";
}

// A socket that closes itself.
struct Socket {
  int fd = -1;
  explicit Socket(int f) : fd(f) {}
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

sockaddr_in ipv4(const std::string& addr, uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  REQUIRE(::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) == 1);
  return sa;
}

// Listens in the far namespace on port 0, connects from the near namespace bound to the near
// address, and passes one byte each way.
void tcp_round_trip(const mtperf::Testbed& bed, const mtperf::TestbedLink& link) {
  std::unique_ptr<Socket> listener;
  uint16_t port = 0;
  mtperf::run_in(bed.far_ns(), [&] {
    listener = std::make_unique<Socket>(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(listener->fd >= 0);
    auto sa = ipv4(link.far_addr, 0);
    REQUIRE(::bind(listener->fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    REQUIRE(::listen(listener->fd, 4) == 0);
    socklen_t len = sizeof sa;
    REQUIRE(::getsockname(listener->fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0);
    port = ntohs(sa.sin_port);
  });
  std::unique_ptr<Socket> client;
  mtperf::run_in(bed.near_ns(), [&] {
    client = std::make_unique<Socket>(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(client->fd >= 0);
    auto local = ipv4(link.near_addr, 0);
    REQUIRE(::bind(client->fd, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0);
    auto remote = ipv4(link.far_addr, port);
    REQUIRE(::connect(client->fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote) == 0);
  });
  // The sockets keep their namespaces; the rest runs on this thread.
  sockaddr_in peer{};
  socklen_t len = sizeof peer;
  Socket server(::accept4(listener->fd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC));
  REQUIRE(server.fd >= 0);
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &peer.sin_addr, text, sizeof text);
  CHECK(std::string(text) == link.near_addr);
  char byte = 'x';
  REQUIRE(::send(client->fd, &byte, 1, 0) == 1);
  REQUIRE(::recv(server.fd, &byte, 1, 0) == 1);
  REQUIRE(::send(server.fd, &byte, 1, 0) == 1);
  REQUIRE(::recv(client->fd, &byte, 1, 0) == 1);
  CHECK(byte == 'x');
}

void check_nothing_left(const std::string& prefix) {
  CHECK(mtperf::list_namespaces(prefix).empty());
  std::string links = mtperf::run_checked({"ip", "-o", "link", "show"});
  // The testbed's veth names; other suites may own other links named mtperf-something.
  CHECK_FALSE(std::regex_search(links, std::regex("mtperf[0-9]+[nf][@:]")));
}

}  // namespace

TEST_CASE("rates parse in bits per second") {
  CHECK(mtperf::parse_rate("155.52mbit") == 155'520'000);
  CHECK(mtperf::parse_rate("1g") == 1'000'000'000);
  CHECK(mtperf::parse_rate("622080000") == 622'080'000);
  CHECK_THROWS_WITH(mtperf::parse_rate("fast"), Catch::Contains("'fast'"));
  CHECK_THROWS_WITH(mtperf::parse_rate("1bit"), Catch::Contains("out of range"));
}

TEST_CASE("a 2-adapter testbed: addresses, TCP over each subnet, clean teardown") {
  {
    mtperf::TestbedOptions options;
    options.adapters = 2;
    options.mtu = 9000;
    mtperf::Testbed bed(options);
    CHECK(bed.near_ns().starts_with(own_prefix()));
    REQUIRE(bed.links().size() == 2);
    REQUIRE(mtperf::list_namespaces(own_prefix()).size() == 2);

    // Read the configuration back from inside each namespace.
    for (const auto& [ns, near] :
         {std::pair{bed.near_ns(), true}, std::pair{bed.far_ns(), false}}) {
      std::vector<mtperf::InterfaceAddress> addrs;
      mtperf::run_in(ns, [&] { addrs = mtperf::interface_addresses(); });
      for (const auto& link : bed.links()) {
        const std::string& ifname = near ? link.near_if : link.far_if;
        const std::string& addr = near ? link.near_addr : link.far_addr;
        bool found = false;
        for (const auto& a : addrs)
          found |= a.interface == ifname && a.address == addr && a.prefix_length == 24;
        CHECK(found);
      }
      std::string show = mtperf::run_checked({"ip", "-n", ns, "-o", "link", "show"});
      CHECK(show.find("mtu 9000") != std::string::npos);
      CHECK(show.find("lo: <LOOPBACK,UP") != std::string::npos);
    }
    CHECK(bed.links()[1].near_addr == "10.231.1.1");
    CHECK(bed.links()[1].far_addr == "10.231.1.2");

    for (const auto& link : bed.links()) {
      INFO("subnet " << link.subnet);
      tcp_round_trip(bed, link);
    }
  }
  check_nothing_left(own_prefix());
}

TEST_CASE("shaping, exec_in, and release plus state-file removal") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("mtperf-state-" + std::to_string(::getpid()));
  {
    mtperf::TestbedOptions options;
    options.adapters = 1;
    options.rate_bps = mtperf::parse_rate("155.52mbit");
    options.tag = "persist";
    mtperf::Testbed bed(options);
    CHECK(mtperf::exec_in(bed.far_ns(), {"ip", "addr", "show", "dev", "mtperf0f"}) == 0);
    std::string qdisc =
        mtperf::run_checked({"tc", "-n", bed.near_ns(), "qdisc", "show", "dev", "mtperf0n"});
    CHECK(qdisc.find("tbf") != std::string::npos);
    mtperf::write_testbed_state("persist", bed.state(), dir.string());
    bed.release();
  }
  // Released: still there after the object is gone.
  CHECK(mtperf::list_namespaces(own_prefix()).size() == 2);
  CHECK(mtperf::list_testbed_states(dir.string()) == std::vector<std::string>{"persist"});
  auto state = mtperf::read_testbed_state("persist", dir.string());
  auto removed = mtperf::remove_testbed(state);
  CHECK(removed.size() == 2);
  fs::remove_all(dir);
  check_nothing_left(own_prefix());
}

// Issue 40: a testbed that outlives its command (`mtperf testbed up`, `atm up`) is named by its
// name alone, so `ip netns exec mtperf-NAME-near ...` can be typed without looking the pid up.
TEST_CASE("a lasting testbed's namespaces carry its name, not a pid") {
  const std::string tag = "lasting-" + std::to_string(::getpid());
  {
    mtperf::TestbedOptions options;
    options.tag = tag;
    options.lasting = true;
    mtperf::Testbed bed(options);
    CHECK(bed.near_ns() == "mtperf-" + tag + "-near");
    CHECK(bed.far_ns() == "mtperf-" + tag + "-far");
  }
  check_nothing_left("mtperf-" + tag + "-");
}

TEST_CASE("a failed build removes exactly what it made") {
  mtperf::TestbedOptions options;
  options.adapters = 2;
  options.mtu = 70000;  // rejected before anything is made
  CHECK_THROWS_WITH(mtperf::Testbed(options), Catch::Contains("MTU"));
  // A namespace in the way of the far end: the build fails after creating the near one, which
  // must go again, while the namespace it did not make stays.
  options.mtu = 0;
  options.tag = "clash";
  std::string far = own_prefix() + "clash-far";
  mtperf::run_checked({"ip", "netns", "add", far});
  CHECK_THROWS_WITH(mtperf::Testbed(options), Catch::Contains("already exists"));
  CHECK(mtperf::list_namespaces(own_prefix()) == std::vector<std::string>{far});
  mtperf::run_checked({"ip", "netns", "del", far});
  check_nothing_left(own_prefix());
}
