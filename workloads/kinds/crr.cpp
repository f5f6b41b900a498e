// crr: connect/request/response (netperf TCP_CRR): a new connection for every transaction,
// closed after its response.
#include <algorithm>

#include "workloads/kind.hpp"

namespace mtperf {

extern const WorkloadKind kCrrKind{
    .id = Workload::crr,
    .name = "crr",
    .summary = "a connection per transaction: connect, request, response, close",
    .headline = Headline::transactions,
    .request_response = true,
    .per_transaction = true,
    .flows_per_flow = 1,
    .conns_per_flow = 4,
    .options = "rr-size, rate",
    .role = [](uint32_t, uint32_t,
               Side side) { return side == Side::client ? Role::crr_client : Role::crr_server; },
    .sends_in_flight =
        [](const TestSpec&, const Caps& caps) {
          return std::min(stream_depth(caps), kShallowStream);
        },
    .buffer_size = transaction_buffer_size,
};

}  // namespace mtperf
