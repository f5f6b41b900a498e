#include "transports/api/registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace mtperf {

// transports() and transports_not_compiled() are generated from the declarations
// (transport_list.cpp in the build folder; cmake/MtperfTransport.cmake).

const TransportEntry& find_transport(std::string_view name) {
  std::string known;
  for (const TransportEntry& e : transports()) {
    if (e.name == name) return e;
    known += (known.empty() ? "" : ", ") + std::string(e.name);
  }
  for (auto& [n, why] : transports_not_compiled()) {
    if (n == name) throw std::invalid_argument("transport '" + n + "' is " + why);
  }
  throw std::invalid_argument("unknown transport '" + std::string(name) + "' (known: " + known +
                              ")");
}

std::vector<const LineHook*> line_hooks() {
  std::vector<const LineHook*> hooks;
  for (const TransportEntry& e : transports())
    if (e.line != nullptr && std::find(hooks.begin(), hooks.end(), e.line) == hooks.end())
      hooks.push_back(e.line);
  return hooks;
}

void check_params(const TransportEntry& entry, const TransportParams& params) {
  if (entry.options) (void)parse_options(entry.name, entry.options(), params);
}

}  // namespace mtperf
