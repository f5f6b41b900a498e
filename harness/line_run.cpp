#include "harness/line_run.hpp"

#include "harness/hosts_run.hpp"
#include "transports/api/registry.hpp"

namespace mtperf {

const LineHook* line_hook_of(const std::string& transport) {
  return find_transport(transport).line;
}

Line line_for(const RunRequest& o, const std::optional<std::string>& testbed, const LineHook& hook,
              int adapters) {
  // The line's options, and the transport's -O keys beside them: a line may own some (its
  // capture), which the transport's option list declared and -O checked already.
  LineOptions options = o.line_options;
  for (const auto& [key, value] : o.spec.transport_params)
    options.emplace(key, value);
  if (testbed)
    if (auto line = hook.attach(o.spec.transport, *testbed, options)) return *line;
  return hook.build(o.spec.transport, adapters, options);
}

Report run_on_line(const RunRequest& o, const LineHook& hook) {
  int adapters = 1;
  if (o.placement)
    adapters =
        o.placement->adapters.empty() ? o.placement->auto_count : int(o.placement->adapters.size());
  const Line line =
      line_for(o, o.testbed, hook, adapters);  // a line built here goes when this returns
  return run_on_hosts(o, line.hosts);
}

}  // namespace mtperf
