#include "platform/interrupts.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "platform/read_file.hpp"

namespace mtperf {
namespace {

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t pos = 0;
  while ((pos = line.find_first_not_of(" \t", pos)) != std::string_view::npos) {
    const size_t end = std::min(line.find_first_of(" \t", pos), line.size());
    tokens.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  return tokens;
}

bool parse_u64(std::string_view s, uint64_t& v) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size();
}

[[noreturn]] void malformed(const std::string& origin, int line_no, std::string_view line,
                            const std::string& why) {
  throw std::runtime_error(origin + ":" + std::to_string(line_no) + ": malformed line '" +
                           std::string(line) + "': " + why);
}

// "CPU0 CPU1 CPU4" → {0, 1, 4}.
std::vector<int> parse_cpu_header(std::string_view line, const std::string& origin) {
  std::vector<int> ids;
  for (const auto token : split_ws(line)) {
    int id = -1;
    const auto digits = token.substr(std::min<size_t>(3, token.size()));
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (!token.starts_with("CPU") || ec != std::errc() || ptr != digits.data() + digits.size()) {
      malformed(origin, 1, line,
                "expected a header of CPU<N> columns, found '" + std::string(token) + "'");
    }
    ids.push_back(id);
  }
  if (ids.empty()) malformed(origin, 1, line, "no CPU columns in the header");
  return ids;
}

// Whether a token after the chip is the hwirq/trigger part: "5-edge", "27", "Level", "Edge".
bool is_hwirq_token(std::string_view t) {
  if (t == "Level" || t == "Edge") return true;
  return !t.empty() && std::isdigit(static_cast<unsigned char>(t.front()));
}

void fill_device_columns(IrqRow& row, const std::vector<std::string_view>& rest) {
  size_t i = 0;
  if (i < rest.size()) row.chip = std::string(rest[i++]);
  for (; i < rest.size() && is_hwirq_token(rest[i]); ++i) {
    if (!row.hwirq.empty()) row.hwirq += ' ';
    row.hwirq += rest[i];
  }
  // Shared IRQs list their actions as "name1, name2".
  std::string joined;
  for (; i < rest.size(); ++i) {
    if (!joined.empty()) joined += ' ';
    joined += rest[i];
  }
  size_t pos = 0;
  while (pos < joined.size()) {
    size_t comma = joined.find(", ", pos);
    if (comma == std::string::npos) comma = joined.size();
    if (comma > pos) row.actions.push_back(joined.substr(pos, comma - pos));
    pos = comma + 2;
  }
}

IrqRow parse_irq_line(std::string_view line, size_t ncpus, const std::string& origin, int line_no) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) malformed(origin, line_no, line, "no ':' after the name");
  IrqRow row;
  const auto name_tokens = split_ws(line.substr(0, colon));
  if (name_tokens.size() != 1) malformed(origin, line_no, line, "bad IRQ name");
  row.name = std::string(name_tokens[0]);
  uint64_t number = 0;
  row.numbered = parse_u64(row.name, number);
  const auto tokens = split_ws(line.substr(colon + 1));
  size_t i = 0;
  std::vector<uint64_t> counts;
  for (; i < tokens.size() && counts.size() < ncpus; ++i) {
    uint64_t v = 0;
    if (!parse_u64(tokens[i], v)) break;
    counts.push_back(v);
  }
  if (counts.empty()) malformed(origin, line_no, line, "no counts");
  for (const auto c : counts)
    row.total += c;
  const std::vector<std::string_view> rest(tokens.begin() + static_cast<long>(i), tokens.end());
  if (counts.size() == 1 && ncpus > 1 && rest.empty() && !row.numbered) {
    return row;  // ERR, MIS: one system-wide count
  }
  if (counts.size() < ncpus) {
    malformed(origin, line_no, line,
              "expected " + std::to_string(ncpus) + " per-CPU counts, found " +
                  std::to_string(counts.size()));
  }
  row.per_cpu = std::move(counts);
  if (row.numbered) {
    fill_device_columns(row, rest);
  } else {
    for (const auto t : rest) {
      if (!row.description.empty()) row.description += ' ';
      row.description += t;
    }
  }
  return row;
}

double rate_of(uint64_t before, uint64_t after, double elapsed_s) {
  return after >= before ? static_cast<double>(after - before) / elapsed_s : 0.0;
}

