// The host's limits, read from fixture trees: congestion-control lists and MemTotal.
#include <catch2/catch.hpp>

#include "platform/host_limits.hpp"

using namespace mtperf;

namespace {

const std::string kHost = std::string(MTPERF_FIXTURES) + "/limits/h1";

}  // namespace

TEST_CASE("an unprivileged process gets the allowed list, a privileged one the available list",
          "[host_limits]") {
  CHECK(congestion_controls(false, kHost) == std::vector<std::string>{"reno", "cubic"});
  CHECK(congestion_controls(true, kHost) ==
        std::vector<std::string>{"reno", "cubic", "bbr", "htcp"});
  CHECK_THROWS_WITH(congestion_controls(false, "/nonexistent"), Catch::Contains("/nonexistent"));
}

TEST_CASE("congestion lists are bounded", "[host_limits]") {
  CHECK(parse_congestion_list(" reno\tcubic \n").size() == 2);
  CHECK(parse_congestion_list(std::string(40, 'x') + " reno") == std::vector<std::string>{"reno"});
  std::string many;
  for (int i = 0; i < 100; ++i)
    many += "cc" + std::to_string(i) + " ";
  CHECK(parse_congestion_list(many).size() == 64);
}

TEST_CASE("MemTotal is read in bytes", "[host_limits]") {
  CHECK(mem_total_bytes(kHost) == uint64_t(8029016) * 1024);
  CHECK(parse_mem_total("MemFree: 1 kB\nMemTotal:  2048 kB\n", "x") == 2048 * 1024);
  CHECK_THROWS_WITH(parse_mem_total("MemFree: 1 kB\n", "x"), Catch::Contains("no MemTotal"));
  CHECK_THROWS_WITH(parse_mem_total("MemTotal: lots\n", "x"), Catch::Contains("malformed"));
}
