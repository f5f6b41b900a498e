#pragma once
// Running a command from a test, the mtperf binary most often: its exit status and standard
// output; its standard error goes to the test's log. MTPERF_BINARY is defined for the tests that
// run the binary (tests/CMakeLists.txt).
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <catch2/catch.hpp>

namespace mtperf::test {

struct CommandResult {
  int rc = -1;  // the exit status; -1 when the command did not exit (a signal)
  std::string out;
};

// `command` is a shell command line.
inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
    r.out.append(buf, n);
  const int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  INFO(command << "\n" << r.out);
  return r;
}

#ifdef MTPERF_BINARY
// `args`: a shell word list after the binary's path.
inline CommandResult mtperf_cmd(const std::string& args) {
  return run_command(std::string(MTPERF_BINARY) + " " + args);
}
#endif

}  // namespace mtperf::test
