#pragma once
// Small text helpers shared by tests.
#include <string>
#include <vector>

namespace mtperf::test {

// The lines of `text`, without their '\n'; a final newline adds no empty line.
inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace mtperf::test
