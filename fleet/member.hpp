#pragma once
// One rank of a fleet: serves tests to the ranks that run against it, joins the coordinator,
// runs the pairs it is given at the step's start time and sends their results back
// (fleet/protocol.hpp), until FINISH. Rank 0 runs this too, beside its coordinator.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleet/launcher.hpp"
#include "fleet/model.hpp"

namespace mtperf::fleet {

struct MemberOptions {
  Launch launch;
  uint16_t coordinator_port = 0;  // when the coordinator's address has none
  std::string key;
  // This rank's server listens here and the others reach it here; "" = any address, and the
  // coordinator names it by the address its connection came from.
  std::string bind;
  nlohmann::json test;              // the test of every pair (compared with rank 0's at JOIN)
  std::vector<std::string> usable;  // transports usable here (the registry's probes)
  uint32_t max_flows = 0;           // what this rank's server lets one test open (0: sized)
  uint64_t max_memory = 0;          // its memory budget per test (0: the default)
  int join_timeout_ms = 60000;      // to reach the coordinator and hear the roster
  // --groups lldp: declare at JOIN, as its group, the LLDP neighbour of its adapter (lldpcli).
  bool lldp = false;
  // Runs one pair: the client side of the test over transport index t against `server`.
  std::function<PairResult(uint32_t t, const std::string& server)> run_pair;
  const std::atomic<bool>* stop = nullptr;  // a signal's flag
  // The clock this rank's CLOCK answers read; empty: CLOCK_REALTIME (tests give one that steps,
  // as a clock stepped by NTP between two exchanges does).
  std::function<int64_t()> clock;
};

// Runs the rank to FINISH. Throws std::runtime_error naming what failed (no coordinator within
// the join timeout, refused, lost, a deadline missed).
void run_member(const MemberOptions& o);

// --rendezvous: rank 0 writes "mtperf-fleet 1 JOB HOST:PORT" into path (atomically: a
// temporary file renamed); the others wait for a record of their job until deadline_ms.
void write_rendezvous(const std::string& path, const std::string& job,
                      const std::string& host_port);
std::string read_rendezvous(const std::string& path, const std::string& job, int timeout_ms,
                            const std::atomic<bool>* stop);

}  // namespace mtperf::fleet
