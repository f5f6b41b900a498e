#pragma once
// What a worker thread is given: its flows, the phase clock, its engine settings. Built by the
// runner before the timed phase; read by the worker template (worker.hpp) on the data path.
//
// Counters: each flow's FlowCounters are written only by its worker (relaxed atomic load+store,
// which compiles to plain moves) and read by the runner's clock thread at phase and interval
// boundaries. Everything else in FlowStats is owned by the worker until it returns.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include <memory>
#include <optional>

#include "platform/clock.hpp"
#include "stats/histogram.hpp"
#include "transports/api/endpoint.hpp"
#include "transports/api/transport.hpp"
#include "workloads/spec.hpp"
#include "workloads/udp_header.hpp"
#include "workloads/verify.hpp"

namespace mtperf {

enum class Phase : uint8_t { warmup, measure, done };

// Written by the runner's clock thread and the control session, read by workers.
struct PhaseClock {
  std::atomic<Phase> phase{Phase::warmup};
  // Set just before the window's last counter reading, while the phase is still `measure` (the
  // edge readings of CPU and devices follow): from then on no latency or connect sample is
  // taken, so a sample's transaction is one the window counts (at most one a flow in flight
  // across the flag, never one the window left out by the time its reading took).
  std::atomic<bool> window_closed{false};
  std::atomic<bool> finish{false};  // responders (receivers, rr/crr servers) may stop now
  std::atomic<bool> abort{false};   // stop at once: the peer vanished or a worker failed
  int64_t start_ns = 0;
  int64_t hard_deadline_ns = 0;  // no worker runs past this, whatever its peer does
};

struct alignas(64) FlowCounters {
  std::atomic<uint64_t> bytes_sent{0};
  std::atomic<uint64_t> bytes_recv{0};
  std::atomic<uint64_t> msgs_sent{0};
  std::atomic<uint64_t> msgs_recv{0};
  std::atomic<uint64_t> transactions{0};
  std::atomic<uint64_t> errors{0};
  // --verify: receives holding a wrong byte, as VerifyStats::bad_receives, so that the clock
  // thread can see a mismatch while the test runs (--stop-on-error).
  std::atomic<uint64_t> bad_receives{0};

  static void add(std::atomic<uint64_t>& c, uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
};

struct CounterValues {
  uint64_t bytes_sent = 0, bytes_recv = 0, msgs_sent = 0, msgs_recv = 0, transactions = 0,
           errors = 0, bad_receives = 0;
  static CounterValues read(const FlowCounters& c);
  CounterValues operator-(const CounterValues& o) const;
};

// Sequence accounting of a UDP receiver (RFC 3550 jitter).
struct UdpStats {
  uint64_t received = 0;
  uint64_t highest_seq = 0;
  bool any = false;
  uint64_t reordered = 0;
  uint64_t duplicates = 0;  // best effort: a repeat of the highest sequence seen
  uint64_t lost = 0;        // rr: requests that timed out; stream: computed at the end
  double jitter_ns = 0;
  int64_t last_transit_ns = 0;
  bool fin_seen = false;

  // One stream datagram taken: its sequence (from 0) and its transit time (arrival less the
  // sender's stamp, two clocks: only its changes count). A sequence below the highest came late
  // (out of order), one equal to it again is a duplicate. RFC 3550 interarrival jitter:
  // J += (|D| - J) / 16, D the change in transit time from the datagram before.
  void count(uint64_t seq, int64_t transit_ns) {
    ++received;
    if (!any || seq > highest_seq) {
      highest_seq = seq;
    } else if (seq < highest_seq) {
      ++reordered;
    } else {
      ++duplicates;
    }
    if (any) {
      const int64_t d = transit_ns - last_transit_ns;
      jitter_ns += (double(d < 0 ? -d : d) - jitter_ns) / 16.0;
    }
    any = true;
    last_transit_ns = transit_ns;
  }
  // A stream's datagrams missing below its highest sequence (a late one fills its gap).
  uint64_t missing() const {
    return any && highest_seq + 1 > received ? highest_seq + 1 - received : 0;
  }
};

// crr: connects that failed and were tried again, by cause — a connection storm's counted events.
struct ConnectFailures {
  // ECONNREFUSED: nothing listened, or a full accept queue answered with a reset
  // (net.ipv4.tcp_abort_on_overflow).
  uint64_t refused = 0;
  // ETIMEDOUT, or EINPROGRESS/EAGAIN at the send timeout: the SYNs went unanswered (a full SYN
  // or accept queue drops them).
  uint64_t timed_out = 0;
  // EADDRNOTAVAIL: no local port free for the 4-tuple (connections in TIME_WAIT hold them).
  uint64_t no_port = 0;
  uint64_t other = 0;

