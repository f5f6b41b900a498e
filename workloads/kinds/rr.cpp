// rr: request/response over a connection kept for the test (netperf TCP_RR, UDP_RR): the client
// sends a request, the server answers; --burst transactions in flight per flow.
#include "workloads/kind.hpp"

namespace mtperf {

extern const WorkloadKind kRrKind{
    .id = Workload::rr,
    .name = "rr",
    .summary = "request/response over one connection per flow",
    .headline = Headline::transactions,
    .request_response = true,
    .per_transaction = false,
    .flows_per_flow = 1,
    .conns_per_flow = 1,
    .options = "rr-size, burst, udp-timeout",
    .role = [](uint32_t, uint32_t,
               Side side) { return side == Side::client ? Role::rr_client : Role::rr_server; },
    .sends_in_flight = [](const TestSpec& spec, const Caps&) { return spec.burst; },
    .buffer_size = transaction_buffer_size,
};

}  // namespace mtperf
