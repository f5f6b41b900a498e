#include "fleet/render.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "fleet/group_matrix.hpp"
#include "fleet/groups.hpp"
#include "fleet/suspect.hpp"
#include "workloads/kind.hpp"

namespace mtperf::fleet {
using nlohmann::json;

namespace {

bool is_rr(const std::string& workload) {
  const WorkloadKind* k = find_kind(workload);
  return k != nullptr && k->headline == Headline::transactions;
}

// How a figure is shown in a matrix: its unit and scale.
struct Unit {
  const char* name;
  double scale;
};
Unit unit_of(const std::string& figure) {
  if (figure.rfind("throughput", 0) == 0) return {"Gbit/s", 1e-9};
  if (figure == "transaction_rate") return {"trans/s", 1};
  return {"us", 1};
}

// Lower is worse for throughput and rates, higher for latencies.
bool higher_is_better(const std::string& figure) {
  return figure[0] != 'p';
}

std::string cell(std::optional<double> v, double scale) {
  if (!v) return "-";
  return fmt::format("{:.4g}", *v * scale);
}

std::string host_of(const FleetDoc& d, uint32_t r) {
  return r < d.roster.size() && !d.roster[r].host.empty() ? d.roster[r].host : "?";
}

LineStats stats_of(uint32_t rank, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  LineStats s{rank, v.size(), v.front(), 0, v.back()};
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  return s;
}

json matrix_json(const Matrix& m) {
  json rows = json::array();
  for (const auto& row : m) {
    json r = json::array();
    for (const auto& c : row)
      r.push_back(c ? json(*c) : json(nullptr));
    rows.push_back(r);
  }
  return rows;
}

json stats_json(const std::vector<LineStats>& v) {
  json out = json::array();
  for (const auto& s : v)
    out.push_back({{"rank", s.rank},
                   {"cells", s.cells},
                   {"min", s.min},
                   {"median", s.median},
                   {"max", s.max}});
  return out;
}

// The k results of transport t worst by figure, failed pairs first.
std::vector<const PairResult*> slowest(const FleetDoc& d, uint32_t t, const std::string& figure,
                                       size_t k) {
  std::vector<const PairResult*> v;
  for (const auto& r : d.results)
    if (r.transport == t &&
        (!r.ok || pair_figure(r, figure == "throughput" ? "throughput" : figure)))
      v.push_back(&r);
  const bool up = higher_is_better(figure);
  std::stable_sort(v.begin(), v.end(), [&](const PairResult* a, const PairResult* b) {
    if (a->ok != b->ok) return !a->ok;
    if (!a->ok) return false;
    double x = *pair_figure(*a, figure), y = *pair_figure(*b, figure);
    return up ? x < y : x > y;
  });
  if (v.size() > k) v.resize(k);
  return v;
}

std::string rate(double bps) {
  return fmt::format("{:.4g}G", bps / 1e9);
}

// A member's link rates as reported: sysfs speed, RDMA port rate.
std::string line_of(const Member& m) {
  if (m.speed_bps && m.rdma_rate_bps && *m.speed_bps != *m.rdma_rate_bps)
    return rate(*m.speed_bps) + ", port " + rate(*m.rdma_rate_bps);
  if (m.speed_bps) return rate(*m.speed_bps);
  if (m.rdma_rate_bps) return "port " + rate(*m.rdma_rate_bps);
  return "-";
}

// The groups line under the roster: each group and its ranks ("" without groups).
std::string groups_text(const FleetDoc& d) {
  std::vector<std::string> of_rank;
  for (const Member& m : d.roster)
    of_rank.push_back(m.group);
  const GroupIndex index = index_groups(of_rank);
  if (index.names.empty()) return "";
  std::vector<std::vector<uint32_t>> ranks(index.names.size());
  for (uint32_t r = 0; r < index.of.size(); ++r)
    if (index.of[r] < ranks.size()) ranks[index.of[r]].push_back(r);
  std::string out = fmt::format("  groups ({}):", d.groups_from);
  for (size_t g = 0; g < ranks.size(); ++g)
    out += fmt::format("{} {} ranks {}", g ? ";" : "", index.names[g], fmt::join(ranks[g], ","));
  return out + "\n";
}

}  // namespace

std::vector<std::string> matrix_figures(const std::string& workload) {
  if (is_rr(workload)) return {"transaction_rate", "p50", "p99"};
  if (const WorkloadKind* k = find_kind(workload); k != nullptr && k->flows_per_flow > 1)
    return {"throughput", "throughput_c2s", "throughput_s2c"};
  return {"throughput"};
}

Matrix matrix(const FleetDoc& d, uint32_t transport, const std::string& figure) {
  const size_t n = d.roster.size();
  Matrix m(n, std::vector<std::optional<double>>(n));
  for (const auto& r : d.results) {
    if (r.transport != transport || r.pair.src >= n || r.pair.dst >= n) continue;
    m[r.pair.src][r.pair.dst] = pair_figure(r, figure);
  }
  return m;
}

std::vector<LineStats> row_stats(const Matrix& m) {
  std::vector<LineStats> out;
  for (uint32_t i = 0; i < m.size(); ++i) {
    std::vector<double> v;
    for (const auto& c : m[i])
      if (c) v.push_back(*c);
    if (!v.empty()) out.push_back(stats_of(i, std::move(v)));
  }
  return out;
}

std::vector<LineStats> column_stats(const Matrix& m) {
  std::vector<LineStats> out;
  for (uint32_t j = 0; j < m.size(); ++j) {
    std::vector<double> v;
    for (const auto& row : m)
      if (row[j]) v.push_back(*row[j]);
    if (!v.empty()) out.push_back(stats_of(j, std::move(v)));
  }
  return out;
}

ByteAgreement byte_agreement(const FleetDoc& d) {
  ByteAgreement a;
  for (const auto& r : d.results) {
    if (!r.ok || !r.server_counted) continue;
    ++a.compared;
    if (r.c2s_sent == r.c2s_received && r.s2c_sent == r.s2c_received) ++a.equal;
  }
  return a;
}

std::optional<double> max_start_spread_ns(const FleetDoc& d) {
  std::optional<double> m;
  for (const auto& s : d.steps)
    if (s.start_spread_ns) m = std::max(m.value_or(0), double(*s.start_spread_ns));
  return m;
}

namespace {

// A list of ranks as runs: 0-31,40,42-44.
std::string rank_runs(const std::vector<uint32_t>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
      ++j;
    out += (out.empty() ? "" : ",") +
           (j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j + 1;
  }
  return out;
}

// How many of a roster's ranks are named on one line of the summary, before "and N more".
constexpr size_t kNamedRanks = 20;

// Above kTextMatrixMaxRanks: the roster by state, every lost and never-joined rank named up to
// kNamedRanks, the groups by their ranks' runs.
std::string roster_summary(const FleetDoc& d) {
  std::vector<uint32_t> in, never;
  std::vector<std::string> lost;
  std::map<std::string, size_t> lines;
  for (const Member& m : d.roster) {
    if (!m.joined)
      never.push_back(m.rank);
    else if (!m.lost.empty())
      lost.push_back(fmt::format("{} {} ({})", m.rank, m.host, m.lost));
    else
      in.push_back(m.rank);
    if (m.joined) ++lines[line_of(m)];
  }
  auto named = [](const auto& v) {
    const size_t k = std::min(v.size(), kNamedRanks);
    std::string out = fmt::format("{}", fmt::join(v.begin(), v.begin() + std::ptrdiff_t(k), ", "));
    return v.size() > k ? out + fmt::format(" and {} more", v.size() - k) : out;
  };
  std::string out = fmt::format(
      "\n  roster: {} ranks joined and in the fleet at its end, {} lost, {} never joined\n",
      in.size(), lost.size(), never.size());
  std::vector<std::string> by_line;
  for (const auto& l : lines)
    by_line.push_back(fmt::format("{} x{}", l.first, l.second));
  if (!by_line.empty()) out += fmt::format("  lines: {}\n", fmt::join(by_line, ", "));
  if (!lost.empty()) out += "  LOST: " + named(lost) + "\n";
  if (!never.empty()) out += "  never joined: ranks " + named(never) + "\n";
  std::vector<std::string> of_rank;
  for (const Member& m : d.roster)
    of_rank.push_back(m.group);
  const GroupIndex index = index_groups(of_rank);
  if (index.names.empty()) return out;
  std::vector<std::vector<uint32_t>> ranks(index.names.size());
  for (uint32_t r = 0; r < index.of.size(); ++r)
    if (index.of[r] < ranks.size()) ranks[index.of[r]].push_back(r);
  out += fmt::format("  groups ({}, {}):", d.groups_from, ranks.size());
  for (size_t g = 0; g < ranks.size(); ++g)
    out += fmt::format("{} {} {} ranks {}", g ? ";" : "", index.names[g], ranks[g].size(),
                       rank_runs(ranks[g]));
  return out + "\n";
}

// Up to kTextMatrixMaxRanks: a line per rank.
std::string roster_table(const FleetDoc& d) {
  std::string out =
      "\n  rank  host                  address                  port  cpus  adapter        "
      "line        transports\n";
  for (const auto& m : d.roster) {
    out += fmt::format("  {:>4}  {:<20}  {:<22}  {:>5}  {:>4}  {:<13}  {:<10}  {}{}\n", m.rank,
                       m.joined ? m.host : "(never joined)", m.address, m.port, m.cpus,
                       m.adapter.empty() ? "-" : m.adapter, line_of(m),
                       fmt::join(m.transports, ","), m.lost.empty() ? "" : "  LOST: " + m.lost);
  }
  return out + groups_text(d);
}

// The worse of two lines' medians by the figure.
bool worse(const std::string& figure, double a, double b) {
  return higher_is_better(figure) ? a < b : a > b;
}

// The full matrix, then its worst row and column.
std::string matrix_text(const FleetDoc& d, const Matrix& m, const std::string& figure) {
  const size_t n = m.size();
  const Unit u = unit_of(figure);
  std::string out = "  from\\to";
  for (size_t j = 0; j < n; ++j)
    out += fmt::format(" {:>9}", j);
  out += "\n";
  for (size_t i = 0; i < n; ++i) {
    out += fmt::format("  {:>7}", i);
    for (size_t j = 0; j < n; ++j)
      out += fmt::format(" {:>9}", i == j ? std::string(".") : cell(m[i][j], u.scale));
    out += "\n";
  }
  const auto rows = row_stats(m), cols = column_stats(m);
  if (rows.empty()) return out;
  auto worst = [&](const std::vector<LineStats>& v) {
    return *std::min_element(v.begin(), v.end(), [&](const auto& a, const auto& b) {
      return worse(figure, a.median, b.median);
    });
  };
  const LineStats wr = worst(rows), wc = worst(cols);
  return out + fmt::format(
                   "  worst row: rank {} ({}) median {} {}; worst column: rank {} ({}) "
                   "median {} {}\n",
                   wr.rank, host_of(d, wr.rank), cell(wr.median, u.scale), u.name, wc.rank,
                   host_of(d, wc.rank), cell(wc.median, u.scale), u.name);
}

// The pairs' figures by their distribution: count, min, percentiles, max.
std::string distribution_text(const FleetDoc& d, uint32_t t, const Matrix& m,
                              const std::string& figure) {
  std::vector<double> v;
  for (const auto& row : m)
    for (const auto& c : row)
      if (c) v.push_back(*c);
  size_t failed = 0;
  for (const auto& r : d.results)
    failed += r.transport == t && !r.ok;
  std::string out = fmt::format("  pairs: {} measured, {} failed", v.size(), failed);
  if (v.empty()) return out + "\n";
  std::sort(v.begin(), v.end());
  const Unit u = unit_of(figure);
  // Nearest rank: the value of rank ceil(p * count), at least the first.
  auto at = [&](double p) {
    const size_t k = size_t(std::ceil(p * double(v.size())));
    return v[std::clamp<size_t>(k, 1, v.size()) - 1];
  };
  out += fmt::format("; min {}", cell(v.front(), u.scale));
  static constexpr std::pair<const char*, double> kPercentiles[] = {
      {"p1", 0.01}, {"p10", 0.1}, {"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}};
  for (const auto& [name, p] : kPercentiles)
    out += fmt::format(" {} {}", name, cell(at(p), u.scale));
  return out + fmt::format(" max {} {}\n", cell(v.back(), u.scale), u.name);
}

// How many hosts and pairs the summary of a big fleet's matrix names.
constexpr size_t kWorstShown = 10;

// The ranks whose pairs are worst: by the worse of their row (as client) and column (as server)
// medians.
std::string worst_hosts_text(const FleetDoc& d, const Matrix& m, const std::string& figure) {
  struct Host {
    uint32_t rank;
    std::optional<double> row, column;
    double key;
  };
  std::vector<Host> hosts(m.size());
  for (uint32_t r = 0; r < m.size(); ++r)
    hosts[r].rank = r;
  for (const LineStats& s : row_stats(m))
    hosts[s.rank].row = s.median;
  for (const LineStats& s : column_stats(m))
    hosts[s.rank].column = s.median;
  std::erase_if(hosts, [](const Host& h) { return !h.row && !h.column; });
  for (Host& h : hosts)
    h.key = !h.row                             ? *h.column
            : !h.column                        ? *h.row
            : worse(figure, *h.row, *h.column) ? *h.row
                                               : *h.column;
  const size_t k = std::min(kWorstShown, hosts.size());
  std::partial_sort(hosts.begin(), hosts.begin() + std::ptrdiff_t(k), hosts.end(),
                    [&](const Host& a, const Host& b) { return worse(figure, a.key, b.key); });
  const Unit u = unit_of(figure);
  std::string out = fmt::format(
      "  worst {} ranks by the median of their pairs, {}:\n    rank  host                  "
      "as client  as server  group\n",
      k, u.name);
  for (size_t i = 0; i < k; ++i) {
    const Host& h = hosts[i];
    out += fmt::format(
        "    {:>4}  {:<20}  {:>9}  {:>9}  {}\n", h.rank, host_of(d, h.rank), cell(h.row, u.scale),
        cell(h.column, u.scale),
        h.rank < d.roster.size() && !d.roster[h.rank].group.empty() ? d.roster[h.rank].group : "-");
  }
  return out;
}

// The measured pairs worst by the figure (the failed ones are listed apart).
std::string worst_pairs_text(const FleetDoc& d, uint32_t t, const std::string& figure) {
  std::vector<std::pair<double, const PairResult*>> v;
  for (const auto& r : d.results)
    if (r.transport == t && r.ok)
      if (const auto f = pair_figure(r, figure)) v.emplace_back(*f, &r);
  if (v.empty()) return "";
  const size_t k = std::min(kWorstShown, v.size());
  std::partial_sort(v.begin(), v.begin() + std::ptrdiff_t(k), v.end(),
                    [&](const auto& a, const auto& b) { return worse(figure, a.first, b.first); });
  const Unit u = unit_of(figure);
  std::string out = fmt::format("  worst {} measured pairs, {}:\n", k, u.name);
  for (size_t i = 0; i < k; ++i) {
    const PairResult& r = *v[i].second;
    out += fmt::format("    {:>4} -> {:<4}  {} -> {}  {}\n", r.pair.src, r.pair.dst,
                       host_of(d, r.pair.src), host_of(d, r.pair.dst), cell(v[i].first, u.scale));
  }
  return out;
}

// One transport's figure: the full matrix up to kTextMatrixMaxRanks ranks, above that its
// distribution, the worst ranks and pairs; then the group matrix.
std::string figure_text(const FleetDoc& d, uint32_t t, const std::string& figure) {
  const Matrix m = matrix(d, t, figure);
  const Unit u = unit_of(figure);
  std::string out = fmt::format("\n{}: {}, {} (row: the client rank, column: the server rank)\n",
                                d.transports[t], figure, u.name);
  if (d.roster.size() <= kTextMatrixMaxRanks)
    out += matrix_text(d, m, figure);
  else
    out += distribution_text(d, t, m, figure) + worst_hosts_text(d, m, figure) +
           worst_pairs_text(d, t, figure);
  return out + group_matrix_text(group_matrix(d, t, figure), u.scale);
}

// Transport t's slowest pairs by the headline figure, on one line.
std::string slowest_text(const FleetDoc& d, uint32_t t) {
  const std::string head = matrix_figures(d.workload).front();
  const auto worst = slowest(d, t, head, 5);
  if (worst.empty()) return "";
  std::string out = fmt::format("  slowest pairs ({}):", head);
  for (const PairResult* r : worst)
    out += fmt::format(
        " {}->{} {}", r->pair.src, r->pair.dst,
        r->ok ? cell(pair_figure(*r, head), unit_of(head).scale) : std::string("failed"));
  return out + "\n";
}

std::string spread_text(const FleetDoc& d) {
  const auto s = max_start_spread_ns(d);
  if (!s) return "";
  int64_t moved = 0;
  for (const auto& st : d.steps)
    moved = std::max(moved, st.clock_moved_ns.value_or(0));
  return fmt::format(
      "start spread: at most {:.3f} ms over {} steps, data starts on clocks measured after each "
      "step (offsets up to {:.3f} ms, corrected; moved by at most {:.3f} ms across a step)\n",
      *s / 1e6, d.steps.size(), d.clock_offset_max_ns / 1e6, moved / 1e6);
}

// The checks' count and each failing pair (above kTextMatrixMaxRanks ranks, the first
// kNamedRanks of them), then the suspects.
std::string checks_text(const FleetDoc& d, const std::vector<PairVerdict>& verdicts) {
  if (verdicts.empty()) return "";
  size_t failed = 0;
  for (const auto& v : verdicts)
    failed += !v.passed;
  std::string out =
      fmt::format("checks: {} of {} pairs passed\n", verdicts.size() - failed, verdicts.size());
  const size_t shown = d.roster.size() <= kTextMatrixMaxRanks ? failed : kNamedRanks;
  size_t listed = 0;
  for (const auto& v : verdicts) {
    if (v.passed || listed++ >= shown) continue;
    const PairResult& r = d.results[v.result];
    out += fmt::format("  FAIL {} {}->{} ({} -> {}): {}\n", d.transports[r.transport], r.pair.src,
                       r.pair.dst, host_of(d, r.pair.src), host_of(d, r.pair.dst), v.detail);
  }
  if (failed > shown)
    out += fmt::format("  and {} more failing pairs (the JSON and JUnit outputs list them all)\n",
                       failed - shown);
  return out + suspects_text(find_suspects(d, verdicts));
}

std::string failed_pairs_text(const FleetDoc& d) {
  size_t not_ok = 0;
  for (const auto& r : d.results)
    not_ok += !r.ok;
  if (!not_ok) return "";
  std::string out = fmt::format("failed pairs: {}\n", not_ok);
  size_t shown = 0;
  for (const auto& r : d.results) {
    if (r.ok || ++shown > 20) continue;
    out += fmt::format("  {} {}->{}: {}\n", d.transports[r.transport], r.pair.src, r.pair.dst,
                       r.error);
  }
  return out;
}

}  // namespace

std::string fleet_text(const FleetDoc& d, const std::vector<PairVerdict>& verdicts) {
  const bool small = d.roster.size() <= kTextMatrixMaxRanks;
  std::string out = fmt::format("fleet: {} ranks, launched by {} ({})\n", d.roster.size(),
                                d.launcher, d.launcher_why);
  out += fmt::format(
      "plan: {}, {} ordered pairs in {} rounds, {} at once; transports {}; "
      "workload {}\n",
      d.plan.pattern, d.plan.ordered_pairs(), d.plan.rounds.size(),
      d.concurrency == Concurrency::round ? "each round" : "one pair",
      fmt::join(d.transports, ", "), d.workload);
  out += small ? roster_table(d) : roster_summary(d);
  if (d.line_rate_bps)
    out += fmt::format("  line: {} for every pair (--line-rate)\n", rate(*d.line_rate_bps));
  for (uint32_t t = 0; t < d.transports.size(); ++t) {
    for (const std::string& figure : matrix_figures(d.workload))
      out += figure_text(d, t, figure);
    if (small) out += slowest_text(d, t);
  }
  const ByteAgreement a = byte_agreement(d);
  out += fmt::format("\nbytes: {} of {} measured pairs with sender and receiver counts equal\n",
                     a.equal, a.compared);
  out += spread_text(d) + checks_text(d, verdicts) + failed_pairs_text(d);
  for (const auto& e : d.errors)
    out += "error: " + e + "\n";
  if (!d.complete) out += "the fleet did not run to its end: the document is partial\n";
  return out;
}

json fleet_json(const FleetDoc& d, const std::vector<PairVerdict>& verdicts) {
  json j = to_json(d);
  json matrices = json::object();
  for (uint32_t t = 0; t < d.transports.size(); ++t) {
    json per = json::object();
    for (const std::string& figure : matrix_figures(d.workload)) {
      const Matrix m = matrix(d, t, figure);
      per[figure] = {{"unit", figure.rfind("throughput", 0) == 0 ? "bits/s"
                              : figure == "transaction_rate"     ? "1/s"
                                                                 : "us"},
                     {"cells", matrix_json(m)},
                     {"rows", stats_json(row_stats(m))},
                     {"columns", stats_json(column_stats(m))}};
      if (const GroupMatrix g = group_matrix(d, t, figure); !g.groups.empty())
        per[figure]["groups"] = to_json(g);
    }
    matrices[d.transports[t]] = per;
  }
  j["matrices"] = matrices;
  const ByteAgreement a = byte_agreement(d);
  j["fleet"]["bytes_equal"] = {{"equal", a.equal}, {"compared", a.compared}};
  auto s = max_start_spread_ns(d);
  j["fleet"]["start_spread_max_ns"] = s ? json(*s) : json(nullptr);
  if (!verdicts.empty()) {
    json v = json::array();
    for (const auto& p : verdicts)
      v.push_back({{"result", p.result}, {"passed", p.passed}, {"detail", p.detail}});
    j["checks"] = v;
    j["suspects"] = to_json(find_suspects(d, verdicts));
  }
  return j;
}

std::string fleet_csv(const FleetDoc& d) {
  std::string out =
      "transport,round,step,src,dst,src_host,dst_host,ok,throughput_bps,throughput_c2s_bps,"
      "throughput_s2c_bps,transaction_rate,p50_us,p99_us,c2s_sent,c2s_received,s2c_sent,"
      "s2c_received,start_offset_ns,tries,error\n";
  auto opt = [](const std::optional<double>& v) { return v ? fmt::format("{}", *v) : ""; };
  for (const auto& r : d.results) {
    std::string error = r.error;
    std::replace(error.begin(), error.end(), '"', '\'');
    out +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},\"{}\"\n",
                    d.transports[r.transport], r.round, r.step, r.pair.src, r.pair.dst,
                    host_of(d, r.pair.src), host_of(d, r.pair.dst), r.ok ? 1 : 0, r.throughput_bps,
                    r.throughput_c2s_bps, r.throughput_s2c_bps, r.transaction_rate, opt(r.p50_us),
                    opt(r.p99_us), r.c2s_sent, r.c2s_received, r.s2c_sent, r.s2c_received,
                    r.start_offset_ns ? std::to_string(*r.start_offset_ns) : "", r.tries, error);
  }
  return out;
}

std::string fleet_mpigraph(const FleetDoc& d) {
  // mpiGraph's output, one block per transport: its header lines, then a "Send" table (row j:
  // what j sent to column k) and a "Recv" table (row j: what j received from column k), MB/s of
  // 2^20 bytes, "host:rank" heads, every cell followed by a tab, a blank line after each table.
  // Its crunch_mpiGraph reads the tables; with several transports in one file it would mix
  // them, so give it one transport's run.
  std::string out;
  const size_t n = d.roster.size();
  auto label = [&](size_t r) { return fmt::format("{}:{}", host_of(d, uint32_t(r)), r); };
  const uint64_t msg = d.test.is_object() && d.test.contains("message_size") &&
                               d.test["message_size"].is_number_unsigned()
                           ? d.test["message_size"].get<uint64_t>()
                           : 0;
  for (uint32_t t = 0; t < d.transports.size(); ++t) {
    // sent[j][k]: bytes/s from j to k, whichever side of the pair's test j was on.
    const Matrix c2s = matrix(d, t, "throughput_c2s"), s2c = matrix(d, t, "throughput_s2c");
    Matrix sent(n, std::vector<std::optional<double>>(n));
    for (size_t j = 0; j < n; ++j)
      for (size_t k = 0; k < n; ++k) {
        const double a = c2s[j][k].value_or(0), b = s2c[k][j].value_or(0);
        if (c2s[j][k] || s2c[k][j]) sent[j][k] = std::max(a, b) / 8;
      }
    out += fmt::format("START mpiGraph (mtperf fleet, transport {})\n", d.transports[t]);
    out += fmt::format("MsgSize\t{}\nTimes\t1\nWindow\t1\nProcs\t{}\n\n", msg, n);
    for (const char* table : {"Send", "Recv"}) {
      const bool send = table[0] == 'S';
      out += fmt::format("{}\t", table);
      for (size_t k = 0; k < n; ++k)
        out += label(k) + "\t";
      out += "\n";
      for (size_t j = 0; j < n; ++j) {
        out += label(j) + (send ? " to\t" : " from\t");
        for (size_t k = 0; k < n; ++k) {
          const auto& v = send ? sent[j][k] : sent[k][j];
          out += fmt::format("{:.3f}\t", j == k || !v ? 0.0 : *v / (1024.0 * 1024.0));
        }
        out += "\n";
      }
      out += "\n";
    }
    out += "END mpiGraph\n";
  }
  return out;
}

namespace {

std::string xml_escaped(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&')
      o += "&amp;";
    else if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '"')
      o += "&quot;";
    else
      o += c;
  }
  return o;
}

