#pragma once
// The rdma transport's options (-O key=value): parsed into RdmaSettings (verbs/settings.hpp),
// listed for the registry, and the capabilities they give. Pure, unit-tested on hosts without
// RDMA.
#include <string>
#include <vector>

#include "transports/api/registry.hpp"
#include "verbs/settings.hpp"

namespace mtperf::rdma {

// Validates every key (unknown keys and bad values throw std::invalid_argument naming the key,
// the value and what it takes).
RdmaSettings parse_rdma_settings(const TransportParams& params);
std::vector<OptionInfo> rdma_options();

// The capabilities of a transport with these settings (transport.hpp). max_inline is the cap
// asked for; the device's own limit is known only once a queue pair exists.
Caps rdma_caps(const RdmaSettings& s);

// Why a verb cannot carry a workload, or "" when it can. `request_response`: rr or crr;
// `per_transaction`: crr.
std::string verb_refusal(Verb v, bool request_response, bool per_transaction);
// Why the connection mode cannot carry a workload, or "" when it can.
std::string connect_refusal(ConnectMode m, bool per_transaction);

}  // namespace mtperf::rdma
