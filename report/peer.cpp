#include "report/peer.hpp"

#include <fmt/format.h>

namespace mtperf {

nlohmann::json peer_json(const PeerFigures& p) {
  nlohmann::json streams = nlohmann::json::array();
  for (const PeerStream& s : p.streams) {
    nlohmann::json udp;
    // The peer's figures are named peer_*, this side's not.
    if (s.udp && s.direction == "c2s")
      udp = {{"datagrams_sent", s.udp->sent}, {"peer_packets", s.udp->highest},
             {"peer_lost", s.udp->lost},      {"peer_received", s.udp->received},
             {"tail", s.udp->tail},           {"peer_jitter_ms", s.udp->jitter_ms}};
    else if (s.udp)
      udp = {{"peer_datagrams_sent", s.udp->sent},
             {"packets", s.udp->highest},
             {"lost", s.udp->lost},
             {"received", s.udp->received},
             {"out_of_order", s.udp->out_of_order},
             {"tail", s.udp->tail},
             {"jitter_ms", s.udp->jitter_ms}};
    streams.push_back({{"flow", s.flow},
                       {"peer_id", s.peer_id},
                       {"direction", s.direction},
                       {"bytes_here", s.here},
                       {"bytes_peer", s.peer},
                       {"margin_bytes", s.margin},
                       {"agree", s.agree},
                       {"peer_retransmits", s.peer_retransmits ? nlohmann::json(*s.peer_retransmits)
                                                               : nlohmann::json()}});
    if (s.udp) streams.back()["udp"] = std::move(udp);
  }
  nlohmann::json j = {{"peer", p.peer},
                      {"streams", streams},
                      {"agree", p.all_agree()},
                      {"margin", p.margin_why},
                      {"unit", p.unit},
                      {"cpu_util_total", p.cpu_total},
                      {"cpu_util_user", p.cpu_user},
                      {"cpu_util_system", p.cpu_system},
                      {"congestion", p.congestion}};
  if (!p.server_output.empty()) j["server_output"] = p.server_output;
  return j;
}

std::string peer_text(const PeerFigures& p) {
  std::string out;
  if (p.has_cpu)
    out = fmt::format("  {} server: CPU {:.1f}% of one CPU (usr {:.1f} sys {:.1f}){}\n", p.peer,
                      p.cpu_total, p.cpu_user, p.cpu_system,
                      p.congestion.empty() ? "" : ", congestion " + p.congestion);
  out += fmt::format("  {} that crossed, here and as {} counted them ({}):\n", p.unit, p.peer,
                     p.margin_why);
  for (const PeerStream& s : p.streams) {
    const uint64_t apart = s.here > s.peer ? s.here - s.peer : s.peer - s.here;
    out += fmt::format(
        "    flow {} ({} stream {}, {}): here {} {}, {} {} {}{}{}\n", s.flow, p.peer, s.peer_id,
        s.direction, s.direction == "c2s" ? "sent" : "received", s.here, p.peer,
        s.direction == "c2s" ? "received" : "sent", s.peer,
        s.peer_retransmits ? fmt::format(", {} retransmits", *s.peer_retransmits) : std::string(),
        s.agree ? (apart == 0 ? ", equal" : fmt::format(", {} apart", apart))
                : fmt::format(", MISMATCH: {} apart, over the margin of {}", apart, s.margin));
    if (s.udp && s.direction == "c2s")
      out += fmt::format(
          "      datagrams: here sent {}, {} received {}, lost {} (gaps below its highest "
          "sequence {}), {} after it (tail); jitter {:.3f} ms\n",
          s.udp->sent, p.peer, s.udp->received, s.udp->lost, s.udp->highest, s.udp->tail,
          s.udp->jitter_ms);
    else if (s.udp)
      out += fmt::format(
          "      datagrams: {} sent {}, here received {}, lost {} (gaps below the highest "
          "sequence {}), {} after it (tail), {} out of order; jitter {:.3f} ms\n",
          p.peer, s.udp->sent, s.udp->received, s.udp->lost, s.udp->highest, s.udp->tail,
          s.udp->out_of_order, s.udp->jitter_ms);
  }
  if (!p.server_output.empty()) {
    out += fmt::format("  {}'s own report (--get-server-output):\n", p.peer);
    size_t at = 0;
    while (at < p.server_output.size()) {
      size_t end = std::min(p.server_output.find('\n', at), p.server_output.size());
      out += "    " + p.server_output.substr(at, end - at) + "\n";
      at = end + 1;
    }
  }
  return out;
}

}  // namespace mtperf
