#pragma once
// What a workload is, read in one place. Each workload is one file in workloads/kinds/ that
// defines its WorkloadKind — the role each flow plays on each side, what it counts and reports
// as its headline, how it sizes its buffers, which options it takes — and one line of the table
// in workloads/kinds/table.cpp lists it. Everything that behaves differently per workload (the
// spec's checks, the engine's sizing, the worker, the report, the runs) asks the kind, never
// which workload it holds.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "transports/api/transport.hpp"
#include "workloads/spec.hpp"

namespace mtperf {

// What a workload's result leads with.
enum class Headline : uint8_t {
  throughput,    // bits/s of data in the test's direction(s); service demand per KB
  transactions,  // transactions/s and their latency; service demand per transaction
};

struct WorkloadKind {
  Workload id;
  std::string_view name;     // what -w takes
  std::string_view summary;  // one line, for --help and the docs
  Headline headline;
  // A flow's sends are requests the peer answers (rr, crr): transactions, latency per
  // transaction, no pacing by --rate.
  bool request_response;
  // A new connection for every transaction (crr): set-up is part of what is measured; only a
  // connection-oriented protocol (tcp) carries it.
  bool per_transaction;
  // Flows each -P flow makes: 2 for a flow each way (bidir).
  uint32_t flows_per_flow;
  // Connections an engine holds per flow (crr, on the server: the listener, the current one,
  // one closing behind it).
  uint32_t conns_per_flow;
  // The options of `mtperf run` this workload reads, for its help ("message-size, rate").
  std::string_view options;
  // The role of flow `index` (of `flows` per direction) on `side`.
  Role (*role)(uint32_t index, uint32_t flows, Side side);
  // Sends a flow keeps in flight (buffers: these plus one to receive into).
  uint32_t (*sends_in_flight)(const TestSpec& spec, const Caps& caps);
  // Bytes of each pool buffer: at least one whole send.
  uint32_t (*buffer_size)(const TestSpec& spec);

  // Data one way, a flow each (not transactions, not a flow each way): stream and maerts.
  bool one_way() const { return !request_response && flows_per_flow == 1; }
  // A one-way workload whose data goes from the server to the client (maerts).
  bool server_sends() const { return one_way() && role(0, 1, Side::client) == Role::receiver; }
  // Data both ways at once, a flow each way (bidir).
  bool both_ways() const { return !request_response && flows_per_flow == 2; }
};

// Every workload, in the order -w lists them.
std::span<const WorkloadKind* const> workload_kinds();
// Adds a workload kind after the table's own, its id one that no other kind has (a value past
// the enum's names): a workload that lives outside this folder, or a test's throwaway one.
// Before any test starts; not thread-safe. Throws std::invalid_argument for a taken id or name.
void add_workload_kind(const WorkloadKind& kind);
// The kind of a workload.
const WorkloadKind& kind_of(Workload w);
// The kind -w `name` names, or nullptr.
const WorkloadKind* find_kind(std::string_view name);
// The names, in table order, between `sep` ("stream | maerts | ..."); `last` before the last one
// when given ("stream, maerts ... or crr").
std::string workload_names(std::string_view sep, std::string_view last = {});

// Shared by the kinds' sizing.
// Outstanding sends per flow in a stream (depth 1 suffices for a blocking socket; completion
// engines keep the pipe full with more): Caps::stream_depth where the transport sets it (rdma:
// -O tx_depth), else an eighth of Caps::max_outstanding, 1 to kShallowStream.
uint32_t stream_depth(const Caps& caps);
inline constexpr uint32_t kShallowStream = 8;
// A stream's buffer: one send, and for TCP at least 64 KiB (a receiver reads what has arrived).
uint32_t stream_buffer_size(const TestSpec& spec);
// A transaction's buffer: the larger of request and response; for TCP room for a burst of
// them, up to kMaxGatherBytes (a receive completes with what fits).
uint32_t transaction_buffer_size(const TestSpec& spec);
inline constexpr uint32_t kMaxGatherBytes = 1u << 20;

}  // namespace mtperf
