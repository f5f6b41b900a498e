#include "verbs/settings.hpp"

#include <stdexcept>
#include <vector>

namespace mtperf::rdma {

std::string_view to_string(Verb v) {
  switch (v) {
    case Verb::send:
      return "send";
    case Verb::write:
      return "write";
    case Verb::write_imm:
      return "write_imm";
    case Verb::read:
      return "read";
  }
  return "?";
}

Verb parse_verb(std::string_view s) {
  for (Verb v : {Verb::send, Verb::write, Verb::write_imm, Verb::read}) {
    if (s == to_string(v)) return v;
  }
  throw std::invalid_argument("rdma option verb: expected send, write, write_imm or read, got '" +
                              std::string(s) + "'");
}

std::string_view to_string(SrqMode m) {
  switch (m) {
    case SrqMode::automatic:
      return "auto";
    case SrqMode::on:
      return "on";
    case SrqMode::off:
      return "off";
  }
  return "?";
}

std::string_view to_string(ConnectMode m) {
  switch (m) {
    case ConnectMode::cm:
      return "cm";
    case ConnectMode::oob:
      return "oob";
  }
  return "?";
}

std::vector<OptionInfo> rdma_options() {
  RdmaSettings d;
  return {
      choice_option(
          "verb", {"send", "write", "write_imm", "read"}, std::string(to_string(d.verb)),
          "send | write | write_imm | read: SEND/RECV; RDMA WRITE (the receiver counts nothing; "
          "rr polls memory, spinning); WRITE with immediate (the receiver counts); RDMA READ (the "
          "receiver pulls; streams only)"),
      whole_option("inline", 0, 65536, "auto",
                   "largest send carried inline in the work request, bytes, within what the device "
                   "grants (auto: 236 for SEND, 220 for WRITE, as perftest; device: up to 1024, "
                   "what the device grants; 0: never)",
                   {"device", "auto"}),
      whole_option("signal", 1, 1024, std::to_string(d.signal_every),
                   "streams: one signalled send per N, 1..1024 (at most tx_depth - 1); the others "
                   "complete with it"),
      whole_option("tx_depth", 1, kMaxTxDepth, std::to_string(d.tx_depth),
                   "streams: sends in flight per flow, 1.." + std::to_string(kMaxTxDepth) +
                       ", within the send queue the device grants (max_qp_wr)"),
      choice_option("srq", {"auto", "on", "off"}, std::string(to_string(d.srq)),
                    "one shared receive queue per worker (auto: when a worker holds more than " +
                        std::to_string(kSrqAbove) + " connections; SEND and WRITE with immediate)",
                    {{"1", "on"}, {"0", "off"}}),
      whole_option("recv_depth", 0, 4096, "0",
                   "receives and landing slots per connection (0: sized from the test, enough "
                   "credits for the sends a stream keeps in flight)"),
      whole_option("tos", 0, 255, "none",
                   "IP type of service of the connections, 0..255 (RoCE v2: DSCP << 2 | ECN; the "
                   "fabric's lossless class needs it); none: rdma_cm's default",
                   {"none"}),
      whole_option("ack_timeout", 0, 31, "none",
                   "local ACK timeout before a retransmission, 4.096 us x 2^N, 0..31; none: "
                   "rdma_cm's default",
                   {"none"}),
      choice_option("connect", {"cm", "oob"}, "cm",
                    "cm | oob: queue pairs connected by rdma_cm, or out of band: QP numbers, PSNs, "
                    "GIDs and keys exchanged over TCP on the flow's port and the QPs moved to RTS "
                    "by mtperf (as perftest without -R, NCCL and MPI do)"),
      whole_option("gid_index", 0, 255, "auto",
                   "connect=oob: the local GID's index (auto: the RoCE v2 GID of the flow's "
                   "address, else its RoCE v1 GID; index 0 on InfiniBand)",
                   {"auto"}),
  };
}

RdmaSettings parse_rdma_settings(const OptionParams& params) {
  const OptionValues v = parse_options("rdma", rdma_options(), params);
  RdmaSettings s;
  s.verb = parse_verb(v.text("verb"));
  const OptionValue& in = v["inline"];
  s.inline_cap = !in.is_word           ? uint32_t(in.number)
                 : in.text == "device" ? kInlineDevice
                                       : kInlineAuto;
  s.signal_every = uint32_t(v.number("signal"));
  s.tx_depth = uint32_t(v.number("tx_depth"));
  const std::string& srq = v.text("srq");
  s.srq = srq == "on" ? SrqMode::on : srq == "off" ? SrqMode::off : SrqMode::automatic;
  s.recv_depth = uint32_t(v.number("recv_depth"));
  if (s.recv_depth == 1) {
    throw std::invalid_argument(
        "rdma option recv_depth: 1 leaves no credit beside the end-of-stream receive; use 0 "
        "(sized from the test) or 2..4096");
  }
  s.tos = v["tos"].is_word ? kUnset : int(v.number("tos"));
  s.ack_timeout = v["ack_timeout"].is_word ? kUnset : int(v.number("ack_timeout"));
  s.connect = v.text("connect") == "oob" ? ConnectMode::oob : ConnectMode::cm;
  s.gid_index = v["gid_index"].is_word ? kUnset : int(v.number("gid_index"));
  if (s.gid_index != kUnset && s.connect != ConnectMode::oob) {
    throw std::invalid_argument(
        "rdma option gid_index: only with connect=oob (rdma_cm picks the GID of the address)");
  }
  return s;
}

std::string verb_refusal(Verb v, bool request_response, bool per_transaction) {
  if (per_transaction && v != Verb::send) {
    return "crr over rdma opens an rdma_cm connection per transaction and carries it with "
           "SEND: use -O verb=send";
  }
  if (request_response && v == Verb::read) {
    return "request/response over RDMA READ makes no sense (the responder would have to know "
           "when to answer): use -O verb=send, write or write_imm";
  }
  return "";
}

std::string connect_refusal(ConnectMode m, bool per_transaction) {
  if (m == ConnectMode::oob && per_transaction) {
    return "crr over rdma with -O connect=oob is not supported: an out-of-band exchange per "
           "transaction is a TCP connection per transaction; use -O connect=cm";
  }
  return "";
}

}  // namespace mtperf::rdma
