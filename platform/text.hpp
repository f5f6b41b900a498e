#pragma once
// Small text helpers for the line-oriented files users write (pair files, group files).
#include <string_view>
#include <vector>

namespace mtperf {

// The words of a line, split at spaces, tabs and carriage returns; empty words dropped. The
// views point into `line`.
inline std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
      ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r')
      ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

}  // namespace mtperf
