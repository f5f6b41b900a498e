#pragma once
// The subcommands of mtperf. Each returns the process exit status: 0 ok, 1 the test or the
// set-up failed, 2 bad usage, 3 a --check failed (the test ran), 130 interrupted
// (SIGINT/SIGTERM: a partial result, everything the run created removed).
#include <string>
#include <vector>

namespace mtperf::cli {

inline constexpr int kExitCheckFailed = 3;
inline constexpr int kExitInterrupted = 130;

int run_command(const std::vector<std::string>& args);
int serve_command(const std::vector<std::string>& args);
int transports_command(const std::vector<std::string>& args);
int suite_command(const std::vector<std::string>& args);
int sweep_command(const std::vector<std::string>& args);
int compare_command(const std::vector<std::string>& args);
int report_command(const std::vector<std::string>& args);
int fleet_command(const std::vector<std::string>& args);
// `mtperf compare A.json [B.json]` of fleet documents: per-pair ratios (fleet/compare.hpp).
int fleet_compare_command(const std::vector<std::string>& args);

}  // namespace mtperf::cli
