#include "fleet/coordinator.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <stdexcept>

#include "control/protocol.hpp"
#include "fleet/net.hpp"
#include "fleet/protocol.hpp"
#include "platform/clock.hpp"
#include "workloads/json_field.hpp"

namespace mtperf::fleet {
namespace jf = json_field;
using control::Message;
using control::MsgType;
using nlohmann::json;

namespace {

bool is_loopback(const std::string& a) {
  return a.rfind("127.", 0) == 0 || a == "::1";
}

}  // namespace

struct Coordinator::Impl {
  struct Conn {
    int fd = -1;
    int64_t offset_ns = 0;  // the rank's realtime clock minus ours
    int64_t rtt_ns = 0;
    std::string peer, local;  // the connection's addresses
  };

  CoordinatorOptions opts;
  const std::atomic<bool>& stop;
  int listen_fd = -1;
  std::vector<Conn> conns;  // by rank
  FleetDoc doc;

  Impl(CoordinatorOptions o, const std::atomic<bool>& s) : opts(std::move(o)), stop(s) {
    listen_fd = listen_tcp(opts.bind, opts.port);
    conns.resize(opts.size);
    doc.roster.resize(opts.size);
    for (uint32_t r = 0; r < opts.size; ++r)
      doc.roster[r].rank = r;
    doc.transports = opts.transports;
    doc.test = opts.test;
    doc.workload = opts.workload;
    doc.headline = opts.headline;
    doc.concurrency = opts.concurrency;
    doc.launcher = opts.launcher;
    doc.launcher_why = opts.launcher_why;
  }
  ~Impl() {
    for (Conn& c : conns)
      if (c.fd >= 0) close(c.fd);
    if (listen_fd >= 0) close(listen_fd);
  }

  std::string name(uint32_t rank) const {
    const Member& m = doc.roster[rank];
    return "rank " + std::to_string(rank) + (m.host.empty() ? "" : " (" + m.host + ")");
  }

  void lose(uint32_t rank, const std::string& why) {
    Conn& c = conns[rank];
    if (c.fd >= 0) {
      close(c.fd);
      c.fd = -1;
    }
    if (doc.roster[rank].lost.empty()) {
      doc.roster[rank].lost = why;
      doc.errors.push_back(name(rank) + " lost: " + why);
    }
  }

  bool live(uint32_t rank) const { return conns[rank].fd >= 0; }

  // Why a pair with this rank cannot run ("" when it can).
  std::string absent(uint32_t rank) const {
    const Member& m = doc.roster[rank];
    if (!m.joined) return name(rank) + " never joined";
    if (!m.lost.empty()) return name(rank) + " lost: " + m.lost;
    return "";
  }

  void handshake(int fd) {
    const int64_t deadline = control::deadline_in(kHandshakeTimeoutMs);
    Message hello = control::expect_until(fd, MsgType::hello, control::kMaxRequestBody, deadline);
    if (!hello.body.contains("fleet"))
      throw control::ProtocolError("a HELLO without \"fleet\": not an mtperf fleet rank");
    json welcome = {{"version", control::kVersion}};
    std::string challenge;
    if (!opts.key.empty()) {
      challenge = control::random_hex(16);
      welcome["challenge"] = challenge;
    }
    control::send_message_until(fd, {MsgType::welcome, welcome}, deadline);
    Message join = control::expect_until(fd, MsgType::join, control::kMaxRequestBody, deadline);
    const json& mj = join.body.at("member");
    if (!opts.key.empty()) {
      std::string mac;
      jf::optional(join.body, "join", "mac", mac);
      if (!control::mac_matches(mac, join_mac(opts.key, challenge, mj)))
        throw control::ProtocolError("authentication failed (wrong or missing key)");
    }
    Member m = member_from_json(mj, "join.member");
    if (m.rank >= opts.size)
      throw control::ProtocolError("rank " + std::to_string(m.rank) + " is outside the fleet of " +
                                   std::to_string(opts.size));
    if (doc.roster[m.rank].joined)
      throw control::ProtocolError("rank " + std::to_string(m.rank) + " has joined already (from " +
                                   doc.roster[m.rank].host + ")");
    if (join.body.value("test", json()) != opts.test)
      throw control::ProtocolError("rank " + std::to_string(m.rank) +
                                   "'s test differs from rank 0's (give every rank the same "
                                   "options)");
    Conn& c = conns[m.rank];
    c.fd = fd;
    c.peer = peer_host(fd);
    c.local = local_host(fd);
    if (m.address.empty()) m.address = c.peer;
    m.joined = true;
    doc.roster[m.rank] = std::move(m);
  }

