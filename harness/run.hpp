#pragma once
// One test, wherever the request says it goes: the entry point of the run layer for `mtperf run`
// and for the commands made of many runs (suite, sweep, compare).
#include <memory>
#include <string>

#include "harness/request.hpp"
#include "report/summary.hpp"

namespace mtperf::control {
class LocalServer;
}

namespace mtperf {

// One test where o says: over the line its transport brings (transports/api/line.hpp), between a
// testbed's namespaces (--testbed), against -H's server, or against an in-process server on
// 127.0.0.1, made in `local` on first use and kept there for the next test. Throws RequestError
// when the request does not fit the hosts, std::exception when the set-up fails.
Report run_where_told(const RunRequest& o, std::unique_ptr<control::LocalServer>& local);
// Where run_where_told runs o, in words: "loopback, an in-process server", "server HOST", ...
std::string where_told(const RunRequest& o);

}  // namespace mtperf
