#pragma once
// The runs of `mtperf sweep`: one run per row and column, column by column, on the hosts the
// request names — the line its transport brings (the one --testbed names, or one built for the
// sweep; transports/api/line.hpp), a veth testbed (named and up, or built for the sweep and removed
// after), or this host against -H or an in-process server. With the MTU axis each column first sets
// the testbed's links (platform/link_mtu.hpp), put back when the sweep ends, also on failure.
#include <optional>
#include <string>
#include <vector>

#include "harness/request.hpp"
#include "report/sweep.hpp"

namespace mtperf {

struct SweepRequest {
  // The table to fill: axis, axis_values, and the rows' names, labels and figures; no cells.
  Sweep layout;
  std::vector<std::vector<RunRequest>> runs;  // [column][row], the columns in axis_values' order
  std::optional<std::string> testbed;         // --testbed NAME
};

// Runs every cell; a run that fails leaves a failed cell with its error and the sweep goes on.
// SIGINT/SIGTERM stops between cells. Throws when the hosts cannot be set up.
Sweep run_sweep(const SweepRequest& request);

}  // namespace mtperf
