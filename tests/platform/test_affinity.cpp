#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "platform/affinity.hpp"

using namespace mtperf;

TEST_CASE("CPU lists", "[affinity]") {
  CHECK(parse_cpu_list("0-3,8-11") == std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11});
  CHECK(parse_cpu_list("0\n") == std::vector<int>{0});
  CHECK(parse_cpu_list("5,1,3-4,1") == std::vector<int>{1, 3, 4, 5});
  CHECK(parse_cpu_list("").empty());
  CHECK_THROWS_WITH(parse_cpu_list("0-3,x"), Catch::Contains("'x' is not a CPU number"));
  CHECK_THROWS_WITH(parse_cpu_list("3-1"), Catch::Contains("'3-1' runs backwards"));
  CHECK_THROWS_WITH(parse_cpu_list("0,,2"), Catch::Contains("'' is not a CPU number"));
  CHECK_THROWS_WITH(parse_cpu_list("-1"), Catch::Contains("not a CPU number"));
  CHECK_THROWS_WITH(parse_cpu_list("1000000"), Catch::Contains("beyond"));
  CHECK(format_cpu_list(std::vector<int>{0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
  CHECK(format_cpu_list(std::vector<int>{}) == "");
}

TEST_CASE("online CPUs from a fixture root and the live one", "[affinity]") {
  const auto root =
      std::filesystem::temp_directory_path() / ("mtperf-affinity-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "sys/devices/system/cpu");
  std::ofstream(root / "sys/devices/system/cpu/online") << "0-3,8-11\n";
  CHECK(online_cpus(root.string()) == std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11});
  std::ofstream(root / "sys/devices/system/cpu/online") << "0-q\n";
  CHECK_THROWS_WITH(online_cpus(root.string()),
                    Catch::Contains("cpu/online:1") && Catch::Contains("'q'"));
  std::filesystem::remove_all(root);
  CHECK_THROWS_WITH(online_cpus(root.string()), Catch::Contains("cannot read"));

  const auto live = online_cpus();
  CHECK(static_cast<int>(live.size()) == online_cpu_count());
}

TEST_CASE("pinning the calling thread", "[affinity]") {
  const auto allowed = current_thread_affinity();
  REQUIRE(!allowed.empty());
  std::thread t([&] {
    pin_current_thread(allowed.back());
    CHECK(current_thread_affinity() == std::vector<int>{allowed.back()});
    CHECK(sched_getcpu() == allowed.back());
    CHECK_THROWS_WITH(pin_current_thread(CPU_SETSIZE + 1),
                      Catch::Contains("CPU " + std::to_string(CPU_SETSIZE + 1)));
    // A CPU number the machine does not have: the kernel refuses, and the message says so.
    CHECK_THROWS_WITH(
        pin_current_thread(CPU_SETSIZE - 1),
        Catch::Contains("cannot pin thread to CPU " + std::to_string(CPU_SETSIZE - 1)) &&
            Catch::Contains("Invalid argument"));
    set_current_thread_affinity(allowed);
    CHECK(current_thread_affinity() == allowed);
  });
  t.join();
}

TEST_CASE("CPU orders keep what was written; online checks name the CPU") {
  CHECK(parse_cpu_order("1,0") == std::vector<int>{1, 0});
  CHECK(parse_cpu_order("2-3,0,0") == std::vector<int>{2, 3, 0, 0});
  CHECK_THROWS_WITH(parse_cpu_order("0,x"), Catch::Contains("'x' is not a CPU number"));
  check_cpus_online(online_cpus());
  CHECK_THROWS_WITH(check_cpus_online(std::vector<int>{4095}),
                    Catch::StartsWith("CPU 4095 is not online here (online: "));
}
