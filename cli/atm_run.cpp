#include "cli/atm_run.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "cli/hosts_run.hpp"
#include "transports/atm/emu/testbed.hpp"

namespace mtperf::cli {

bool is_atm_transport(const std::string& name) {
  return name == "clip" || name == "lane";
}

Report run_on_atm(const RunOptions& o) {
  const std::string kind = o.spec.transport;
  if (o.testbed && std::filesystem::exists(atm::atm_state_path(*o.testbed))) {
    std::ifstream in(atm::atm_state_path(*o.testbed));
    const TestHosts hosts = hosts_from_state(nlohmann::json::parse(in));
    if (hosts.kind != kind)
      throw std::invalid_argument("ATM testbed '" + *o.testbed + "' runs " + hosts.kind + ", not " +
                                  kind + "; use -T " + hosts.kind);
    return run_on_hosts(o, hosts);
  }
  atm::AtmTestbedOptions options;
  options.mode = atm::parse_link_mode(kind);
  try {
    options.rate = atm::parse_line_rate(o.atm_rate);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("option --atm-rate: ") + e.what());
  }
  options.mtu = o.atm_mtu;
  if (o.placement)
    options.adapters =
        o.placement->adapters.empty() ? o.placement->auto_count : int(o.placement->adapters.size());
  if (options.adapters < 1) options.adapters = 1;
  atm::AtmTestbed bed(options);  // removed when the run ends, also on an exception
  return run_on_hosts(o, bed.hosts());
}

}  // namespace mtperf::cli
