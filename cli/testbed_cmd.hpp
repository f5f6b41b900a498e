#pragma once
// `mtperf testbed` builds and removes test hosts in network namespaces (platform/netns.hpp):
//   mtperf testbed up --adapters N [--mtu M] [--rate R] [--name NAME]
//   mtperf testbed down [--name NAME]
//   mtperf testbed status
// `up` leaves the namespaces in place and records them in /run/mtperf/testbed-NAME.json (NAME
// defaults to "default"); `down` removes exactly what that file lists, then the file. A hidden
// --state-dir DIR moves the state files (tests). Returns 0, 1 on a failure, 2 on bad usage.
#include <ostream>
#include <string>
#include <vector>

namespace mtperf {

int testbed_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace mtperf
