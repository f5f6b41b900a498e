#include "transports/rdma/settings.hpp"

#include <stdexcept>

#include "platform/number.hpp"

namespace mtperf::rdma {
namespace {

uint32_t parse_u32(const std::string& key, const std::string& v, uint32_t lo, uint32_t hi) {
  std::optional<uint64_t> n = parse_whole(v, lo, hi);
  if (!n) {
    throw std::invalid_argument("rdma option " + key + ": expected a whole number in " +
                                std::to_string(lo) + ".." + std::to_string(hi) + ", got '" + v +
                                "'");
  }
  return uint32_t(*n);
}

}  // namespace

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

RdmaSettings parse_rdma_settings(const TransportParams& params) {
  RdmaSettings s;
  for (auto& [k, v] : params) {
    if (k == "verb") {
      s.verb = parse_verb(v);
    } else if (k == "inline") {
      s.inline_cap = v == "device" ? kInlineDevice
                     : v == "auto" ? kInlineAuto
                                   : parse_u32(k, v, 0, 65536);
    } else if (k == "signal") {
      s.signal_every = parse_u32(k, v, 1, 1024);
    } else if (k == "tx_depth") {
      s.tx_depth = parse_u32(k, v, 1, kMaxTxDepth);
    } else if (k == "srq") {
      if (v == "auto") {
        s.srq = SrqMode::automatic;
      } else if (v == "1" || v == "on") {
        s.srq = SrqMode::on;
      } else if (v == "0" || v == "off") {
        s.srq = SrqMode::off;
      } else {
        throw std::invalid_argument("rdma option srq: expected auto, on or off, got '" + v + "'");
      }
    } else if (k == "recv_depth") {
      s.recv_depth = parse_u32(k, v, 0, 4096);
      if (s.recv_depth == 1) {
        throw std::invalid_argument(
            "rdma option recv_depth: 1 leaves no credit beside the end-of-stream receive; use 0 "
            "(sized from the test) or 2..4096");
      }
    } else if (k == "tos") {
      s.tos = v == "none" ? kUnset : int(parse_u32(k, v, 0, 255));
    } else if (k == "ack_timeout") {
      s.ack_timeout = v == "none" ? kUnset : int(parse_u32(k, v, 0, 31));
    } else {
      throw std::invalid_argument(
          "rdma has no option '" + k +
          "' (verb, inline, signal, tx_depth, srq, recv_depth, tos, ack_timeout)");
    }
  }
  return s;
}

std::vector<OptionInfo> rdma_options() {
  RdmaSettings d;
  return {
      {"verb", std::string(to_string(d.verb)),
       "send | write | write_imm | read: SEND/RECV; RDMA WRITE (the receiver counts nothing; "
       "rr polls memory, spinning); WRITE with immediate (the receiver counts); RDMA READ (the "
       "receiver pulls; streams only)"},
      {"inline", "auto",
       "largest send carried inline in the work request, bytes, within what the device grants "
       "(auto: 236 for SEND, 220 for WRITE, as perftest; device: up to 1024, what the device "
       "grants; 0: never)"},
      {"signal", std::to_string(d.signal_every),
       "streams: one signalled send per N, 1..1024 (at most tx_depth - 1); the others complete "
       "with it"},
      {"tx_depth", std::to_string(d.tx_depth),
       "streams: sends in flight per flow, 1.." + std::to_string(kMaxTxDepth) +
           ", within the send queue the device grants (max_qp_wr)"},
      {"srq", std::string(to_string(d.srq)),
       "one shared receive queue per worker (auto: when a worker holds more than " +
           std::to_string(kSrqAbove) + " connections; SEND and WRITE with immediate)"},
      {"recv_depth", "0",
       "receives and landing slots per connection (0: sized from the test, enough credits for "
       "the sends a stream keeps in flight)"},
      {"tos", "none",
       "IP type of service of the connections, 0..255 (RoCE v2: DSCP << 2 | ECN; the fabric's "
       "lossless class needs it); none: rdma_cm's default"},
      {"ack_timeout", "none",
       "local ACK timeout before a retransmission, 4.096 us x 2^N, 0..31; none: rdma_cm's "
       "default"},
  };
}

Caps rdma_caps(const RdmaSettings& s) {
  Caps c;
  c.one_sided = s.verb == Verb::write;
  c.passive_sender = s.verb == Verb::read;
  c.max_inline = s.inline_cap >= kInlineAuto ? 0 : s.inline_cap;
  c.max_outstanding = s.tx_depth;
  c.stream_depth = s.tx_depth;  // sends in flight per stream (engine_config.cpp)
  c.provides_recv_buffers = true;
  c.unsignaled_sends = true;
  return c;
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

}  // namespace mtperf::rdma