// Column positions of the CPUs both snapshots have, ascending by id.
struct CommonCpus {
  std::vector<int> ids;
  std::vector<size_t> before_col;
  std::vector<size_t> after_col;
};

CommonCpus common_cpus(const std::vector<int>& before, const std::vector<int>& after) {
  std::vector<std::pair<int, std::pair<size_t, size_t>>> both;
  for (size_t a = 0; a < after.size(); ++a) {
    const auto it = std::find(before.begin(), before.end(), after[a]);
    if (it != before.end()) {
      both.push_back({after[a], {static_cast<size_t>(it - before.begin()), a}});
    }
  }
  std::sort(both.begin(), both.end());
  CommonCpus c;
  for (const auto& [id, cols] : both) {
    c.ids.push_back(id);
    c.before_col.push_back(cols.first);
    c.after_col.push_back(cols.second);
  }
  return c;
}

std::vector<double> column_rates(const std::vector<uint64_t>& before,
                                 const std::vector<uint64_t>& after, const CommonCpus& cpus,
                                 double elapsed_s) {
  std::vector<double> out(cpus.ids.size(), 0.0);
  for (size_t k = 0; k < cpus.ids.size(); ++k) {
    const size_t b = cpus.before_col[k];
    const size_t a = cpus.after_col[k];
    if (b < before.size() && a < after.size()) out[k] = rate_of(before[b], after[a], elapsed_s);
  }
  return out;
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

bool contains_bounded(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return false;
  for (size_t pos = haystack.find(needle); pos != std::string_view::npos;
       pos = haystack.find(needle, pos + 1)) {
    const size_t end = pos + needle.size();
    const bool left_ok = pos == 0 || !is_word_char(haystack[pos - 1]);
    const bool right_ok = end == haystack.size() || !is_word_char(haystack[end]);
    if (left_ok && right_ok) return true;
  }
  return false;
}

}  // namespace

void parse_interrupts(const std::string& text, const std::string& origin, InterruptSnapshot& out) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(origin + ": empty file");
  out.cpu_ids = parse_cpu_header(line, origin);
  out.irqs.clear();
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    out.irqs.push_back(parse_irq_line(line, out.cpu_ids.size(), origin, line_no));
  }
}

void parse_softirqs(const std::string& text, const std::string& origin, InterruptSnapshot& out) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(origin + ": empty file");
  out.softirq_cpu_ids = parse_cpu_header(line, origin);
  out.softirqs.clear();
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) malformed(origin, line_no, line, "no ':' after the kind");
    const auto name = split_ws(std::string_view(line).substr(0, colon));
    if (name.size() != 1) malformed(origin, line_no, line, "bad softirq kind");
    SoftirqRow row;
    row.kind = std::string(name[0]);
    for (const auto t : split_ws(std::string_view(line).substr(colon + 1))) {
      uint64_t v = 0;
      if (!parse_u64(t, v))
        // (Built with append: GCC 12 at -O3 misreads "'" + std::string(t) as an overlapping copy.)
        malformed(origin, line_no, line, std::string("'").append(t).append("' is not a count"));
      row.per_cpu.push_back(v);
    }
    if (row.per_cpu.size() != out.softirq_cpu_ids.size()) {
      malformed(origin, line_no, line,
                "expected " + std::to_string(out.softirq_cpu_ids.size()) + " counts, found " +
                    std::to_string(row.per_cpu.size()));
    }
    out.softirqs.push_back(std::move(row));
  }
}

InterruptSnapshot read_interrupt_snapshot(const std::string& root) {
  InterruptSnapshot snap;
  const std::filesystem::path base(root);
  const std::string irq_path = (base / "proc/interrupts").string();
  const std::string softirq_path = (base / "proc/softirqs").string();
  parse_interrupts(read_file(irq_path), irq_path, snap);
  parse_softirqs(read_file(softirq_path), softirq_path, snap);
  return snap;
}

double InterruptRates::softirq_rate(std::string_view kind, int cpu) const {
  const auto col = std::find(softirq_cpu_ids.begin(), softirq_cpu_ids.end(), cpu);
  if (col == softirq_cpu_ids.end()) return 0.0;
  for (const auto& s : softirqs) {
    if (s.kind == kind) return s.per_cpu[static_cast<size_t>(col - softirq_cpu_ids.begin())];
  }
  return 0.0;
}

