#pragma once
// The fleet document: who took part (the roster), what was planned, what each pair measured. The
// coordinator fills it; fleet/render.hpp turns it into text, JSON, CSV and mpiGraph's tables.
// Units are in the names: _bps bits/s, _us microseconds, _ns nanoseconds.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleet/pattern.hpp"

namespace mtperf::fleet {

// The largest link rate a document or a JOIN may carry, bits/s (a petabit: no link is near).
inline constexpr double kMaxLineBps = 1e15;

// One rank as it joined.
struct Member {
  uint32_t rank = 0;
  std::string host;     // its host name
  std::string address;  // where the others reach its server (numeric)
  uint16_t port = 0;    // its server's control port
  uint32_t cpus = 0;
  std::vector<std::string> transports;  // usable there, by its own probe
  std::string launcher;
  bool joined = false;
  std::string lost;  // why it left the fleet early ("" while it is in it)
  // Its adapter's line rate (platform/link_line.hpp), bits/s: what a check's `line` is made of.
  std::string adapter;                  // the interface its address is on; "" when unknown
  std::optional<double> speed_bps;      // that interface's sysfs speed; empty when unknown
  std::optional<double> rdma_rate_bps;  // its RDMA port's active width x speed; empty when none
  std::string group;  // its leaf switch or rack (--groups, fleet/groups.hpp); "" when none
};

// What one ordered pair measured on one transport: the client's report, reduced.
struct PairResult {
  uint32_t step = 0, round = 0, transport = 0;
  Pair pair;
  bool ok = false;
  std::string error;  // why not ok
  double throughput_bps = 0, throughput_c2s_bps = 0, throughput_s2c_bps = 0;
  double transaction_rate = 0;
  std::optional<double> p50_us, p99_us;
  // Both ends' byte counts over the whole test: what the client sent and the server received
  // (c2s), and back (s2c). TCP: each pair equal.
  uint64_t c2s_sent = 0, c2s_received = 0, s2c_sent = 0, s2c_received = 0;
  bool server_counted = false;  // the server's counts came back
  // When its client's data began, ns after the step's planned start, on the coordinator's clock
  // as measured after the step (not the offsets the start was planned with): offset errors and
  // drift show here as well as wake-up jitter.
  std::optional<int64_t> start_offset_ns;
  // On the rank that ran it: when its data began (CLOCK_REALTIME of that host, ns). Sent in
  // RESULTS beside the result, not part of the document.
  std::optional<int64_t> data_started_ns;
  int tries = 1;  // 1 + the times --retest ran it again
  // The pair's line (fleet/line.hpp): the smaller of its two ends' link rates, bits/s, and where
  // it came from: "sysfs", "rdma port", "--line-rate" or "none" (empty line_bps).
  std::optional<double> line_bps;
  std::string line_source = "none";
};

struct StepTiming {
  uint32_t step = 0, round = 0, transport = 0;
  size_t pairs = 0;
  // Spread of the clients' actual start times (max - min), ns; absent with fewer than 2 starts.
  std::optional<int64_t> start_spread_ns;
  double seconds = 0;  // from the planned start to the last result
  // The clocks are measured again after every step, and the starts put on the coordinator's
  // clock with those offsets: the largest change of a rank's offset from the one the step was
  // planned with, ns. Absent when the step was interrupted.
  std::optional<int64_t> clock_moved_ns;
};

struct FleetDoc {
  std::string launcher, launcher_why;
  std::vector<Member> roster;
  Plan plan;
  Concurrency concurrency = Concurrency::round;
  std::vector<std::string> transports;
  nlohmann::json test;   // the test every pair runs (workloads/spec's JSON)
  std::string workload;  // "stream", "rr", ...
  std::string headline;  // "throughput" or "transaction_rate": the figure checks default to
  std::vector<PairResult> results;
  std::vector<StepTiming> steps;
  std::vector<std::string> errors;      // what ended the run early or left cells empty, in order
  bool complete = false;                // every step ran
  double clock_offset_max_ns = 0;       // the largest |offset| estimated between ranks' clocks
  std::optional<double> line_rate_bps;  // --line-rate: every pair's line, whatever ends report
  std::string groups_from;  // where the roster's groups came from: "file NAME", "slurm"; "" none
};

nlohmann::json to_json(const FleetDoc& d);
FleetDoc fleet_from_json(const nlohmann::json& j);  // throws std::invalid_argument

nlohmann::json to_json(const PairResult& r);
PairResult pair_result_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json to_json(const Member& m);
Member member_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace mtperf::fleet
