#pragma once
// The requirement of test binaries that build hosts in network namespaces (skip.hpp).
#include <string>

#include "platform/netns.hpp"
#include "tests/support/skip.hpp"

namespace mtperf::test {

inline std::string why_no_namespaces(const std::string& what) {
  std::string why = why_not_root(what);
  if (!why.empty()) return why;
  return can_create_namespaces(&why) ? "" : what + ": " + why;
}

}  // namespace mtperf::test
