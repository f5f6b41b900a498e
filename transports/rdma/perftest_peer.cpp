// The rdma transport's side of `mtperf run --peer perftest -T rdma -H HOST` (transports/api/
// foreign_peer.hpp): the test asked for as one of perftest's programs, the TCP connection to its
// port, and the test itself (verbs/perftest_run.hpp).
#include "transports/rdma/perftest_peer.hpp"

#include <fcntl.h>

#include <algorithm>

#include <stdexcept>
#include <utility>

#include "transports/api/control_socket.hpp"
#include "transports/rdma/settings.hpp"
#include "verbs/perftest_run.hpp"
#include "verbs/tcp_exact.hpp"

namespace mtperf::rdma {

namespace {

using perftest::Program;

// The -O keys a perftest test reads; the others (srq, recv_depth) shape mtperf's own engine.
constexpr std::string_view kKeys[] = {"verb", "inline",      "signal",    "tx_depth",
                                      "tos",  "ack_timeout", "gid_index", "connect"};

Program program_of(const ForeignTest& t, Verb v) {
  if (t.request_response) return v == Verb::write ? Program::write_lat : Program::send_lat;
  return v == Verb::write  ? Program::write_bw
         : v == Verb::read ? Program::read_bw
                           : Program::send_bw;
}

std::string refusal(const ForeignTest& t) {
  RdmaSettings s;
  try {
    s = parse_rdma_settings(t.params);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  for (const auto& [key, value] : t.params)
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys))
      return "option -O " + key +
             ": not read against perftest's servers (they take -O verb, "
             "inline, signal, tx_depth, tos, ack_timeout, gid_index)";
  if (s.connect == ConnectMode::cm && t.params.count("connect"))
    return "option -O connect=cm: perftest's servers without -R exchange keys over TCP "
           "(connect=oob, the only way with --peer perftest)";
  if (s.verb == Verb::write_imm)
    return "option -O verb=write_imm: perftest has no program for it (send, write, read)";
  if (t.request_response && s.verb == Verb::read)
    return "option -O verb=read: rr runs ib_send_lat (verb=send) or ib_write_lat (verb=write)";
  if (!t.request_response && (s.verb == Verb::read) != t.server_sends)
    return s.verb == Verb::read
               ? "ib_read_bw's client reads the server's memory, so the data comes from the "
                 "server: -w maerts -O verb=read"
               : "ib_send_bw and ib_write_bw's client sends: -w stream (maerts is -O verb=read)";
  if (t.size < 1 || t.size > kPerftestMaxSize)
    return "a message of " + std::to_string(t.size) + " bytes is outside 1..16M";
  if (t.count < 1 || t.count > kPerftestMaxIters)
    return "--count " + std::to_string(t.count) + " is outside 1..1,000,000,000";
  return "";
}

PerftestAsk ask_of(const ForeignTest& t) {
  PerftestAsk a;
  a.settings = parse_rdma_settings(t.params);
  a.program = program_of(t, a.settings.verb);
  a.size = t.size;
  a.iters = t.count;
  a.timeout_ns = int64_t(t.timeout_s * 1e9);
  return a;
}

std::string server_command(const ForeignTest& t) {
  PerftestAsk a = ask_of(t);
  const bool bw = a.program != Program::send_lat && a.program != Program::write_lat;
  return perftest::server_command(
      a.program, a.iters, a.size, a.settings.gid_index,
      bw && a.settings.tx_depth != kTxDepthDefault ? int(a.settings.tx_depth) : 0);
}

ForeignOutcome run(const ForeignTest& t) {
  const PerftestAsk a = ask_of(t);
  const SockAddr server = control_socket::resolve(t.server, perftest::kDefaultPort);
  Fd fd(control_socket::connect(server, int(t.timeout_s * 1000)));
  ::fcntl(fd.fd, F_SETFL, ::fcntl(fd.fd, F_GETFL) | O_NONBLOCK);
  PerftestRun r = run_perftest(real_verbs(), fd.fd, "perftest at " + server.to_string(), a);
  ForeignOutcome o;
  o.program = "ib_" + std::string(perftest::to_string(a.program));
  o.peer_version = r.peer_version;
  o.settings = r.device + ", GID index " + std::to_string(r.gid_index) + ", path MTU " +
               std::to_string(r.path_mtu);
  o.witness = a.program == Program::write_bw || a.program == Program::read_bw
                  ? "its server is passive (one-sided verbs: it counts nothing) and prints the "
                    "report this side sent it when it exits"
                  : "its server counts what it received and prints it (#iterations) when it exits";
  o.completed = r.completed;
  o.seconds = double(std::max<int64_t>(r.last_ns - r.first_ns, 0)) / 1e9;
  o.rtt = std::move(r.rtt);
  o.interrupted = r.interrupted;
  return o;
}

}  // namespace

const ForeignPeerHook& perftest_hook() {
  static const ForeignPeerHook hook{.peer = "perftest",
                                    .default_port = perftest::kDefaultPort,
                                    .default_count = 1000,  // perftest's DEF_ITERS
                                    .refusal = refusal,
                                    .server_command = server_command,
                                    .run = run};
  return hook;
}

}  // namespace mtperf::rdma
