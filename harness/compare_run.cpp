#include "harness/compare_run.hpp"

#include <cstdio>
#include <memory>

#include "control/local_server.hpp"
#include "harness/run.hpp"
#include "platform/interrupt.hpp"
#include "workloads/kind.hpp"

namespace mtperf {
namespace {

CompareSample sample_of(const RunRequest& o, const Report& r) {
  CompareSample s;
  s.errors = r.summary.errors;
  if (s.errors.empty() && !r.summary.interrupted) s.value = headline(o.spec, r.summary);
  if (r.summary.local_cpu && r.summary.local_cpu->service_demand > 0)
    s.local_demand = r.summary.local_cpu->service_demand;
  // One process (the in-process server) is one host: its remote figure would repeat the local.
  if (!r.summary.one_process && r.summary.remote_cpu && r.summary.remote_cpu->service_demand > 0)
    s.remote_demand = r.summary.remote_cpu->service_demand;
  return s;
}

CompareRow row_of(const RunRequest& o, size_t configs) {
  CompareRow row;
  const Workload w = o.spec.workload;
  row.workload = std::string(to_string(w));
  const bool rr = kind_of(w).headline == Headline::transactions;
  row.figure = rr ? CompareFigure::transaction_rate : CompareFigure::throughput;
  row.demand_unit = rr ? "us/transaction" : "us/KB";
  row.cells.resize(configs);
  return row;
}

}  // namespace

void run_compare(Compare& c, const std::vector<std::vector<RunRequest>>& requests) {
  c.rows.clear();
  for (const auto& per_config : requests)
    c.rows.push_back(row_of(per_config.at(0), c.configs.size()));
  std::unique_ptr<control::LocalServer> local;
  for (const CompareStep& step : compare_plan(c.iterations, c.rows.size(), c.configs.size())) {
    if (interrupts() > 0) return;
    CompareRow& row = c.rows[step.row];
    std::fprintf(stderr, "  iteration %d of %d: %s on %s...\n", step.iteration + 1, c.iterations,
                 row.workload.c_str(), c.configs[step.config].name.c_str());
    const RunRequest& ro = requests[step.row].at(step.config);
    CompareSample s;
    try {
      s = sample_of(ro, run_where_told(ro, local));
    } catch (const std::exception& e) {
      s.errors.push_back(e.what());
    }
    if (interrupts() > 0) return;  // a cut-short run is no sample
    row.cells[step.config].samples.push_back(std::move(s));
  }
}

}  // namespace mtperf