  uint64_t total() const { return refused + timed_out + no_port + other; }
  void count(int err) {
    if (err == ECONNREFUSED)
      ++refused;
    else if (err == ETIMEDOUT || err == EINPROGRESS || err == EAGAIN)
      ++timed_out;
    else if (err == EADDRNOTAVAIL)
      ++no_port;
    else
      ++other;
  }
  ConnectFailures& operator+=(const ConnectFailures& o) {
    refused += o.refused;
    timed_out += o.timed_out;
    no_port += o.no_port;
    other += o.other;
    return *this;
  }
};

struct FlowStats {
  // Round trips, ns, measured window only. Every sample also goes to its worker's histogram
  // (WorkerJob::latency), which the summary merges; a flow keeps a histogram of its own (58 KiB)
  // only with TestSpec::per_flow_latency, so that ten thousand flows cost a few KiB each.
  std::optional<Histogram> latency;
  uint64_t latency_count = 0;   // samples of this flow, always counted
  uint64_t latency_sum_ns = 0;  // their sum: the flow's exact mean latency
  UdpStats udp;
  ConnectFailures connect_failures;  // crr clients, whole test
  VerifyStats verify;                // --verify: what this side received, checked
  std::string error;                 // first error seen, empty when none
  std::string congestion;
  uint32_t tcp_retransmits = 0, tcp_rtt_us = 0, tcp_cwnd = 0;
  bool tcp_info_valid = false;
};

// One flow on one side.
struct FlowSlot {
  uint32_t id = 0;
  Role role = Role::sender;
  Proto proto = Proto::tcp;
  // The flow's connection from the transport's set-up (crr: the server's listener, the client's
  // target); its worker's engine adopts it.
  std::unique_ptr<Endpoint> endpoint;
  double rate_bps = 0;   // pacing for senders; 0 = unpaced
  double conn_rate = 0;  // crr clients: new connections per second; 0 = unpaced
  // UDP senders: the header their datagrams carry (udp_header.hpp); mtperf's unless a peer's.
  UdpWire udp_wire = UdpWire::mtperf;
  FlowCounters counters;
  FlowStats stats;
};

struct WorkerJob {
  uint32_t index = 0;  // which worker of its side
  std::vector<FlowSlot*> flows;
  const TestSpec* spec = nullptr;
  PhaseClock* clock = nullptr;
  int cpu = -1;       // pinned by the runner before the driver runs; -1 = not pinned
  std::string error;  // set when the worker could not run
  // buffers_per_flow() under the transport's caps (a flow's depth is this - 1), set by the
  // runner; 0: the worker deals its pool out instead.
  uint32_t flow_buffers = 0;
  // Every round trip its flows measured, ns (FlowStats::latency); written by the worker only,
  // read after it returned.
  Histogram latency;
  // crr clients: every connect's time, ns, measured window only (the runner makes it for a
  // worker with crr clients); the same rules as `latency`.
  std::optional<Histogram> connect_latency;
};

class Transport;  // transports/api/registry.hpp

// Runs one worker's flows to the end over the transport's engine, on the worker's thread:
// bindings/workers.hpp instantiates the workload for each engine type. Throws
// std::runtime_error when the engine cannot be set up.
using WorkerDriver = void (*)(Transport& transport, WorkerJob& job);

}  // namespace mtperf
