#pragma once
// Skipping a test binary loudly, and only whole: what a binary needs (root, namespaces, a kernel
// feature, a device) is declared at file scope and checked by the tests' main() before any test
// case runs. When something is missing the binary prints "SKIPPED: <why>" and exits with
// kSkipReturnCode, which ctest reports as Skipped (SKIP_RETURN_CODE); otherwise every test case
// runs and reports. A test case never ends the process itself, so a failure can never be
// reported as a skip, nor hide the cases after it.
//
//   MTPERF_TEST_REQUIRES(mtperf::test::why_not_root("the emulated ATM link"));
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

namespace mtperf::test {

inline constexpr int kSkipReturnCode = 77;

// Returns "" when the requirement is met, else why not (what is missing and how to get it).
using WhyNot = std::function<std::string()>;

inline std::vector<WhyNot>& requirements() {
  static std::vector<WhyNot> all;
  return all;
}

inline int register_requirement(WhyNot w) {
  requirements().push_back(std::move(w));
  return 0;
}

inline std::string why_not_root(const std::string& what) {
  return geteuid() == 0 ? "" : what + " needs root (network namespaces, TUN/TAP)";
}

}  // namespace mtperf::test

#define MTPERF_TEST_CAT2(a, b) a##b
#define MTPERF_TEST_CAT(a, b) MTPERF_TEST_CAT2(a, b)
#define MTPERF_TEST_REQUIRES(...)                                                         \
  [[maybe_unused]] static const int MTPERF_TEST_CAT(mtperf_test_requirement_, __LINE__) = \
      ::mtperf::test::register_requirement([] { return std::string(__VA_ARGS__); })
