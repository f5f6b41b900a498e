// The tests' main(): the binary's requirements (skip.hpp) first, then every test case.
#define CATCH_CONFIG_RUNNER
#include <cstdio>

#include <catch2/catch.hpp>

#include "tests/support/skip.hpp"

int main(int argc, char* argv[]) {
  for (const auto& why_not : mtperf::test::requirements()) {
    std::string why = why_not();
    if (!why.empty()) {
      std::fprintf(stderr, "SKIPPED: %s\n", why.c_str());
      return mtperf::test::kSkipReturnCode;
    }
  }
  return Catch::Session().run(argc, argv);
}
