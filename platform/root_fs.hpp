#pragma once
// Reads sysfs and procfs below a root directory ("/" for the live host, or a fixture tree), for
// the platform readers (topology, RDMA devices). Paths handed around are relative to the root and
// already free of symlinks, so ".." and absolute link targets can never leave the root: a
// fixture tree copied from a host with absolute links reads like that host.
//
// Missing or unreadable files read as "" or an empty list, never as an error: sysfs answers some
// reads with an error (the speed of a link that is down gives EINVAL; an unused GID's type too).
// Thread-safety: a RootFs holds only its root; use one per thread or share it read-only.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mtperf {

class RootFs {
 public:
  explicit RootFs(const std::string& root) : root_(root.empty() ? "/" : root) {}

  // Follows symlinks component by component, treating the root as "/". "" when a link loops.
  std::string resolve(std::string_view rel) const;
  std::filesystem::path real_path(std::string_view rel) const {
    return root_ / std::filesystem::path(rel);
  }
  // The file's content with trailing whitespace removed; "" when unreadable. `rel` is resolved.
  std::string read(std::string_view rel) const;
  // The same for a path already resolve()d (no symlinks below it): one open, no lstat per part.
  std::string read_resolved(std::string_view resolved) const;
  bool exists(std::string_view rel) const;
  // The names in a directory, ascending; empty when it cannot be listed.
  std::vector<std::string> list(std::string_view rel) const;
  // True when the root is the live "/".
  bool is_live() const;

  static std::vector<std::string> split(std::string_view path);
  static std::string join(const std::vector<std::string>& parts);

 private:
  std::filesystem::path root_;
};

// A whole decimal (or hexadecimal, "0x" optional) number, nothing else; empty otherwise.
std::optional<long long> to_number(std::string_view text, int base = 10);

}  // namespace mtperf
