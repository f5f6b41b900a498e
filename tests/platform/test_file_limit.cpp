// The open-file and local-port limits a many-flow run is checked against before any connection:
// the soft limit rises as far as it may, and what cannot fit fails naming the limit and the fix.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "platform/file_limit.hpp"

using namespace mtperf;

TEST_CASE("the file limit rises to what a run needs, as far as it may", "[file_limit]") {
  const FileLimit lim{1024, 20000};
  CHECK(file_limit_to_set(500, lim, false, 1u << 20) == 1024);     // fits already
  CHECK(file_limit_to_set(15000, lim, false, 1u << 20) == 15000);  // soft up to hard
  CHECK(file_limit_to_set(40000, lim, false, 1u << 20) == 0);      // over the hard limit
  CHECK(file_limit_to_set(40000, lim, true, 1u << 20) == 40000);   // CAP_SYS_RESOURCE
  CHECK(file_limit_to_set(2u << 20, lim, true, 1u << 20) == 0);    // over fs.nr_open
}

TEST_CASE("this process can make room for a few more files", "[file_limit]") {
  const FileLimit before = file_limit();
  REQUIRE(before.soft > 0);
  CHECK(open_files() >= 3);  // stdio at least
  CHECK_NOTHROW(ensure_open_files(16, "16 flows"));
  CHECK(file_limit().soft >= before.soft);
}

TEST_CASE("more files than any limit allows fail naming the limit and the fix", "[file_limit]") {
  CHECK_THROWS_WITH(ensure_open_files(uint64_t(1) << 40, "a trillion flows"),
                    Catch::Contains("a trillion flows need about") &&
                        Catch::Contains("RLIMIT_NOFILE") && Catch::Contains("ulimit -n") &&
                        Catch::Contains("-P"));
}

// In a child, whose limits it lowers for good: a hard limit just above what is open.
TEST_CASE("room for files is made up to the hard limit, and refused beyond it", "[file_limit]") {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const rlimit low{rlim_t(open_files() + 300), rlim_t(open_files() + 400)};
    if (::setrlimit(RLIMIT_NOFILE, &low) != 0) ::_exit(10);
    if (!make_room_for_files(16)) ::_exit(11);  // within the soft limit and its margin
    if (make_room_for_files(uint64_t(1) << 40)) ::_exit(12);  // over any limit: refused...
    if (file_limit().soft != low.rlim_cur) ::_exit(13);       // ...and nothing changed
    if (!make_room_for_files(100)) ::_exit(14);               // the soft limit rises to make room
    if (file_limit().soft <= low.rlim_cur) ::_exit(15);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("the local port range is read and checked", "[file_limit]") {
  CHECK(parse_port_range("32768\t60999\n", "x") == 28232);
  CHECK(parse_port_range("1024 65535", "x") == 64512);
  CHECK_THROWS_WITH(parse_port_range("60999 32768", "range"), Catch::Contains("range"));
  CHECK_THROWS(parse_port_range("lots", "x"));

  const std::string root = std::filesystem::temp_directory_path().string() + "/mtperf_ports." +
                           std::to_string(::getpid());
  std::filesystem::create_directories(root + "/proc/sys/net/ipv4");
  std::ofstream(root + "/proc/sys/net/ipv4/ip_local_port_range") << "40000\t40999\n";
  CHECK(local_port_count(root) == 1000);
  CHECK_NOTHROW(check_local_ports(1000, "1000 flows", root));
  CHECK_THROWS_WITH(check_local_ports(1001, "1001 flows", root),
                    Catch::Contains("1001 flows need 1001 local ports") &&
                        Catch::Contains("ip_local_port_range") && Catch::Contains("(1000)") &&
                        Catch::Contains("sysctl -w"));
  // No such file: nothing to check against.
  CHECK(local_port_count(root + "/none") == 0);
  CHECK_NOTHROW(check_local_ports(1u << 20, "many flows", root + "/none"));
  std::filesystem::remove_all(root);
}
