#include "harness/suite_run.hpp"

#include <algorithm>
#include <memory>

#include "control/local_server.hpp"
#include "harness/run.hpp"
#include "platform/interrupt.hpp"
#include "transports/api/registry.hpp"

namespace mtperf {

void find_usable_transports(Suite& s) {
  for (const TransportEntry& e : transports()) {
    ProbeResult p = e.probe("/");
    if (p.usable)
      s.transports.emplace_back(e.name);
    else
      s.unusable.push_back({std::string(e.name), p.why});
  }
}

bool transport_has_udp(const std::string& name) {
  const ProbeResult p = find_transport(name).probe("/");
  return std::find(p.features.begin(), p.features.end(), kFeatureUdp) != p.features.end();
}

void run_suite(Suite& s, const std::vector<std::vector<std::optional<RunRequest>>>& requests,
               const std::string& skip_reason,
               const std::function<void(const SuiteCase&)>& on_case) {
  std::unique_ptr<control::LocalServer> local;
  for (size_t c = 0; c < s.cases.size(); ++c) {
    SuiteCase& sc = s.cases[c];
    const bool ran_before = interrupts() == 0;
    for (size_t t = 0; t < s.transports.size(); ++t) {
      const std::string& name = s.transports[t];
      if (interrupts() > 0) {
        sc.results.push_back({name, SuiteStatus::interrupted, std::nullopt, ""});
        continue;
      }
      const std::optional<RunRequest>& o = requests.at(c).at(t);
      if (!o) {
        sc.results.push_back({name, SuiteStatus::skipped, std::nullopt, skip_reason});
        continue;
      }
      try {
        Report r = run_where_told(*o, local);
        SuiteStatus status = r.summary.errors.empty() ? SuiteStatus::ok : SuiteStatus::failed;
        sc.results.push_back({name, status, std::move(r), ""});
      } catch (const std::exception& e) {
        sc.results.push_back({name, SuiteStatus::failed, std::nullopt, e.what()});
      }
    }
    if (on_case && ran_before) on_case(sc);
  }
}

}  // namespace mtperf
