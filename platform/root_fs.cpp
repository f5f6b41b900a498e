#include "platform/root_fs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace mtperf {
namespace fs = std::filesystem;

namespace {

constexpr int kMaxSymlinks = 40;  // as the kernel's own limit: a loop is an error, not a hang
constexpr size_t kMaxFileBytes = 1 << 22;  // /proc/interrupts of a large host is well below

}  // namespace

std::string RootFs::resolve(std::string_view rel) const {
  std::vector<std::string> done, todo = split(rel);
  std::reverse(todo.begin(), todo.end());
  int links = 0;
  while (!todo.empty()) {
    std::string comp = std::move(todo.back());
    todo.pop_back();
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(comp);
    std::error_code ec;
    fs::path real = real_path(join(done));
    if (!fs::is_symlink(fs::symlink_status(real, ec))) continue;
    if (++links > kMaxSymlinks) return {};
    std::string target = fs::read_symlink(real, ec).string();
    done.pop_back();
    if (!target.empty() && target[0] == '/') done.clear();
    auto parts = split(target);
    for (auto it = parts.rbegin(); it != parts.rend(); ++it)
      todo.push_back(*it);
  }
  return join(done);
}

std::string RootFs::read(std::string_view rel) const {
  return read_resolved(resolve(rel));
}

std::string RootFs::read_resolved(std::string_view resolved) const {
  // POSIX read, not ifstream: sysfs answers some reads with an error (speed of a link that is
  // down gives EINVAL), and libstdc++'s filebuf throws on that.
  std::string text;
  int fd = ::open(real_path(resolved).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < kMaxFileBytes;)
    text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.pop_back();
  return text;
}

bool RootFs::exists(std::string_view rel) const {
  std::error_code ec;
  return fs::exists(real_path(resolve(rel)), ec);
}

std::vector<std::string> RootFs::list(std::string_view rel) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(real_path(resolve(rel)), ec), end; !ec && it != end;
       it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool RootFs::is_live() const {
  std::error_code ec;
  return fs::equivalent(root_, "/", ec);
}

std::vector<std::string> RootFs::split(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) parts.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string RootFs::join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts)
    out += (out.empty() ? "" : "/") + part;
  return out;
}

std::optional<long long> to_number(std::string_view text, int base) {
  if (base == 16 && text.starts_with("0x")) text.remove_prefix(2);
  long long value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace mtperf
