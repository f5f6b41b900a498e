// Runs a fuzz target over files without libFuzzer: each argument is a file or a folder whose
// files (sorted by name) are run one by one. A missing argument, or no input at all, is an
// error, so a wrong path cannot pass as an empty corpus. A crash or a broken invariant aborts,
// naming the file first.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.hpp"

namespace {

namespace fs = std::filesystem;

int run_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return 1;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
  // A copy of exactly the file's size, so an overread shows under ASan as it would in libFuzzer.
  std::vector<std::uint8_t> data(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(data.data(), data.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int errors = 0, runs = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        errors += run_file(f);
        ++runs;
      }
    } else if (fs::is_regular_file(arg, ec)) {
      errors += run_file(arg);
      ++runs;
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a folder\n", argv[i]);
      ++errors;
    }
  }
  std::printf("replay: %d inputs, %d errors\n", runs, errors);
  return errors == 0 && runs > 0 ? 0 : 1;
}
