#include "report/covers.hpp"

#include <array>

#include <fmt/format.h>

#include "report/summary.hpp"

namespace mtperf {

namespace {

constexpr std::array kCovers{
    FigureCover{"throughput_bps", Cover::mean_of_iterations},
    FigureCover{"throughput_c2s_bps", Cover::mean_of_iterations},
    FigureCover{"throughput_s2c_bps", Cover::mean_of_iterations},
    FigureCover{"transaction_rate", Cover::mean_of_iterations},
    FigureCover{"jain_fairness", Cover::mean_of_iterations},
    FigureCover{"setup_s", Cover::mean_of_iterations},
    FigureCover{"adapters", Cover::mean_of_iterations},
    FigureCover{"controllers", Cover::mean_of_iterations},
    FigureCover{"latency_us", Cover::all_iterations},
    FigureCover{"connect_latency_us", Cover::all_iterations},
    FigureCover{"connect_failures", Cover::all_iterations},
    FigureCover{"errors", Cover::all_iterations},
    FigureCover{"verify", Cover::all_iterations},
    FigureCover{"interrupted", Cover::all_iterations},
    FigureCover{"stopped_early", Cover::all_iterations},
    FigureCover{"longest_stall_s", Cover::all_iterations},
    FigureCover{"longest_stall_start_s", Cover::all_iterations},
    FigureCover{"flows_not_connected", Cover::all_iterations},
    FigureCover{"window_s", Cover::last_iteration},
    FigureCover{"transactions", Cover::last_iteration},
    FigureCover{"min_max_ratio", Cover::last_iteration},
    FigureCover{"local_cpu", Cover::last_iteration},
    FigureCover{"remote_cpu", Cover::last_iteration},
    FigureCover{"service_demand", Cover::last_iteration},
    FigureCover{"local_interrupts", Cover::last_iteration},
    FigureCover{"remote_interrupts", Cover::last_iteration},
    FigureCover{"local_process_cpu_percent", Cover::last_iteration},
    FigureCover{"remote_process_cpu_percent", Cover::last_iteration},
    FigureCover{"udp_loss_percent", Cover::last_iteration},
    FigureCover{"local_rdma_ports", Cover::last_iteration},
    FigureCover{"remote_rdma_ports", Cover::last_iteration},
    FigureCover{"local_netdev", Cover::last_iteration},
    FigureCover{"remote_netdev", Cover::last_iteration},
    FigureCover{"local_tcp", Cover::last_iteration},
    FigureCover{"remote_tcp", Cover::last_iteration},
    FigureCover{"intervals", Cover::last_iteration},
    FigureCover{"flows", Cover::last_iteration},
    FigureCover{"flows_asked", Cover::last_iteration},
    FigureCover{"one_process", Cover::last_iteration},
    FigureCover{"transport_settings", Cover::last_iteration},
    FigureCover{"flows[].client_bytes_sent", Cover::whole_connection},
    FigureCover{"flows[].client_bytes_received", Cover::whole_connection},
    FigureCover{"flows[].server_bytes_sent", Cover::whole_connection},
    FigureCover{"flows[].server_bytes_received", Cover::whole_connection},
    FigureCover{"flows[].tcp_info", Cover::whole_connection},
};

}  // namespace

std::string_view to_string(Cover c) {
  switch (c) {
    case Cover::mean_of_iterations:
      return "mean_of_iterations";
    case Cover::all_iterations:
      return "all_iterations";
    case Cover::last_iteration:
      return "last_iteration";
    case Cover::whole_connection:
      return "whole_connection";
  }
  return "?";
}

std::span<const FigureCover> summary_covers() {
  return kCovers;
}

nlohmann::json covers_json(const Report& r) {
  nlohmann::json figures = nlohmann::json::object();
  for (const FigureCover& f : kCovers)
    figures[std::string(f.figure)] = std::string(to_string(f.cover));
  return {{"iterations", r.iterations.size()},
          {"warmup_left_out_s", r.spec.warmup_s},
          {"summary", std::move(figures)}};
}

std::string covers_csv_row(const Report& r) {
  const size_t n = r.iterations.size();
  if (n <= 1) return "one iteration";
  return fmt::format(
      "mean of {0} iterations; latency: all {0}; CPU, service demand, UDP loss: the last", n);
}

std::string covers_csv_flows(const Report& r) {
  const size_t n = r.iterations.size();
  const std::string which =
      n <= 1 ? "the measured window" : fmt::format("the last iteration ({0} of {0})", n);
  return which + "; RETRANSMITS, CLIENT_* and SERVER_*: the connection's whole life";
}

}  // namespace mtperf
