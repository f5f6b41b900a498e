#include "platform/cpu_stat.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "platform/read_file.hpp"

namespace mtperf {
namespace {

[[noreturn]] void malformed(const std::string& origin, int line_no, std::string_view line,
                            const std::string& why) {
  throw std::runtime_error(origin + ":" + std::to_string(line_no) + ": malformed cpu line '" +
                           std::string(line) + "': " + why);
}

// Parses "cpu" or "cpuN" followed by up to 10 tick columns; returns the id (-1 for the total).
int parse_cpu_line(std::string_view line, CpuTimes& out, const std::string& origin, int line_no) {
  const size_t name_end = line.find_first_of(" \t");
  const std::string_view name = line.substr(0, name_end);
  int id = -1;
  if (name.size() > 3) {
    const auto digits = name.substr(3);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (ec != std::errc() || end != digits.data() + digits.size() || id < 0) {
      malformed(origin, line_no, line, "'" + std::string(name) + "' is not cpu<N>");
    }
  }
  uint64_t* const fields[] = {&out.user,   &out.nice, &out.system,  &out.idle,
                              &out.iowait, &out.irq,  &out.softirq, &out.steal};
  constexpr int kRequired = 4;  // user nice system idle: present on every kernel
  int column = 0;
  size_t pos = name_end == std::string_view::npos ? line.size() : name_end;
  while (true) {
    pos = line.find_first_not_of(" \t", pos);
    if (pos == std::string_view::npos) break;
    const size_t end = std::min(line.find_first_of(" \t", pos), line.size());
    const std::string_view token = line.substr(pos, end - pos);
    uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc() || ptr != token.data() + token.size()) {
      malformed(origin, line_no, line,
                "column " + std::to_string(column + 1) + " '" + std::string(token) +
                    "' is not a tick count");
    }
    // Columns 9 and 10 (guest, guest_nice) are already inside user and nice.
    if (column < 8) *fields[column] = value;
    ++column;
    pos = end;
  }
  if (column < kRequired) {
    malformed(origin, line_no, line,
              "expected at least " + std::to_string(kRequired) + " tick columns, found " +
                  std::to_string(column));
  }
  return id;
}

uint64_t delta(uint64_t before, uint64_t after) {
  return after >= before ? after - before : 0;
}

}  // namespace

CpuSnapshot parse_cpu_snapshot(const std::string& text, const std::string& origin) {
  CpuSnapshot snap;
  bool have_total = false;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.rfind("cpu", 0) != 0) continue;
    CpuTimes times;
    const int id = parse_cpu_line(line, times, origin, line_no);
    if (id < 0) {
      snap.total = times;
      have_total = true;
    } else {
      snap.per_cpu.push_back(times);
      snap.cpu_ids.push_back(id);
    }
  }
  if (!have_total) throw std::runtime_error(origin + ": no 'cpu' total line");
  return snap;
}

CpuSnapshot read_cpu_snapshot(const std::string& root) {
  const std::string path = (std::filesystem::path(root) / "proc/stat").string();
  return parse_cpu_snapshot(read_file(path), path);
}

CpuUsage cpu_usage(const CpuTimes& before, const CpuTimes& after) {
  CpuTimes d;
  d.user = delta(before.user, after.user);
  d.nice = delta(before.nice, after.nice);
  d.system = delta(before.system, after.system);
  d.idle = delta(before.idle, after.idle);
  d.iowait = delta(before.iowait, after.iowait);
  d.irq = delta(before.irq, after.irq);
  d.softirq = delta(before.softirq, after.softirq);
  d.steal = delta(before.steal, after.steal);
  CpuUsage u;
  u.ticks = d.total();
  if (u.ticks == 0) return u;
  // ticks * 100 / total rounds once, so shares that are exact in binary (12.5 %) come out exact.
  const double total = static_cast<double>(u.ticks);
  const auto share = [total](uint64_t ticks) { return static_cast<double>(ticks) * 100.0 / total; };
  u.user = share(d.user);
  u.nice = share(d.nice);
  u.sys = share(d.system);
  u.irq = share(d.irq);
  u.softirq = share(d.softirq);
  u.iowait = share(d.iowait);
  u.steal = share(d.steal);
  u.idle = share(d.idle);
  // From the busy ticks rather than 100 - idle - iowait: the same number, without rounding
  // leaving 1e-14 % on a fully idle CPU.
  u.util = share(d.user + d.nice + d.system + d.irq + d.softirq + d.steal);
  return u;
}

CpuUtilization cpu_utilization(const CpuSnapshot& before, const CpuSnapshot& after) {
  CpuUtilization out;
  out.total = cpu_usage(before.total, after.total);
  for (size_t i = 0; i < after.per_cpu.size(); ++i) {
    const int id = after.cpu_ids[i];
    const auto it = std::find(before.cpu_ids.begin(), before.cpu_ids.end(), id);
    if (it == before.cpu_ids.end()) continue;
    const auto j = static_cast<size_t>(it - before.cpu_ids.begin());
    out.per_cpu.emplace_back(id, cpu_usage(before.per_cpu[j], after.per_cpu[i]));
  }
  std::sort(out.per_cpu.begin(), out.per_cpu.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  out.cpus = static_cast<int>(out.per_cpu.size());
  return out;
}

}  // namespace mtperf