// Why pair i failed ("" when it passed): its run's error, else its verdict's detail.
std::string pair_failure(const FleetDoc& d, const std::vector<PairVerdict>& verdicts, size_t i) {
  const PairResult& r = d.results[i];
  if (!r.ok) return r.error.empty() ? "failed" : r.error;
  return i < verdicts.size() && !verdicts[i].passed ? verdicts[i].detail : "";
}

std::string testcase(const std::string& classname, const std::string& name,
                     const std::string& failure) {
  std::string out = fmt::format("    <testcase classname=\"{}\" name=\"{}\"",
                                xml_escaped(classname), xml_escaped(name));
  if (failure.empty()) return out + "/>\n";
  return out +
         fmt::format(">\n      <failure message=\"{}\"/>\n    </testcase>\n", xml_escaped(failure));
}

struct HostTally {
  size_t pairs = 0, failed = 0;
  std::string first;  // its first failing pair, and why
};

// A testcase per host: failed when it was lost or any of its pairs failed. Counts the failed.
std::string host_testcases(const FleetDoc& d, const std::vector<HostTally>& hosts, size_t& failed) {
  std::string out;
  for (size_t rank = 0; rank < d.roster.size(); ++rank) {
    const Member& m = d.roster[rank];
    const HostTally& h = hosts[rank];
    std::string why = m.lost.empty() ? "" : "lost: " + m.lost;
    if (h.failed > 0)
      why += (why.empty() ? "" : "; ") +
             fmt::format("{} of {} pairs failed, first {}", h.failed, h.pairs, h.first);
    failed += !why.empty();
    out += testcase("hosts",
                    fmt::format("{} (rank {}{})", host_of(d, uint32_t(rank)), rank,
                                m.group.empty() ? "" : ", group " + m.group),
                    why);
  }
  return out;
}

}  // namespace