  uint32_t accept_joins() {
    const int64_t deadline = control::deadline_in(opts.join_timeout_ms);
    uint32_t joined = 0;
    while (joined < opts.size && !stop) {
      const int64_t left_ms = (deadline - control::monotonic_ns()) / 1000000;
      if (left_ms <= 0) break;
      int fd = accept_within(listen_fd, int(std::min<int64_t>(left_ms, 200)));
      if (fd < 0) continue;
      const std::string from = peer_host(fd);
      try {
        handshake(fd);
        ++joined;
      } catch (const std::exception& e) {
        doc.errors.push_back("a rank connecting from " + from + " was refused: " + e.what());
        try {
          control::send_message(fd, {MsgType::error, {{"message", e.what()}}}, 1000);
        } catch (const std::exception&) {
        }
        close(fd);
      }
    }
    for (uint32_t r = 0; r < opts.size; ++r)
      if (!doc.roster[r].joined)
        doc.errors.push_back("rank " + std::to_string(r) + " never joined (within " +
                             std::to_string(opts.join_timeout_ms / 1000) + " s, --join-timeout)");
    return joined;
  }

  // Rank 0 joins over loopback: the others reach it at the address they connected to.
  void fill_loopback_addresses() {
    std::string outward;
    for (const Conn& c : conns)
      if (c.fd >= 0 && !is_loopback(c.local)) outward = c.local;
    if (outward.empty()) return;
    for (uint32_t r = 0; r < opts.size; ++r)
      if (doc.roster[r].joined && is_loopback(doc.roster[r].address) && is_loopback(conns[r].peer))
        doc.roster[r].address = outward;
  }

  void sync_clocks() {
    for (uint32_t r = 0; r < opts.size; ++r) {
      if (!live(r)) continue;
      Conn& c = conns[r];
      try {
        int64_t best_rtt = INT64_MAX;
        for (int i = 0; i < 3; ++i) {
          const int64_t t0 = realtime_ns();
          control::send_message(c.fd, {MsgType::clock, json::object()}, kHandshakeTimeoutMs);
          Message m =
              control::expect(c.fd, MsgType::clock, control::kMaxRequestBody, kHandshakeTimeoutMs);
          const int64_t t1 = realtime_ns();
          const int64_t theirs = jf::required<int64_t>(m.body, "clock", "now_ns");
          if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            c.offset_ns = theirs - (t0 + t1) / 2;
          }
        }
        c.rtt_ns = best_rtt;
        doc.clock_offset_max_ns = std::max(doc.clock_offset_max_ns, std::fabs(double(c.offset_ns)));
      } catch (const std::exception& e) {
        lose(r, std::string("during the clock exchange: ") + e.what());
      }
    }
  }

  Plan make() {
    if (opts.pairs_text.empty()) return make_plan(opts.pattern, opts.size);
    std::vector<std::string> hosts;
    for (const Member& m : doc.roster)
      hosts.push_back(m.host);
    return parse_pairs(opts.pairs_text, hosts, opts.pairs_name);
  }

  void send_all(MsgType type, const json& body) {
    for (uint32_t r = 0; r < opts.size; ++r) {
      if (!live(r)) continue;
      try {
        control::send_message(conns[r].fd, {type, body}, kHandshakeTimeoutMs);
      } catch (const std::exception& e) {
        lose(r, e.what());
      }
    }
  }

  json roster_json() const {
    json roster = json::array();
    for (const Member& m : doc.roster)
      roster.push_back(to_json(m));
    return roster;
  }

