// The CSV renderings of a run: one row of the headline figures (netperf omni selector names as
// columns), or one row per flow. RFC 4180: a field with a comma, a quote or a line break is
// quoted, its quotes doubled.
#include <fmt/format.h>

#include <string>

#include "report/covers.hpp"
#include "report/render.hpp"

namespace mtperf {

namespace {

std::string quoted(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

template <typename T>
std::string opt(const std::optional<T>& v, const char* spec = "{}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string();
}

}  // namespace

std::string report_csv(const Report& r, bool header) {
  const Summary& s = r.summary;
  auto cpu = [](const std::optional<CpuFigures>& c) {
    return c ? fmt::format("{:.2f}", c->host.total.util) : std::string();
  };
  auto sd = [](const std::optional<CpuFigures>& c) {
    return c ? fmt::format("{:.4f}", c->service_demand) : std::string();
  };
  auto lat = [&](double LatencyFigures::*m) {
    return s.latency ? fmt::format("{:.3f}", (*s.latency).*m) : std::string();
  };
  std::string out;
  if (header) {
    out +=
        "WORKLOAD,PROTOCOL,TRANSPORT,FLOWS,THROUGHPUT,THROUGHPUT_UNITS,TRANSACTION_RATE,"
        "MEAN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,P999_LATENCY,LOCAL_CPU_UTIL,"
        "REMOTE_CPU_UTIL,LOCAL_SD,REMOTE_SD,JAIN_FAIRNESS,UDP_LOSS_PERCENT,ITERATIONS,"
        "CONFIDENCE_MET,ERRORS,COVERS\n";
  }
  out += fmt::format(
      "{},{},{},{},{:.3f},10^6bits/s,{:.2f},{},{},{},{},{},{},{},{},{},{:.4f},{},{},{},{},{}\n",
      to_string(r.spec.workload), to_string(r.spec.proto), r.spec.transport, r.spec.flows_total(),
      s.throughput_bps / 1e6, s.transaction_rate, lat(&LatencyFigures::mean_us),
      lat(&LatencyFigures::p50_us), lat(&LatencyFigures::p90_us), lat(&LatencyFigures::p99_us),
      lat(&LatencyFigures::p999_us), cpu(s.local_cpu), cpu(s.remote_cpu), sd(s.local_cpu),
      sd(s.remote_cpu), s.jain_fairness,
      s.udp_loss_percent ? fmt::format("{:.4f}", *s.udp_loss_percent) : "", r.iterations.size(),
      r.confidence ? (r.confidence_met ? "yes" : "no") : "", s.errors.size(),
      quoted(covers_csv_row(r)));
  return out;
}

std::string report_flows_csv(const Report& r) {
  std::string out =
      "FLOW,DIRECTION,ADAPTER,LOCAL_ADDRESS,REMOTE_ADDRESS,CLIENT_CPU,BYTES,BYTES_C2S,BYTES_S2C,"
      "THROUGHPUT,THROUGHPUT_UNITS,TRANSACTIONS,TRANSACTION_RATE,MEAN_LATENCY,P50_LATENCY,"
      "P99_LATENCY,RETRANSMITS,RTT_US,CWND,CONGESTION,UDP_SENT,UDP_RECEIVED,UDP_LOST,"
      "UDP_JITTER_US,CLIENT_BYTES_SENT,CLIENT_BYTES_RECEIVED,SERVER_BYTES_SENT,"
      "SERVER_BYTES_RECEIVED,ERROR,COVERS\n";
  const std::string covers = quoted(covers_csv_flows(r));
  for (const FlowFigures& f : r.summary.flows) {
    const std::optional<FlowTotals>& st = f.server_total;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{:.3f},10^6bits/s,{},{:.2f},{},{},{},{},{},{},{},{},{},{},{},"
        "{},{},{},{},{},{}\n",
        f.id, f.direction, quoted(f.adapter), quoted(f.local_address), quoted(f.remote_address),
        f.client_cpu >= 0 ? std::to_string(f.client_cpu) : std::string(), f.bytes, f.bytes_c2s,
        f.bytes_s2c, f.throughput_bps / 1e6, f.transactions, f.transaction_rate,
        opt(f.latency_mean_us, "{:.3f}"), opt(f.latency_p50_us, "{:.3f}"),
        opt(f.latency_p99_us, "{:.3f}"), opt(f.retransmits), opt(f.rtt_us), opt(f.cwnd),
        quoted(f.congestion), opt(f.udp_sent), opt(f.udp_received), opt(f.udp_lost),
        opt(f.udp_jitter_us, "{:.3f}"), f.client_total.bytes_sent, f.client_total.bytes_received,
        st ? std::to_string(st->bytes_sent) : std::string(),
        st ? std::to_string(st->bytes_received) : std::string(), quoted(f.error), covers);
  }
  return out;
}

}  // namespace mtperf
