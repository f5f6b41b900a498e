#include "harness/atm_run.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "harness/error.hpp"
#include "harness/hosts_run.hpp"
#include "transports/atm/emu/testbed.hpp"

namespace mtperf {

bool is_atm_transport(const std::string& name) {
  return find_transport(name).emulated_line;
}

std::optional<TestHosts> atm_testbed_hosts(const std::string& name, const std::string& kind) {
  if (!std::filesystem::exists(atm::atm_state_path(name))) return std::nullopt;
  std::ifstream in(atm::atm_state_path(name));
  TestHosts hosts = hosts_from_state(nlohmann::json::parse(in));
  if (hosts.kind != kind)
    throw std::invalid_argument("ATM testbed '" + name + "' runs " + hosts.kind + ", not " + kind +
                                "; use -T " + hosts.kind);
  return hosts;
}

AtmHosts build_atm_testbed(const RunRequest& o, int adapters) {
  atm::AtmTestbedOptions options;
  options.mode = atm::parse_link_mode(o.spec.transport);
  try {
    options.rate = atm::parse_line_rate(o.atm_rate);
  } catch (const std::invalid_argument& e) {
    throw RequestError(std::string("option --atm-rate: ") + e.what());
  }
  options.mtu = o.atm_mtu;
  options.adapters = std::max(adapters, 1);
  auto bed = std::make_shared<atm::AtmTestbed>(options);  // removed with the last owner
  return {bed, bed->hosts()};
}

// --atm-rate against the line of a testbed that is up: a different rate is an error, never a
// run at the line's own rate under the rate asked for.
void check_line_rate(const RunRequest& o, const std::string& name) {
  if (!o.atm_rate_given) return;
  atm::LineRate asked;
  try {
    asked = atm::parse_line_rate(o.atm_rate);
  } catch (const std::invalid_argument& e) {
    throw RequestError(std::string("option --atm-rate: ") + e.what());
  }
  std::ifstream in(atm::atm_state_path(name));
  double line = nlohmann::json::parse(in).value("rate_cells_per_s", 0.0);
  if (std::fabs(line - asked.cells_per_s()) > 0.5) {
    throw RequestError("option --atm-rate: " + o.atm_rate + " (" +
                       std::to_string(int64_t(asked.cells_per_s())) +
                       " cells/s), but ATM testbed '" + name + "' runs its line at " +
                       std::to_string(int64_t(line)) +
                       " cells/s; leave --atm-rate out, or take the testbed down and up again");
  }
}

Report run_on_atm(const RunRequest& o) {
  if (o.testbed)
    if (auto hosts = atm_testbed_hosts(*o.testbed, o.spec.transport)) {
      check_line_rate(o, *o.testbed);
      return run_on_hosts(o, *hosts);
    }
  int adapters = 1;
  if (o.placement)
    adapters =
        o.placement->adapters.empty() ? o.placement->auto_count : int(o.placement->adapters.size());
  AtmHosts bed = build_atm_testbed(o, adapters);
  return run_on_hosts(o, bed.hosts);
}

}  // namespace mtperf
