#pragma once
// A whole file read at once: /proc and /sys files, whose size stat() does not tell.
#include <string>

namespace mtperf {

// The file's bytes. Throws std::runtime_error "cannot read PATH: <errno text>" when it cannot be
// opened or read.
std::string read_file(const std::string& path);

}  // namespace mtperf
