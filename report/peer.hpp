#pragma once
// A run against another tool's server (`mtperf run --peer iperf3`): what the peer counted beside
// what this side counted, stream by stream, and whether the bytes that crossed agree within the
// stated margin. Rendered by text.cpp and json.cpp under "peer".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mtperf {

// A UDP stream with iperf3 (-u): the datagrams its sender sent beside its receiver's counts.
// c2s (this side sent): iperf3's receiver reports the highest sequence it saw and the gaps below
// it (lost). s2c (iperf3 -R, the reverse half of --bidir): iperf3 reports what it sent, and this
// side's receiver counts the same way, with its datagrams out of order. What was sent after the
// receiver's highest sequence (the tail) was lost at the end or still unread when the receiver
// stopped counting. sent = received + lost + tail, each a whole datagram.
struct PeerUdp {
  uint64_t sent = 0;          // datagrams the sending side sent
  uint64_t highest = 0;       // the receiver's highest sequence, from 1 (iperf3's `packets`)
  uint64_t lost = 0;          // gaps below it (iperf3's `errors`)
  uint64_t received = 0;      // datagrams the receiver took
  uint64_t tail = 0;          // sent - highest
  double jitter_ms = 0;       // the receiver's (RFC 1889)
  uint64_t out_of_order = 0;  // s2c only: iperf3's results carry no count of its own
};

struct PeerStream {
  uint32_t flow = 0;
  int32_t peer_id = 0;    // the peer's own id of the stream (iperf3: 1, 3, 4, ...)
  std::string direction;  // "c2s" (this side sent) or "s2c"
  uint64_t here = 0;      // bytes this side sent (c2s) or received (s2c)
  uint64_t peer = 0;      // bytes the peer received (c2s) or sent (s2c)
  uint64_t margin = 0;    // how far apart they may be, bytes (PeerFigures::margin_why)
  bool agree = true;      // |here - peer| <= margin
  std::optional<int64_t> peer_retransmits;  // the peer's TCP retransmits when it sent
  std::optional<PeerUdp> udp;
};

struct PeerFigures {
  std::string peer;  // "iperf3"
  std::vector<PeerStream> streams;
  double cpu_total = 0, cpu_user = 0, cpu_system = 0;  // the peer's process, % of one CPU
  std::string congestion;                              // what the peer's sockets used, as it says
  std::string margin_why;                              // why the counts may differ, and by how much
  std::string server_output;                           // --get-server-output: the peer's own report
  bool has_cpu = true;         // the peer reported its CPU (sockperf does not)
  std::string unit = "bytes";  // what here and peer count ("messages": sockperf)
  bool all_agree() const {
    for (const PeerStream& s : streams)
      if (!s.agree) return false;
    return true;
  }
};

nlohmann::json peer_json(const PeerFigures& p);
// The text report's lines: each stream's two counts, and a mismatch flagged.
std::string peer_text(const PeerFigures& p);

}  // namespace mtperf
