// bidir: -P flows each way at once (iperf3 --bidir): the first half of the flows carry data
// client -> server, the second half server -> client.
#include "workloads/kind.hpp"

namespace mtperf {

extern const WorkloadKind kBidirKind{
    .id = Workload::bidir,
    .name = "bidir",
    .summary = "-P flows each way at once",
    .headline = Headline::throughput,
    .request_response = false,
    .per_transaction = false,
    .flows_per_flow = 2,
    .conns_per_flow = 1,
    .options = "message-size, rate",
    .role =
        [](uint32_t index, uint32_t flows, Side side) {
          return (index < flows) == (side == Side::client) ? Role::sender : Role::receiver;
        },
    .sends_in_flight = [](const TestSpec&, const Caps& caps) { return stream_depth(caps); },
    .buffer_size = stream_buffer_size,
};

}  // namespace mtperf