// One testcase per host (failed when it was lost or any of its pairs failed: how many, and the
// first), then one per failing pair: readable at thousands of ranks, where a testcase per pair
// of an all-pairs plan would be millions.
std::string fleet_junit(const FleetDoc& d, const std::vector<PairVerdict>& verdicts) {
  std::vector<HostTally> hosts(d.roster.size());
  std::string pairs;
  size_t failed_pairs = 0;
  for (size_t i = 0; i < d.results.size(); ++i) {
    const PairResult& r = d.results[i];
    const std::string why = pair_failure(d, verdicts, i);
    const std::string name = fmt::format("{} {}->{} ({} -> {})", d.workload, r.pair.src, r.pair.dst,
                                         host_of(d, r.pair.src), host_of(d, r.pair.dst));
    for (uint32_t end : {r.pair.src, r.pair.dst}) {
      if (end >= hosts.size() || (end == r.pair.dst && r.pair.dst == r.pair.src)) continue;
      HostTally& h = hosts[end];
      ++h.pairs;
      if (why.empty()) continue;
      if (h.failed++ == 0) h.first = name + " over " + d.transports[r.transport] + ": " + why;
    }
    if (why.empty()) continue;
    ++failed_pairs;
    pairs += testcase(d.transports[r.transport], name, why);
  }
  size_t failed_hosts = 0;
  const std::string host_cases = host_testcases(d, hosts, failed_hosts);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"mtperf fleet {}\" tests=\"{}\" failures=\"{}\">\n",
                     xml_escaped(d.plan.pattern), d.roster.size() + failed_pairs,
                     failed_hosts + failed_pairs);
  out += fmt::format("  <testsuite name=\"hosts\" tests=\"{}\" failures=\"{}\">\n", d.roster.size(),
                     failed_hosts);
  out += host_cases + "  </testsuite>\n";
  out += fmt::format(
      "  <testsuite name=\"failing pairs\" tests=\"{}\" failures=\"{}\" "
      "pairs=\"{}\">\n",
      failed_pairs, failed_pairs, d.results.size());
  out += pairs + "  </testsuite>\n";
  return out + "</testsuites>\n";
}

}  // namespace mtperf::fleet
