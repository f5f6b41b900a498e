#pragma once
// The result model: one test's figures, derived once from both sides' raw results, rendered by
// text.cpp, json.cpp and csv.cpp. Units are in the names: _bps bits/s (10^6 = Mbit/s), _us
// microseconds, _percent of the CPUs concerned.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/client.hpp"
#include "platform/placement.hpp"
#include "report/netdev_figures.hpp"
#include "report/peer.hpp"
#include "stats/confidence.hpp"
#include "stats/histogram.hpp"
#include "workloads/spec.hpp"

namespace mtperf {

// One side's counters for a flow over the whole test, warm-up included. A TCP stream's receiver
// reads to the end, so the sender's bytes_sent equals the receiver's bytes_received exactly.
struct FlowTotals {
  uint64_t bytes_sent = 0, bytes_received = 0, transactions = 0;
};

struct FlowFigures {
  uint32_t id = 0;
  std::string direction;  // "c2s", "s2c", "rr", "crr"
  uint64_t bytes = 0;     // received in the window by the receiving side
  // `bytes` by direction: what the server took in (requests, a c2s stream) and what the client
  // took in (responses, an s2c stream); rr and crr flows carry both.
  uint64_t bytes_c2s = 0, bytes_s2c = 0;
  double throughput_bps = 0;
  uint64_t transactions = 0;
  double transaction_rate = 0;
  std::optional<double> latency_mean_us;  // rr, crr with a round trip measured; absent otherwise
  // The flow's own percentiles: only with --per-flow-latency (TestSpec::per_flow_latency).
  std::optional<double> latency_p50_us, latency_p99_us;
  int client_cpu = -1;
  std::optional<uint64_t> udp_sent, udp_received, udp_lost, udp_reordered, udp_duplicates;
  std::optional<double> udp_jitter_us;
  std::optional<uint32_t> retransmits, rtt_us, cwnd;  // the sending side's TCP_INFO
  std::string congestion;
  // --verify: what both ends received, checked (the server's part absent without its result).
  std::optional<VerifyStats> verify;
  std::string error;
  std::string adapter;                        // placed tests: the flow's adapter
  std::string local_address, remote_address;  // placed tests: where it left from and went to
  FlowTotals client_total;
  std::optional<FlowTotals> server_total;  // absent without the server's result
};

// The flows of one adapter, or of one PCI controller, together (placed tests).
struct GroupFigures {
  std::string name;
  std::vector<uint32_t> flows;  // flow ids
  double throughput_bps = 0;
  double transaction_rate = 0;
  double jain_fairness = 1, min_max_ratio = 1;  // over the group's flows
  std::optional<double> irq_per_s;              // adapters: the rate of its IRQs on the client host
};

struct LatencyFigures {
  uint64_t count = 0;
  double mean_us = 0, stddev_us = 0, min_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0,
         max_us = 0;
};

// A histogram's figures in microseconds (its values are nanoseconds).
LatencyFigures latency_of(const Histogram& h);

struct CpuFigures {
  CpuUtilization host;
  double service_demand = 0;  // µs of CPU per KB (streams) or per transaction (rr, crr)
  std::string service_demand_unit;
};

// Below this a measured window is too short for CPU figures: /proc/stat counts in ticks of
// 10 ms, and a thread's CPU time is brought up to date only at ticks and context switches, so a
// window of a few ticks can show more CPU than it held (a run that failed at once measured a
// 16 us window and printed 76875% of one CPU). Such figures are left out, never printed.
inline constexpr double kMinCpuWindowS = 0.1;

struct Summary {
  double window_s = 0;
  bool interrupted = false;  // SIGINT/SIGTERM ended the window early: a partial result
  // --stop-on-error ended the window at a failure (summary: the first iteration that stopped).
  std::optional<EarlyStop> stopped_early;
  // The longest time with no progress on the client (no byte, no transaction), at the clock
  // thread's 50 ms sampling, and where it began, s since the window's start (summary: the
  // longest of any iteration). A link down shows here; 0 when progress never paused.
  double longest_stall_s = 0, longest_stall_start_s = 0;
  // Setting the flows up: the server's listeners and every connection, s (control::TestOutcome).
  double setup_s = 0;
  // The flows asked for, and those of them that did not connect, ascending by id (mtperf run
  // without --need-all: the test ran with the others). Summary: the iteration with the most.
  uint32_t flows_asked = 0;
  std::vector<control::FlowFailure> flows_not_connected;
  double throughput_bps = 0;  // all directions together
  // Each direction's own bytes: an rr flow's requests count client->server, its responses
  // server->client.
  double throughput_c2s_bps = 0, throughput_s2c_bps = 0;
  uint64_t transactions = 0;
  double transaction_rate = 0;
  std::optional<LatencyFigures> latency;
  Histogram latency_histogram;
  // crr: the connects' times (absent without a sample) and the failed connects tried again, by
  // cause (summary: every iteration's).
  std::optional<LatencyFigures> connect_latency;
  std::optional<Histogram> connect_histogram;
  ConnectFailures connect_failures;
  double jain_fairness = 1;
  double min_max_ratio = 1;
  std::optional<CpuFigures> local_cpu, remote_cpu;
  std::optional<InterruptRates> local_interrupts, remote_interrupts;
  // Each host's RDMA port counter deltas over the window: the devices' witness that the
  // application's bytes crossed them. Empty without RDMA devices.
  std::vector<RdmaPortCounters> local_rdma_ports, remote_rdma_ports;
  // Each host's network devices that carried the flows, their counter deltas over the window
  // beside the payload the side sent over them, and the host's TCP counter deltas
  // (platform/netdev_stats.hpp): the devices' witness. Empty where nothing could be read.
  std::vector<NetdevFigures> local_netdev, remote_netdev;
  std::map<std::string, uint64_t> local_tcp, remote_tcp;
  // mtperf's own CPU, % of one CPU, at most 100 x the CPUs the process may use (its affinity
  // mask, and the host's CPUs); absent when the window was too short to measure.
  std::optional<double> local_process_cpu_percent, remote_process_cpu_percent;
  // Client and server were one mtperf process (no -H: an in-process server). getrusage counts
  // the process once, both sides' threads together: local_process_cpu_percent holds it and
  // remote_process_cpu_percent stays absent, so the figure is never counted twice.
  bool one_process = false;
  std::optional<double> udp_loss_percent;
  std::optional<VerifyStats> verify;  // --verify: every flow's, both ends
  std::vector<FlowFigures> flows;
  std::vector<GroupFigures> adapters, controllers;  // placed tests only
  std::vector<IntervalSample> intervals;
  std::map<std::string, std::string> transport_settings;  // the client's transport, as used
  std::vector<std::string> errors;
};

// The figures of one iteration. With a placement, flow i belongs to placement->flows[i % its
// size] (bidir's second direction reuses the first's placement), and the per-adapter and
// per-controller subtotals are filled.
Summary summarize(const TestSpec& spec, const control::TestOutcome& outcome,
                  const Placement* placement = nullptr);

// The figure each iteration contributes to the confidence rule: throughput for streams,
// transaction rate for rr and crr.
double headline(const TestSpec& spec, const Summary& s);

struct Report {
  TestSpec spec;
  nlohmann::json environment;
  std::vector<Summary> iterations;
  Summary summary;  // means over the iterations; latency over all of them
  IterationRule rule;
  std::optional<Placement> placement;  // tests over several adapters
  std::optional<ConfidenceInterval> confidence;
  bool confidence_met = false;
  // --peer: the other tool's own counts beside this side's (report/peer.hpp).
  std::optional<PeerFigures> peer;
  // When the first iteration's data began on this side (CLOCK_REALTIME, ns; SideResult::
  // started_realtime_ns): the fleet's start times. Not written in the document.
  std::optional<int64_t> data_started_ns;
};

// Folds the iterations into report.summary and the confidence figures.
void finish_report(Report& r);

}  // namespace mtperf
