#include "harness/peer_run.hpp"

#include "peers/iperf3/client.hpp"
#include "peers/sockperf/client.hpp"
#include "platform/interrupt.hpp"
#include "platform/request_error.hpp"
#include "report/render.hpp"
#include "transports/api/registry.hpp"
#include "workloads/kind.hpp"

namespace mtperf {
namespace {

// The counts of bytes that crossed, compared stream by stream. Without a warm-up both sides
// count the whole test: what iperf3 sent (maerts) this side reads to the end, exactly; what this
// side sent (stream) iperf3 counts until TEST_END, which goes out only once every byte and the
// FIN were acknowledged and the server had 50 ms to read them, so they agree exactly unless the
// server fell that far behind. With a warm-up iperf3 leaves out what it received or sent in its
// own `omit` seconds, timed by its clock from its TEST_START, and this side its window's, timed by
// ours from the flows' start: the two windows start apart by the set-up's time, and the counts
// differ by what crossed in between, which no fixed margin bounds (it grows with a slow host).
// Both are shown, and not compared.
// A UDP stream (iperf3 -u): every datagram is the same size, and the receiver says the highest
// sequence it saw (iperf3's `packets`) and the gaps below it (`errors`). Without a warm-up the
// bytes it received must be exactly its datagrams taken (packets - errors) times the size, and
// its highest sequence at most what was sent; then what was sent is what it received plus its
// lost plus the tail after its highest sequence (lost at the end, or unread when the receiver
// stopped counting), all whole datagrams: the margin. This side sent (c2s): iperf3's receiver
// counts until TEST_END, 50 ms after the last send here. iperf3 sent (s2c: -R, --bidir): it
// stops at TEST_END, and this side reads on until no datagram has come for 20 ms, so the tail is
// what was dropped at the end.
void udp_agree(const TestSpec& spec, const PeerUdp& u, uint64_t bytes_sent, uint64_t bytes_received,
               PeerStream& s) {
  const uint64_t size = spec.stream_msg_size();
  s.margin = (u.sent - std::min(u.sent, u.received)) * size;
  s.agree = u.highest <= u.sent && bytes_received == u.received * size &&
            bytes_sent == u.sent * size &&
            bytes_sent - std::min(bytes_sent, bytes_received) == s.margin;
}

void compare_udp(const TestSpec& spec, const FlowResult& c, const iperf3::StreamResult& r,
                 bool omit, PeerStream& s) {
  PeerUdp u;
  u.sent = c.total.msgs_sent;
  u.highest = uint64_t(std::max<int64_t>(r.packets, 0));
  u.lost = uint64_t(std::max<int64_t>(r.errors, 0));
  u.received = u.highest - std::min(u.highest, u.lost);
  u.tail = u.sent - std::min(u.sent, u.highest);
  u.jitter_ms = r.jitter_s * 1e3;
  s.udp = u;
  if (!omit) udp_agree(spec, u, s.here, s.peer, s);
}

// s2c: iperf3's datagrams sent (its `packets` for a sending stream) beside this side's receiver.
void compare_udp_received(const TestSpec& spec, const FlowResult& c, const iperf3::StreamResult& r,
                          bool omit, PeerStream& s) {
  const UdpStats& mine = c.stats.udp;
  PeerUdp u;
  u.sent = uint64_t(std::max<int64_t>(r.packets, 0));
  u.highest = mine.any ? mine.highest_seq + 1 : 0;
  u.lost = mine.missing();
  u.received = c.total.msgs_recv;
  u.tail = u.sent - std::min(u.sent, u.highest);
  u.jitter_ms = mine.jitter_ns / 1e6;
  u.out_of_order = mine.reordered;
  s.udp = u;
  if (!omit) udp_agree(spec, u, s.peer, s.here, s);
}

PeerFigures compare(const TestSpec& spec, const iperf3::Outcome& o) {
  PeerFigures p;
  p.peer = "iperf3";
  p.cpu_total = o.server.cpu_util_total;
  p.cpu_user = o.server.cpu_util_user;
  p.cpu_system = o.server.cpu_util_system;
  p.congestion = o.server.congestion_used;
  p.server_output = o.server.server_output_text;
  const bool omit = spec.warmup_s > 0;
  const bool udp = spec.proto == Proto::udp;
  p.margin_why = omit  ? "not compared: iperf3 leaves out its own warm-up (omit, by its clock), "
                         "this side its window's (by ours); the windows start apart"
                 : udp ? "UDP: the receiver took what was sent less the datagrams it lost (gaps "
                         "below its highest sequence) and the tail after it (lost at the end or "
                         "unread when it stopped counting), whole datagrams"
                       : "both count the whole test: equal";
  for (const FlowResult& c : o.test.client.flows) {
    PeerStream s;
    s.flow = c.id;
    s.peer_id = iperf3::stream_id(c.id);
    const bool sent = c.role == Role::sender;
    s.direction = sent ? "c2s" : "s2c";
    const CounterValues& mine = omit ? c.window : c.total;
    s.here = sent ? mine.bytes_sent : mine.bytes_recv;
    const iperf3::StreamResult* theirs = nullptr;
    for (const iperf3::StreamResult& r : o.server.streams) {
      if (r.id != s.peer_id) continue;
      theirs = &r;
      s.peer = r.bytes;
      if (!sent && r.retransmits >= 0 && o.server.sender_has_retransmits == 1)
        s.peer_retransmits = r.retransmits;
    }
    s.margin = omit ? std::max(s.here, s.peer) : 0;
    const uint64_t apart = s.here > s.peer ? s.here - s.peer : s.peer - s.here;
    s.agree = apart <= s.margin;
    if (udp && theirs) {
      if (sent)
        compare_udp(spec, c, *theirs, omit, s);
      else
        compare_udp_received(spec, c, *theirs, omit, s);
    }
    p.streams.push_back(s);
  }
  return p;
}

// The summary a peer that counts messages starts from (sockperf, perftest): one flow, a window
// of `seconds`, no CPU figures from the peer.
Summary message_summary(double seconds, bool interrupted, const char* peer, PeerFigures& p) {
  Summary s;
  s.window_s = seconds;
  s.interrupted = interrupted;
  s.flows_asked = 1;
  p.peer = peer;
  p.unit = "messages";
  p.has_cpu = false;
  return s;
}

// Request/response: `n` round trips of `size` bytes each way in `seconds`, and their latencies.
void round_trips(Summary& s, uint64_t n, uint32_t size, double seconds, Histogram& rtt) {
  s.transactions = n;
  s.transaction_rate = seconds > 0 ? double(n) / seconds : 0;
  s.throughput_c2s_bps = s.throughput_s2c_bps = seconds > 0 ? double(n) * size * 8 / seconds : 0;
  s.throughput_bps = s.throughput_c2s_bps + s.throughput_s2c_bps;
  if (rtt.count() > 0) s.latency = latency_of(rtt);
  s.latency_histogram = std::move(rtt);
}

// sockperf sr tells a client nothing, so the witness on this side is the pongs: each one is a
// message the server counted and answered. Over TCP every message asking for a pong gets it:
// equal. Over UDP a datagram lost either way costs its pong; those lost are counted and named.
// In a stream (throughput) no message asks for a pong: the server's count is only in what it
// prints when it exits ("Total N messages received and handled"), which equals the messages
// sent here (TCP: this side waits for the server to close the connection, having read it all).
Summary sockperf_summary(const TestSpec& spec, sockperf::Outcome& o, PeerFigures& p) {
  Summary s = message_summary(o.window_s, o.interrupted, "sockperf", p);
  if (kind_of(spec.workload).request_response) {
    const bool under_load = spec.rate_bps > 0;  // sockperf ul: most messages ask for nothing
    round_trips(s, o.window_pongs, o.msg_size, o.window_s, o.latency);
    if (under_load) {
      s.throughput_c2s_bps =
          o.window_s > 0 ? double(o.window_sent) * o.msg_size * 8 / o.window_s : 0;
      s.throughput_bps = s.throughput_c2s_bps + s.throughput_s2c_bps;
    }
    PeerStream st;
    st.direction = "c2s";
    st.here = o.pong_requests;
    st.peer = o.pongs;
    st.margin = o.lost;
    st.agree = o.pong_requests - o.pongs == o.lost;
    p.streams.push_back(st);
    p.margin_why = spec.proto == Proto::tcp
                       ? "messages asking for a pong, and the pongs sockperf sent back: equal"
                       : "messages asking for a pong, and the pongs sockperf sent back: apart by "
                         "the UDP datagrams lost either way";
    if (under_load)
      p.margin_why = std::to_string(o.sent) + " messages sent under load, one in " +
                     std::to_string(sockperf::kReplyEvery) + " asking for a pong; " + p.margin_why +
                     "; sockperf sr counts every message sent (it prints its total when it exits)";
  } else {
    s.throughput_c2s_bps = s.throughput_bps =
        o.window_s > 0 ? double(o.window_sent) * o.msg_size * 8 / o.window_s : 0;
    p.margin_why = std::to_string(o.sent) +
                   " messages sent; sockperf sr reports nothing to a client and prints its own "
                   "count ('Total N messages received and handled') when it exits" +
                   (spec.proto == Proto::tcp ? ": equal" : ": N is at most this, less UDP losses");
  }
  return s;
}

// Iterations of one peer test to the rule's end: `one()` runs a test and returns its summary,
// the peer's figures into `p`.
template <typename One>
Report iterate(const RunRequest& o, One one) {
  Report r;
  r.spec = o.spec;
  r.rule = o.rule;
  r.environment = environment_json(MTPERF_VERSION);
  std::vector<double> samples;
  for (int i = 0; i < o.rule.max_iterations; ++i) {
    PeerFigures p;
    Summary s = one(p);
    r.peer = std::move(p);
    r.iterations.push_back(std::move(s));
    samples.push_back(headline(o.spec, r.iterations.back()));
    if (iterations_done(samples, o.rule) || interrupts() > 0) break;
  }
  finish_report(r);
  return r;
}

Report run_sockperf(const RunRequest& o) {
  return iterate(o, [&](PeerFigures& p) {
    sockperf::Outcome out = sockperf::run_test(o.spec, o.client.server);
    Summary s = sockperf_summary(o.spec, out, p);
    for (const PeerStream& st : p.streams)
      if (!st.agree)
        s.errors.push_back("sockperf answered " + std::to_string(st.peer) + " of " +
                           std::to_string(st.here) + " messages asking for a pong, " +
                           std::to_string(st.margin) + " lost (" + p.margin_why + ")");
    return s;
  });
}

Report run_iperf3(const RunRequest& o) {
  return iterate(o, [&](PeerFigures& p) {
    iperf3::ClientSettings settings;
    settings.client_version = std::string("mtperf ") + MTPERF_VERSION;
    settings.get_server_output = o.peer_server_output;
    iperf3::Outcome out = iperf3::run_test(o.spec, o.client, settings);
    Summary s = summarize(o.spec, out.test);
    p = compare(o.spec, out);
    for (const PeerStream& st : p.streams)
      if (!st.agree)
        s.errors.push_back("flow " + std::to_string(st.flow) + ": iperf3 counted " +
                           std::to_string(st.peer) + " bytes, this side " +
                           std::to_string(st.here) + " (" + p.margin_why + ")");
    return s;
  });
}

// ", perftest": the peers a transport of this build speaks itself, for the errors.
std::string foreign_names() {
  std::string s;
  for (const TransportEntry& e : transports())
    if (e.foreign && s.find(std::string(e.foreign->peer)) == std::string::npos)
      s += ", " + std::string(e.foreign->peer);
  return s;
}

// A peer whose data phase a transport runs itself (transports/api/foreign_peer.hpp): the hook of
// the transport asked for (-T) when it speaks `peer`, else nullptr; `speakers` lists the
// transports that do.
const ForeignPeerHook* foreign_hook(const std::string& peer, const std::string& transport,
                                    std::string& speakers) {
  const ForeignPeerHook* hook = nullptr;
  for (const TransportEntry& e : transports()) {
    if (!e.foreign || e.foreign->peer != peer) continue;
    speakers += (speakers.empty() ? "-T " : ", -T ") + std::string(e.name);
    if (e.name == transport) hook = e.foreign;
  }
  return hook;
}

ForeignTest foreign_test(const RunRequest& o, const ForeignPeerHook& hook) {
  const WorkloadKind& k = kind_of(o.spec.workload);
  ForeignTest t;
  t.server = o.client.server;
  t.request_response = k.request_response;
  t.server_sends = k.server_sends();
  t.size = k.request_response ? o.spec.req_size : o.spec.stream_msg_size();
  t.count = o.count > 0 ? o.count : hook.default_count;
  t.params = o.spec.transport_params;
  return t;
}

void check_foreign(const RunRequest& o, const ForeignPeerHook& hook) {
  const WorkloadKind& k = kind_of(o.spec.workload);
  auto refuse = [&](const std::string& why) {
    throw RequestError("option --peer " + o.peer + ": " + why);
  };
  if (k.per_transaction || !(k.request_response || k.one_way()))
    refuse("workload " + std::string(k.name) +
           " has no program there (stream and maerts run its bandwidth programs, rr its latency "
           "ones)");
  if (o.spec.flows != 1) refuse("one flow (-P 1): its servers serve one queue pair");
  if (k.request_response && o.spec.req_size != o.spec.resp_size)
    refuse("a round trip is one size both ways (-r SIZE)");
  if (o.spec.burst != 1) refuse("one round trip in flight (no --burst)");
  if (o.rule.max_iterations > 1) refuse("its servers serve one test and exit (-i 1)");
  if (o.spec.verify_seed != 0) refuse("its servers do not check payloads (--verify)");
  if (std::string why = hook.refusal(foreign_test(o, hook)); !why.empty()) refuse(why);
}

// What the transport measured. perftest's servers tell the client nothing of their counts (the
// report a passive write_bw or read_bw server sends back is one it never filled): those are in
// what they print when they exit, which `witness` names.
Summary foreign_summary(const ForeignTest& t, ForeignOutcome& out, PeerFigures& p) {
  Summary s = message_summary(out.seconds, out.interrupted, "perftest", p);
  if (t.request_response) {
    round_trips(s, out.completed, t.size, out.seconds, out.rtt);
  } else {
    const double bits = out.seconds > 0 ? double(out.completed) * t.size * 8 / out.seconds : 0;
    (t.server_sends ? s.throughput_s2c_bps : s.throughput_c2s_bps) = bits;
    s.throughput_bps = bits;
  }
  p.margin_why = out.program + " " + out.peer_version + " over " + out.settings + "; " +
                 std::to_string(out.completed) + " of " + std::to_string(t.count) +
                 (t.request_response ? " round trips" : " messages") + " completed here; " +
                 out.witness;
  return s;
}

Report run_foreign(const RunRequest& o) {
  std::string speakers;
  const ForeignPeerHook& hook = *foreign_hook(o.peer, o.spec.transport, speakers);
  const ForeignTest t = foreign_test(o, hook);
  if (!o.quiet)
    std::fprintf(stderr, "mtperf: %s's server must run as: %s\n", o.peer.c_str(),
                 hook.server_command(t).c_str());
  return iterate(o, [&](PeerFigures& p) {
    ForeignOutcome out = hook.run(t);
    Summary s = foreign_summary(t, out, p);
    if (out.completed != t.count && !out.interrupted)
      s.errors.push_back(std::to_string(out.completed) + " of " + std::to_string(t.count) +
                         " completed");
    return s;
  });
}

}  // namespace

void check_peer_request(const RunRequest& o) {
  if (o.peer.empty() && o.count == 0)
    throw RequestError("option --get-server-output: only with --peer iperf3");
  if (o.peer.empty())
    throw RequestError("option --count: only with a peer whose servers count iterations (--peer" +
                       foreign_names().substr(1) + "); mtperf's own runs are timed (-l)");
  std::string speakers;
  const ForeignPeerHook* foreign = foreign_hook(o.peer, o.spec.transport, speakers);
  if (o.peer != "iperf3" && o.peer != "sockperf" && speakers.empty())
    throw RequestError("option --peer: '" + o.peer +
                       "' is not a peer mtperf speaks (iperf3, sockperf" + foreign_names() + ")");
  if (o.embedded)
    throw RequestError("option --peer: give the " + o.peer + " server's address with -H");
  if (o.testbed || o.placement)
    throw RequestError("option --peer: " + o.peer +
                       " runs against -H alone (no --testbed, --adapters)");
  if (!o.client.key.empty())
    throw RequestError("option --peer: " + o.peer + " takes no key (--key-file, MTPERF_KEY)");
  if (!speakers.empty() && !foreign)
    throw RequestError("option --peer: " + o.peer + "'s servers are spoken to by " + speakers);
  if (o.peer_server_output && o.peer != "iperf3")
    throw RequestError(
        "option --get-server-output: only with --peer iperf3 (its server keeps "
        "its own report of the test; " +
        o.peer + "'s does not send one)");
  if (o.count > 0 && !foreign)
    throw RequestError("option --count: only with a peer whose servers count iterations (--peer" +
                       foreign_names() + "); mtperf's own runs are timed (-l)");
  if (foreign)
    check_foreign(o, *foreign);
  else if (o.peer == "sockperf")
    sockperf::check_request(o.spec);
  else
    iperf3::check_request(o.spec);
}

Report run_with_peer(const RunRequest& o) {
  check_peer_request(o);
  if (o.peer == "sockperf") return run_sockperf(o);
  return o.peer == "iperf3" ? run_iperf3(o) : run_foreign(o);
}

}  // namespace mtperf
