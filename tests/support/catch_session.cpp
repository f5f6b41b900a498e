// Catch2's implementation, compiled once for every test executable (a shared library in the
// sanitized builds, where it is ~11 MB of instrumented code that ~100 executables would each
// copy). main() stays in each executable (catch_main.cpp), beside the requirements its test
// files register.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/support/catch_session.hpp"

namespace mtperf::test {

int run_catch_session(int argc, char* argv[]) {
  return Catch::Session().run(argc, argv);
}

}  // namespace mtperf::test
