#pragma once
// Skipping a test loudly: a test executable that lacks a privilege or a device prints the
// reason and exits with kSkipReturnCode, which ctest reports as "Skipped" (SKIP_RETURN_CODE).
#include <cstdio>
#include <string>

#include <unistd.h>

namespace mtperf::test {

inline constexpr int kSkipReturnCode = 77;

[[noreturn]] inline void skip(const std::string& why) {
  std::fprintf(stderr, "SKIPPED: %s\n", why.c_str());
  std::fflush(stderr);
  _exit(kSkipReturnCode);
}

inline void require_root(const char* what) {
  if (geteuid() != 0) skip(std::string(what) + " needs root (network namespaces, TUN/TAP)");
}

}  // namespace mtperf::test
