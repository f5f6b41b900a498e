#pragma once
// Pass/fail thresholds on a run's figures (`mtperf run --check`): a verdict for CI pipelines.
//
//   --check 'throughput>=9G,loss<=0,errors==0,verify==0,latency_p99<=200'
//
// Each check is METRIC OP VALUE, OP one of < <= > >= == !=, VALUE a number with an optional
// decimal suffix K M G T (10^3 ...): platform/check_grammar.hpp, the grammar fleet checks share.
// The metrics, each from the report's summary (the mean over iterations; latency over all of them):
//   throughput, throughput_c2s, throughput_s2c   bits/s
//   transaction_rate                             transactions/s
//   latency_mean, latency_p50, latency_p90, latency_p99, latency_p99_9, latency_max   us
//   loss          UDP stream loss, % of datagrams sent
//   retransmits   TCP retransmits, all flows (the senders' TCP_INFO)
//   errors        errors reported by either side
//   verify        receives holding a wrong byte (--verify), both ends
//   jain          Jain's fairness index over the flows
//   local_cpu, remote_cpu   % of the host's CPUs
//   longest_stall s without progress on the client (a link down, a hung peer)
//   flows_not_connected   flows whose connect failed (the run went on without them)
// A check whose figure the run did not produce (verify without --verify, latency of a stream)
// fails, and says why: a threshold that cannot be checked is not a pass.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/check_grammar.hpp"
#include "report/summary.hpp"

namespace mtperf {

struct Check {
  using Op = CheckOp;
  std::string metric;
  Op op = Op::le;
  double value = 0;
  std::string text;  // as the user wrote it
};

struct CheckResult {
  Check check;
  std::optional<double> measured;  // absent: the run did not produce this figure
  bool passed = false;
  std::string detail;  // "measured 11.03G" or why it could not be checked
};

// Parses a comma-separated list; throws std::invalid_argument naming the check that is wrong.
std::vector<Check> parse_checks(std::string_view list);
std::vector<CheckResult> evaluate_checks(const std::vector<Check>& checks, const Report& r);
bool all_passed(const std::vector<CheckResult>& results);

// With --interval, the checks an interval's own figures can judge, on each interval as it ends:
//   throughput, throughput_c2s, throughput_s2c   the client's bytes sent + received, sent,
//                                                received, x 8 / the interval's length, bits/s
//   transaction_rate                             the client's transactions / the interval, /s
//   errors                                       errors the client's flows counted in it
// Every other metric is judged at the end only. The run's verdict stays evaluate_checks's.
bool judged_per_interval(const Check& c);
// The results of the checks judged_per_interval() picks, on one interval (the rest left out).
std::vector<CheckResult> evaluate_interval_checks(const std::vector<Check>& checks,
                                                  const IntervalSample& s);
// " throughput>=9G ok  errors==0 FAIL (measured 3)": appended to the interim line.
std::string interval_checks_text(const std::vector<CheckResult>& results);

// The verdict as text lines (for the text report) and as JSON (for the JSON document).
std::string checks_text(const std::vector<CheckResult>& results);
nlohmann::json checks_json(const std::vector<CheckResult>& results);
// JUnit XML: one testsuite for the run, one testcase per check, a <failure> for each that failed.
std::string checks_junit(const Report& r, const std::vector<CheckResult>& results);

}  // namespace mtperf