InterruptRates rates(const InterruptSnapshot& before, const InterruptSnapshot& after,
                     double elapsed_s) {
  if (!(elapsed_s > 0.0)) {
    throw std::invalid_argument("interrupt rates need a positive window, got " +
                                std::to_string(elapsed_s) + " s");
  }
  InterruptRates out;
  out.elapsed_s = elapsed_s;
  const CommonCpus cpus = common_cpus(before.cpu_ids, after.cpu_ids);
  out.cpu_ids = cpus.ids;
  out.per_cpu_device.assign(cpus.ids.size(), 0.0);
  out.per_cpu_all.assign(cpus.ids.size(), 0.0);
  for (const auto& a : after.irqs) {
    const auto b = std::find_if(before.irqs.begin(), before.irqs.end(),
                                [&](const IrqRow& r) { return r.name == a.name; });
    if (b == before.irqs.end()) continue;
    IrqRate r;
    r.name = a.name;
    r.numbered = a.numbered;
    r.chip = a.chip;
    r.actions = a.actions;
    r.description = a.description;
    r.per_cpu = column_rates(b->per_cpu, a.per_cpu, cpus, elapsed_s);
    if (a.per_cpu.empty()) {
      r.total = rate_of(b->total, a.total, elapsed_s);
    } else {
      for (size_t k = 0; k < r.per_cpu.size(); ++k) {
        r.total += r.per_cpu[k];
        out.per_cpu_all[k] += r.per_cpu[k];
        if (r.numbered) out.per_cpu_device[k] += r.per_cpu[k];
      }
    }
    out.irqs.push_back(std::move(r));
  }
  const CommonCpus soft_cpus = common_cpus(before.softirq_cpu_ids, after.softirq_cpu_ids);
  out.softirq_cpu_ids = soft_cpus.ids;
  for (const auto& a : after.softirqs) {
    const auto b = std::find_if(before.softirqs.begin(), before.softirqs.end(),
                                [&](const SoftirqRow& r) { return r.kind == a.kind; });
    if (b == before.softirqs.end()) continue;
    SoftirqRate s;
    s.kind = a.kind;
    s.per_cpu = column_rates(b->per_cpu, a.per_cpu, soft_cpus, elapsed_s);
    for (const double v : s.per_cpu)
      s.total += v;
    out.softirqs.push_back(std::move(s));
  }
  return out;
}

bool irq_matches_device(const std::vector<std::string>& actions, std::string_view chip,
                        std::string_view device) {
  if (contains_bounded(chip, device)) return true;
  return std::any_of(actions.begin(), actions.end(),
                     [&](const std::string& a) { return contains_bounded(a, device); });
}

std::vector<IrqRow> irqs_of_device(const std::vector<IrqRow>& all, std::string_view device) {
  std::vector<IrqRow> out;
  for (const auto& r : all) {
    if (r.numbered && irq_matches_device(r.actions, r.chip, device)) out.push_back(r);
  }
  return out;
}

std::vector<IrqRate> irqs_of_device(const std::vector<IrqRate>& all, std::string_view device) {
  std::vector<IrqRate> out;
  for (const auto& r : all) {
    if (r.numbered && irq_matches_device(r.actions, r.chip, device)) out.push_back(r);
  }
  return out;
}

void add_adapter_rates(InterruptRates& r,
                       const std::vector<std::pair<std::string, std::vector<int>>>& adapters) {
  for (const auto& [name, irqs] : adapters) {
    if (irqs.empty()) continue;
    AdapterIrqRate a;
    a.adapter = name;
    a.irqs = irqs;
    a.per_cpu.assign(r.cpu_ids.size(), 0.0);
    for (int n : irqs) {
      std::string number = std::to_string(n);
      for (const auto& row : r.irqs) {
        if (!row.numbered || row.name != number) continue;
        a.total += row.total;
        for (size_t i = 0; i < a.per_cpu.size() && i < row.per_cpu.size(); ++i)
          a.per_cpu[i] += row.per_cpu[i];
      }
    }
    r.adapters.push_back(std::move(a));
  }
}

}  // namespace mtperf
