// The tests' main(): the binary's requirements (skip.hpp) first, then every test case.
#include <cstdio>

#include "tests/support/catch_session.hpp"
#include "tests/support/skip.hpp"

int main(int argc, char* argv[]) {
  for (const auto& why_not : mtperf::test::requirements()) {
    std::string why = why_not();
    if (!why.empty()) {
      std::fprintf(stderr, "SKIPPED: %s\n", why.c_str());
      return mtperf::test::kSkipReturnCode;
    }
  }
  return mtperf::test::run_catch_session(argc, argv);
}
