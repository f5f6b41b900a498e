#pragma once
// `mtperf suite`: every workload on every transport usable here, side by side. The model of its
// result and its JSON document (docs/json-schema.md); the text table is printed by the command
// as the cases run.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/summary.hpp"

namespace mtperf {

// The suite's JSON document has its own version.
inline constexpr int kSuiteJsonSchema = 1;

enum class SuiteStatus {
  ok,           // the case ran and neither side reported an error
  failed,       // it ran with errors (in its report), or could not run (message)
  skipped,      // the transport cannot run this case (message says why: e.g. no UDP)
  interrupted,  // SIGINT/SIGTERM came before it ran
};

std::string_view to_string(SuiteStatus s);

// One case on one transport.
struct SuiteResult {
  std::string transport;
  SuiteStatus status = SuiteStatus::ok;
  std::optional<Report> report;  // the run, when it produced one
  std::string message;           // why it failed without a report, or was skipped
};

struct SuiteCase {
  std::string label;                 // "TCP stream 64K"
  std::vector<std::string> args;     // its `mtperf run` options
  std::vector<SuiteResult> results;  // one per usable transport, in the order of Suite::transports
};

struct UnusableTransport {
  std::string transport;
  std::string why;  // the probe's reason
};

struct Suite {
  double length_s = 0;                  // each case's measured window, s
  std::vector<std::string> transports;  // usable here: the columns
  std::vector<UnusableTransport> unusable;
  std::vector<SuiteCase> cases;
};

// {"schema": 1, "suite": {...}}; each result's report is the run document (report_json).
nlohmann::json suite_json(const Suite& s);

}  // namespace mtperf
