#pragma once
#include <stdexcept>

namespace mtperf {

// A request that cannot be carried out as asked, found once the hosts are known (a testbed of
// another kind than the transport, a line rate that is not the testbed's). The message names the
// option as `mtperf run` spells it; the command line reports it as bad usage (exit 2). Thrown by
// the run layer and by a transport's line hook (transports/api/line.hpp), so it lives below both.
struct RequestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace mtperf
