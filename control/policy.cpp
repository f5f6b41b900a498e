#include "control/policy.hpp"

#include <algorithm>
#include <stdexcept>

#include "platform/affinity.hpp"
#include "platform/host_limits.hpp"

namespace mtperf::control {
namespace {

[[noreturn]] void over(const std::string& field, const std::string& asked, uint64_t limit,
                       const std::string& option) {
  throw std::invalid_argument(field + ": " + asked + " is over this server's limit of " +
                              std::to_string(limit) + " (mtperf serve --" + option + ")");
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += (out.empty() ? "" : " ") + s;
  return out.empty() ? "none" : out;
}

}  // namespace

HostFacts read_host_facts(const ServerOptions& opts) {
  HostFacts h;
  h.online_cpus = online_cpus(opts.proc_root);
  h.congestion = congestion_controls(privileged_network(), opts.proc_root);
  return h;
}

void check_congestion(const std::string& name, const std::vector<std::string>& allowed) {
  if (name.empty()) return;
  if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
    throw std::invalid_argument(
        "congestion: '" + name +
        "' is not a congestion control this host allows (it allows: " + joined(allowed) + ")");
  }
}

void check_policy(const TestSpec& spec, const ServerOptions& opts, const HostFacts& host,
                  uint32_t extra_threads_per_worker) {
  uint32_t flows = spec.flows_total();
  if (flows > opts.max_flows)
    over("flows", std::to_string(flows) + " data connections", opts.max_flows, "max-flows");
  uint32_t workers = std::max<uint32_t>(1, std::min(spec.threads_effective(), flows));
  if (workers > opts.max_threads)
    over("threads", std::to_string(workers) + " worker threads", opts.max_threads, "max-threads");
  uint64_t extra = uint64_t(workers) * extra_threads_per_worker;
  if (extra > opts.max_extra_threads) {
    over("transport options",
         std::to_string(extra) +
             " transport threads beside the workers (io_uring sqpoll: one "
             "per worker, each polling a CPU)",
         opts.max_extra_threads, "max-extra-threads");
  }
  for (int cpu : spec.server_cpus) {
    bool online =
        std::find(host.online_cpus.begin(), host.online_cpus.end(), cpu) != host.online_cpus.end();
    bool offered =
        opts.cpus.empty() || std::find(opts.cpus.begin(), opts.cpus.end(), cpu) != opts.cpus.end();
    if (!online) {
      throw std::invalid_argument("server cpus: CPU " + std::to_string(cpu) +
                                  " is not online on the server");
    }
    if (!offered) {
      throw std::invalid_argument(
          "server cpus: CPU " + std::to_string(cpu) +
          " is not among the CPUs this server offers (mtperf serve --cpus)");
    }
  }
  check_congestion(spec.sock.congestion, host.congestion);
}

}  // namespace mtperf::control
