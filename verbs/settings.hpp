#pragma once
// What the rdma transport's options (-O key=value) choose, as the device and connection code
// below it reads them: the verb, the receive queue, the connection mode and the sizes; their
// table and parser. The capabilities they give are the transport's (transports/rdma/
// settings.hpp). No verbs header: pure, unit-tested on hosts without RDMA.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "platform/typed_options.hpp"

namespace mtperf::rdma {

// What a workload's send becomes on the wire.
//   send       SEND into a receive the peer posted (ib_send_bw / ib_send_lat)
//   write      RDMA WRITE into the peer's memory; the receiver sees nothing (ib_write_bw), or,
//              for request/response, polls the last byte of its memory (ib_write_lat)
//   write_imm  RDMA WRITE with immediate: the data lands in the peer's memory and consumes one
//              of its receives, so the receiver counts it
//   read       the receiver pulls: RDMA READ from the sender's memory (ib_read_bw); streams only
enum class Verb : uint8_t { send, write, write_imm, read };

std::string_view to_string(Verb v);
// Throws std::invalid_argument listing the choices.
Verb parse_verb(std::string_view s);

enum class SrqMode : uint8_t { automatic, on, off };
std::string_view to_string(SrqMode m);

// How a flow's queue pairs are connected.
//   cm   rdma_cm: address and route resolved, the QP moved to RTS by rdma_connect/rdma_accept
//   oob  out of band: a TCP connection carries each QP's number, PSN, GID, LID, MTU, read depths
//        and memory keys (oob_wire.hpp), and mtperf moves the QP through INIT, RTR and RTS itself,
//        as perftest (without -R), NCCL and most MPI libraries do (oob.hpp)
enum class ConnectMode : uint8_t { cm, oob };
std::string_view to_string(ConnectMode m);

inline constexpr uint32_t kInlineDevice = UINT32_MAX;    // inline up to the device's maximum
inline constexpr uint32_t kInlineAuto = UINT32_MAX - 1;  // a few hundred bytes (device_rules.hpp)
inline constexpr int kUnset = -1;                        // an option left to rdma_cm's default
// A worker with more connections than this shares one receive queue (SRQ) among them.
inline constexpr uint32_t kSrqAbove = 4;
inline constexpr uint32_t kTxDepthDefault = 128;  // perftest's ib_send_bw / ib_write_bw -t
inline constexpr uint32_t kMaxTxDepth = 4096;
inline constexpr uint32_t kSignalDefault = 100;  // perftest's --cq-mod

struct RdmaSettings {
  Verb verb = Verb::send;
  uint32_t inline_cap = kInlineAuto;  // bytes; 0 = never inline
  // Streams: sends in flight per flow (1..kMaxTxDepth), as perftest's tx depth; the send queue
  // the device grants may hold fewer (flow_math.hpp's stream_window).
  uint32_t tx_depth = kTxDepthDefault;
  // Streams: one signalled send per N (1..1024), as perftest's CQ moderation; never more than
  // the stream's window less one (flow_math.hpp's signal_interval).
  uint32_t signal_every = kSignalDefault;
  SrqMode srq = SrqMode::automatic;
  uint32_t recv_depth = 0;  // receives (and landing slots) per connection; 0 = sized from the test
  int tos = kUnset;         // IP type of service of the connections (RoCE v2: DSCP and ECN), 0..255
  int ack_timeout = kUnset;  // local ACK timeout, 4.096 us x 2^N, 0..31
  ConnectMode connect = ConnectMode::cm;
  int gid_index = kUnset;  // oob: the source GID's index (kUnset: chosen, gid_rules.hpp)
};

// The options' table, and the settings they give: every key validated (unknown keys and bad
// values throw std::invalid_argument naming the key, the value and what it takes).
std::vector<OptionInfo> rdma_options();
RdmaSettings parse_rdma_settings(const OptionParams& params);

// Why a verb cannot carry a workload, or "" when it can. `request_response`: rr or crr;
// `per_transaction`: crr.
std::string verb_refusal(Verb v, bool request_response, bool per_transaction);
// Why the connection mode cannot carry a workload, or "" when it can.
std::string connect_refusal(ConnectMode m, bool per_transaction);

}  // namespace mtperf::rdma