  // Sends ROUND, waits for every live rank's RESULTS; the step's results, in the step's order.
  std::vector<PairResult> run_step(const Step& s, uint32_t step_no) {
    std::vector<PairResult> out(s.pairs.size());
    std::vector<json> runs(opts.size, json::array());
    for (size_t i = 0; i < s.pairs.size(); ++i) {
      PairResult& r = out[i];
      r.step = step_no;
      r.round = s.round;
      r.transport = s.transport;
      r.pair = s.pairs[i];
      std::string why = absent(r.pair.src);
      if (why.empty()) why = absent(r.pair.dst);
      if (!why.empty()) {
        r.error = why;
        continue;
      }
      const Member& dst = doc.roster[r.pair.dst];
      runs[r.pair.src].push_back({{"index", i},
                                  {"transport", s.transport},
                                  {"dst", r.pair.dst},
                                  {"server", join_host_port(dst.address, dst.port)}});
    }
    int64_t max_rtt = 0;
    for (const Conn& c : conns)
      if (c.fd >= 0) max_rtt = std::max(max_rtt, c.rtt_ns);
    const int64_t start = realtime_ns() + int64_t(opts.start_delay_ms) * 1000000 + 4 * max_rtt;
    std::vector<bool> waiting(opts.size, false);
    for (uint32_t r = 0; r < opts.size; ++r) {
      if (!live(r)) continue;
      json body = {{"step", step_no}, {"start_ns", start + conns[r].offset_ns}, {"runs", runs[r]}};
      try {
        control::send_message(conns[r].fd, {MsgType::round, body}, kHandshakeTimeoutMs);
        waiting[r] = true;
      } catch (const std::exception& e) {
        lose(r, e.what());
      }
    }
    const int64_t deadline = control::deadline_in(opts.start_delay_ms + opts.pair_timeout_ms);
    std::vector<int64_t> starts;
    while (!stop) {
      std::vector<pollfd> fds;
      std::vector<uint32_t> ranks;
      for (uint32_t r = 0; r < opts.size; ++r) {
        if (waiting[r] && live(r)) {
          fds.push_back({conns[r].fd, POLLIN, 0});
          ranks.push_back(r);
        }
      }
      if (fds.empty()) break;
      const int64_t left_ms = (deadline - control::monotonic_ns()) / 1000000;
      if (left_ms <= 0) {
        for (uint32_t r : ranks)
          lose(r, "no RESULTS of step " + std::to_string(step_no) + " within " +
                      std::to_string((opts.start_delay_ms + opts.pair_timeout_ms) / 1000) +
                      " s (--pair-timeout)");
        break;
      }
      if (poll(fds.data(), fds.size(), int(std::min<int64_t>(left_ms, 200))) <= 0) continue;
      for (size_t k = 0; k < fds.size(); ++k) {
        if (!fds[k].revents) continue;
        const uint32_t r = ranks[k];
        waiting[r] = false;
        try {
          Message m = control::expect_until(conns[r].fd, MsgType::results, kMaxFleetBody, deadline);
          take_results(r, m.body, step_no, out, start, starts);
        } catch (const std::exception& e) {
          lose(r, e.what());
        }
      }
    }
    for (PairResult& r : out) {
      if (r.ok || !r.error.empty()) continue;
      std::string why = absent(r.pair.src);
      r.error = why.empty() ? (stop ? "interrupted" : "no result came back") : why;
    }
    StepTiming t{step_no,        s.round,      s.transport,
                 s.pairs.size(), std::nullopt, double(realtime_ns() - start) / 1e9};
    if (starts.size() > 1) {
      auto [lo, hi] = std::minmax_element(starts.begin(), starts.end());
      t.start_spread_ns = *hi - *lo;
    }
    doc.steps.push_back(t);
    return out;
  }

