#include "fleet/pair_run.hpp"

#include <exception>

#include "harness/hosts_run.hpp"

namespace mtperf::fleet {

PairResult reduce(const Report& r) {
  PairResult p;
  const Summary& s = r.summary;
  p.ok = s.errors.empty() && !s.interrupted;
  if (!s.errors.empty()) p.error = s.errors.front();
  if (s.interrupted && p.error.empty()) p.error = "interrupted";
  p.throughput_bps = s.throughput_bps;
  p.throughput_c2s_bps = s.throughput_c2s_bps;
  p.throughput_s2c_bps = s.throughput_s2c_bps;
  p.transaction_rate = s.transaction_rate;
  if (s.latency && s.latency->count > 0) {
    p.p50_us = s.latency->p50_us;
    p.p99_us = s.latency->p99_us;
  }
  p.data_started_ns = r.data_started_ns;
  p.server_counted = true;
  for (const Summary& it : r.iterations) {
    for (const FlowFigures& f : it.flows) {
      p.c2s_sent += f.client_total.bytes_sent;
      p.s2c_received += f.client_total.bytes_received;
      if (!f.server_total) {
        p.server_counted = false;
        continue;
      }
      p.c2s_received += f.server_total->bytes_received;
      p.s2c_sent += f.server_total->bytes_sent;
    }
  }
  return p;
}

PairResult run_pair(const RunRequest& base, const std::string& transport,
                    const std::string& server) {
  RunRequest o = base;
  o.spec.transport = transport;
  o.embedded = false;
  o.client.server = server;
  o.quiet = true;
  o.interim_lines = false;
  try {
    return reduce(run_iterations(o, o.client));
  } catch (const std::exception& e) {
    PairResult p;
    p.error = e.what();
    return p;
  }
}

}  // namespace mtperf::fleet
