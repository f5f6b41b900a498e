// stream: the client sends, the server receives (netperf TCP_STREAM, iperf3's default).
#include "workloads/kind.hpp"

namespace mtperf {

extern const WorkloadKind kStreamKind{
    .id = Workload::stream,
    .name = "stream",
    .summary = "the client sends, the server receives",
    .headline = Headline::throughput,
    .request_response = false,
    .per_transaction = false,
    .flows_per_flow = 1,
    .conns_per_flow = 1,
    .options = "message-size, rate",
    .role = [](uint32_t, uint32_t,
               Side side) { return side == Side::client ? Role::sender : Role::receiver; },
    .sends_in_flight = [](const TestSpec&, const Caps& caps) { return stream_depth(caps); },
    .buffer_size = stream_buffer_size,
};

}  // namespace mtperf
