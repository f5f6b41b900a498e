#include "harness/peer_run.hpp"

#include "peers/iperf3/client.hpp"
#include "platform/interrupt.hpp"
#include "platform/request_error.hpp"
#include "report/render.hpp"

namespace mtperf {
namespace {

// The counts of bytes that crossed, compared stream by stream. Without a warm-up both sides
// count the whole test: what iperf3 sent (maerts) this side reads to the end, exactly; what this
// side sent (stream) iperf3 counts until TEST_END, which goes out only once every byte and the
// FIN were acknowledged and the server had 50 ms to read them, so they agree exactly unless the
// server fell that far behind. With a warm-up iperf3 leaves out what it received or sent in its
// own `omit` seconds, timed by its clock, and this side its window's: they agree within 10% (what
// is in flight at either edge counts on one side only).
PeerFigures compare(const TestSpec& spec, const iperf3::Outcome& o) {
  PeerFigures p;
  p.peer = "iperf3";
  p.cpu_total = o.server.cpu_util_total;
  p.cpu_user = o.server.cpu_util_user;
  p.cpu_system = o.server.cpu_util_system;
  p.congestion = o.server.congestion_used;
  const bool omit = spec.warmup_s > 0;
  p.margin_why = omit ? "iperf3 leaves out its own warm-up (omit), this side its window's: "
                        "within 10%"
                      : "both count the whole test: equal";
  for (const FlowResult& c : o.test.client.flows) {
    PeerStream s;
    s.flow = c.id;
    s.peer_id = iperf3::stream_id(c.id);
    const bool sent = c.role == Role::sender;
    s.direction = sent ? "c2s" : "s2c";
    const CounterValues& mine = omit ? c.window : c.total;
    s.here = sent ? mine.bytes_sent : mine.bytes_recv;
    for (const iperf3::StreamResult& r : o.server.streams) {
      if (r.id != s.peer_id) continue;
      s.peer = r.bytes;
      if (!sent && r.retransmits >= 0 && o.server.sender_has_retransmits == 1)
        s.peer_retransmits = r.retransmits;
    }
    s.margin = omit ? std::max(s.here, s.peer) / 10 : 0;
    const uint64_t apart = s.here > s.peer ? s.here - s.peer : s.peer - s.here;
    s.agree = apart <= s.margin;
    p.streams.push_back(s);
  }
  return p;
}

}  // namespace

void check_peer_request(const RunRequest& o) {
  if (o.peer != "iperf3")
    throw RequestError("option --peer: '" + o.peer + "' is not a peer mtperf speaks (iperf3)");
  if (o.embedded) throw RequestError("option --peer: give the iperf3 server's address with -H");
  if (o.testbed || o.placement)
    throw RequestError("option --peer: iperf3 runs against -H alone (no --testbed, --adapters)");
  if (!o.client.key.empty()) throw RequestError("option --peer: iperf3 takes no --key");
  iperf3::check_request(o.spec);
}

Report run_with_peer(const RunRequest& o) {
  check_peer_request(o);
  Report r;
  r.spec = o.spec;
  r.rule = o.rule;
  r.environment = environment_json(MTPERF_VERSION);
  std::vector<double> samples;
  for (int i = 0; i < o.rule.max_iterations; ++i) {
    iperf3::ClientSettings settings;
    settings.client_version = std::string("mtperf ") + MTPERF_VERSION;
    iperf3::Outcome out = iperf3::run_test(o.spec, o.client, settings);
    Summary s = summarize(o.spec, out.test);
    PeerFigures p = compare(o.spec, out);
    for (const PeerStream& st : p.streams) {
      if (!st.agree)
        s.errors.push_back("flow " + std::to_string(st.flow) + ": iperf3 counted " +
                           std::to_string(st.peer) + " bytes, this side " +
                           std::to_string(st.here) + " (" + p.margin_why + ")");
    }
    r.peer = std::move(p);
    r.iterations.push_back(std::move(s));
    samples.push_back(headline(o.spec, r.iterations.back()));
    if (iterations_done(samples, o.rule) || interrupts() > 0) break;
  }
  finish_report(r);
  return r;
}

}  // namespace mtperf
