// maerts: the server sends, the client receives (netperf TCP_MAERTS, iperf3 -R).
#include "workloads/kind.hpp"

namespace mtperf {

extern const WorkloadKind kMaertsKind{
    .id = Workload::maerts,
    .name = "maerts",
    .summary = "the server sends, the client receives",
    .headline = Headline::throughput,
    .request_response = false,
    .per_transaction = false,
    .flows_per_flow = 1,
    .conns_per_flow = 1,
    .options = "message-size, rate",
    .role = [](uint32_t, uint32_t,
               Side side) { return side == Side::client ? Role::receiver : Role::sender; },
    .sends_in_flight = [](const TestSpec&, const Caps& caps) { return stream_depth(caps); },
    .buffer_size = stream_buffer_size,
};

}  // namespace mtperf
