#pragma once
// The runs of `mtperf compare`: every configuration over every workload, iterated and
// interleaved (report/compare.hpp's compare_plan), each run's figure and CPU cost kept as a
// sample of its cell.
#include <vector>

#include "harness/request.hpp"
#include "report/compare.hpp"

namespace mtperf {

// Runs requests[row][config] in compare_plan's order into c.rows (whose workloads, figures and
// units it sets from the requests) and c.rows[row].cells[config].samples. A run that fails
// leaves a sample with its error and no value; SIGINT/SIGTERM stops between runs, leaving the
// samples measured so far (a run cut short is no sample).
void run_compare(Compare& c, const std::vector<std::vector<RunRequest>>& requests);

}  // namespace mtperf
