// run_program's deadline and output bound: a child that hangs or floods is killed and named.
#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>

#include "platform/exec.hpp"

using mtperf::ExecOptions;
using mtperf::run_program;

TEST_CASE("run_program: a child past its deadline is killed and named", "[platform][exec]") {
  ExecOptions o;
  o.timeout_ms = 200;
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(run_program({"sleep", "10"}, o),
                    Catch::Contains("'sleep 10' did not finish within 200 ms; it was killed"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  // Within its deadline: its output, as without one.
  CHECK(run_program({"echo", "leaf1"}, o).out == "leaf1\n");
}

TEST_CASE("run_program: a child writing past the bound is killed and named", "[platform][exec]") {
  ExecOptions o;
  o.max_output = 65536;
  o.timeout_ms = 10000;
  CHECK_THROWS_WITH(run_program({"yes"}, o), Catch::Contains("'yes' wrote more than 65536 bytes"));
}
