#pragma once
// Rank 0's coordinator: takes the ranks' JOINs, estimates their clocks' offsets, sends the plan,
// runs it step by step (fleet/protocol.hpp) and gathers every pair's result into the fleet
// document. Runs on a thread of rank 0; every wait has a deadline, so a rank that never joins,
// dies or hangs is named and the run goes on (or ends, with need_all), never hangs.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleet/groups.hpp"
#include "fleet/model.hpp"
#include "fleet/pattern.hpp"

namespace mtperf::fleet {

struct CoordinatorOptions {
  std::string bind;  // "" = any IPv4 address
  uint16_t port = 0;
  std::string key;  // "" = no authentication (the command allows it on loopback or --insecure)
  std::string job;  // the launcher's job id: a JOIN of another job is refused
  uint32_t size = 0;
  int join_timeout_ms = 60000;
  bool need_all = false;  // a rank missing or lost ends the run
  std::string pattern = "all-pairs";
  std::string pairs_text, pairs_name;  // --pairs FILE: its text and name (pattern unused)
  // --groups: each rank's group, resolved after the joins (from "slurm" with no text: the
  // coordinator runs `scontrol show topology` then).
  GroupsSource groups;
  Concurrency concurrency = Concurrency::round;
  std::vector<std::string> transports;
  nlohmann::json test;  // every rank's test (its JSON without the transport), checked at JOIN
  std::string workload, headline;
  int pair_timeout_ms = 60000;  // from a step's start to its last RESULTS
  int start_delay_ms = 200;     // from ROUND sent to the step's start, at least
  std::string launcher, launcher_why;
  // --retest N: the indexes into results of the pairs that fail (asked after the plan and after
  // each pass), run again up to `retests` times, in steps of pairs disjoint by host
  // (fleet/retest.hpp).
  std::function<std::vector<size_t>(const FleetDoc&)> retest;
  uint32_t retests = 1;
  // --line-rate: every pair's line (fleet/line.hpp); else each end's, as its member reported it.
  std::optional<double> line_rate_bps;
  // verbs[t]: transport t runs over RDMA verbs (its line is the RDMA port's rate).
  std::vector<bool> verbs;
  // Each pair's result as soon as its step's RESULTS are in (a retest's too, with its tries),
  // from the coordinator's thread: --results-log writes it out (fleet/results_log.hpp).
  std::function<void(const FleetDoc&, const PairResult&)> on_result;
  // false: the results go to on_result alone, none into the document (a fleet whose results
  // would not fit in memory: all-pairs at 4,096 ranks is 16.8 million; they stream to a results
  // log and a figure to a FigureMatrix, fleet/figure_matrix.hpp). --retest has none to run then.
  bool keep_results = true;
};

class Coordinator {
 public:
  explicit Coordinator(CoordinatorOptions o);  // listens; throws when it cannot
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  uint16_t port() const;
  // Runs the fleet to its end (or stop()) and returns the document, partial when it ended early.
  FleetDoc run();
  // Ends run() at its next wait (a signal's flag, another thread).
  void stop() { stop_ = true; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stop_{false};
};

}  // namespace mtperf::fleet