  void take_results(uint32_t rank, const json& body, uint32_t step_no, std::vector<PairResult>& out,
                    int64_t start, std::vector<int64_t>& starts) {
    if (jf::required<uint32_t>(body, "results", "step") != step_no)
      throw control::ProtocolError("RESULTS of another step");
    const json& list = body.at("results");
    if (!list.is_array() || list.size() > kMaxRunsPerRank)
      throw control::ProtocolError("RESULTS.results: not a list of at most " +
                                   std::to_string(kMaxRunsPerRank));
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string where = "results[" + std::to_string(i) + "]";
      const size_t index = jf::required<size_t>(list[i], where, "index");
      if (index >= out.size() || out[index].pair.src != rank)
        throw control::ProtocolError(where + ".index: not a run this rank was given");
      PairResult r = pair_result_from_json(list[i].at("result"), where + ".result");
      r.step = out[index].step;
      r.round = out[index].round;
      r.transport = out[index].transport;
      r.pair = out[index].pair;
      if (auto it = list[i].find("started_ns"); it != list[i].end() && !it->is_null()) {
        const int64_t ours = jf::value<int64_t>(*it, where + ".started_ns") - conns[rank].offset_ns;
        r.start_offset_ns = ours - start;
        starts.push_back(ours);
      }
      out[index] = std::move(r);
    }
  }

  void finish(bool ok, const std::string& why) {
    for (uint32_t r = 0; r < opts.size; ++r) {
      if (!live(r)) continue;
      try {
        if (ok)
          control::send_message(conns[r].fd, {MsgType::finish, {{"ok", true}}}, 2000);
        else
          control::send_message(conns[r].fd, {MsgType::error, {{"message", why}}}, 2000);
      } catch (const std::exception&) {
      }
      close(conns[r].fd);
      conns[r].fd = -1;
    }
  }

  bool must_end() const {
    if (!opts.need_all) return false;
    for (const Member& m : doc.roster)
      if (!m.joined || !m.lost.empty()) return true;
    return false;
  }

  FleetDoc run() {
    const uint32_t joined = accept_joins();
    if (stop || joined < 2 || must_end()) {
      const std::string why = stop         ? "interrupted"
                              : joined < 2 ? "fewer than 2 ranks joined"
                                           : "a rank is missing (--need-all)";
      doc.errors.push_back("the fleet did not start: " + why);
      finish(false, "the fleet did not start: " + why);
      return std::move(doc);
    }
    fill_loopback_addresses();
    sync_clocks();
    try {
      doc.plan = make();
    } catch (const std::exception& e) {
      doc.errors.push_back(e.what());
      finish(false, e.what());
      return std::move(doc);
    }
    const auto steps = schedule(doc.plan, uint32_t(opts.transports.size()), opts.concurrency);
    const int wait_ms = opts.start_delay_ms + opts.pair_timeout_ms + kHandshakeTimeoutMs;
    send_all(MsgType::roster, {{"roster", roster_json()},
                               {"pattern", doc.plan.pattern},
                               {"steps", steps.size()},
                               {"wait_ms", wait_ms}});
    uint32_t step_no = 0;
    for (const Step& s : steps) {
      if (stop || must_end()) break;
      for (PairResult& r : run_step(s, step_no++))
        doc.results.push_back(std::move(r));
    }
    if (opts.retest && !stop && !must_end()) {
      for (size_t i : opts.retest(doc)) {
        if (i >= doc.results.size() || stop) continue;
        const PairResult& old = doc.results[i];
        Step s{old.round, old.transport, {old.pair}};
        PairResult again = run_step(s, step_no++).front();
        again.tries = old.tries + 1;
        doc.results[i] = std::move(again);
      }
    }
    doc.complete = !stop && step_no >= steps.size() && !must_end();
    const std::string why = stop ? "interrupted" : "a rank is missing (--need-all)";
    if (!doc.complete) doc.errors.push_back("the fleet ended early: " + why);
    finish(doc.complete, "the fleet ended early: " + why);
    return std::move(doc);
  }
};

Coordinator::Coordinator(CoordinatorOptions o)
    : impl_(std::make_unique<Impl>(std::move(o), stop_)) {}
Coordinator::~Coordinator() = default;
uint16_t Coordinator::port() const {
  return local_port(impl_->listen_fd);
}
FleetDoc Coordinator::run() {
  return impl_->run();
}

}  // namespace mtperf::fleet
