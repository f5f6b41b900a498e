#include "fleet/coordinator.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "control/link.hpp"
#include "control/protocol.hpp"
#include "fleet/group_plan.hpp"
#include "fleet/line.hpp"
#include "fleet/net.hpp"
#include "fleet/protocol.hpp"
#include "fleet/retest.hpp"
#include "platform/clock.hpp"
#include "platform/link_line.hpp"
#include "workloads/json_field.hpp"

namespace mtperf::fleet {
namespace jf = json_field;
using control::Message;
using control::MsgType;
using nlohmann::json;

namespace {

// Joins in their handshake at once beyond the fleet's own ranks: past the fleet's size plus
// this, the oldest is dropped (a rank retries its JOIN).
constexpr size_t kMaxStrangerJoins = 1024;
// Refused connections named one by one in the document and on stderr; the rest are counted.
constexpr size_t kNamedRefusals = 64;

// A connection between accept and its JOIN: one state machine each, driven by poll, so that
// idle or slow connections hold up no one.
struct Pending {
  std::unique_ptr<control::Link> link;
  std::string from;
  int64_t deadline_ns = 0;
  bool welcomed = false;
  std::string nonce, challenge;
};

// Ranks from which a ROUND's sends are split among threads, and at most how many.
constexpr uint32_t kThreadedSendRanks = 256;
constexpr unsigned kMaxSendThreads = 4;

// Calls fn(from, to) over [0, n) in contiguous parts, one per thread (this one included) where
// n is large enough and the host has the cores; on this thread alone otherwise, or where a
// thread cannot be started. fn must not throw.
template <class Fn>
void split_among_threads(uint32_t n, Fn&& fn) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned parts = n < kThreadedSendRanks ? 1 : std::min(cores, kMaxSendThreads);
  std::vector<std::thread> threads;
  uint32_t from = 0;
  for (unsigned k = 1; k < parts; ++k) {
    const uint32_t to = uint32_t(uint64_t(n) * k / parts);
    try {
      threads.emplace_back([&fn, from, to] { fn(from, to); });
      from = to;
    } catch (const std::system_error&) {
      break;  // the rest on this thread
    }
  }
  fn(from, n);
  for (std::thread& t : threads)
    t.join();
}

}  // namespace

struct Coordinator::Impl {
  struct Conn {
    std::unique_ptr<control::Link> link;  // sealed once the JOIN is proven (with a key)
    int64_t offset_ns = 0;                // the rank's realtime clock minus ours
    int64_t rtt_ns = 0;
    std::string peer, local;  // the connection's addresses
  };

  CoordinatorOptions opts;
  const std::atomic<bool>& stop;
  int listen_fd = -1;
  std::vector<Conn> conns;  // by rank
  FleetDoc doc;
  bool fd_limit_named = false;
  size_t refused = 0;  // connections refused before their JOIN was taken

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
    doc.line_rate_bps = opts.line_rate_bps;
  }
  ~Impl() {
    for (Conn& c : conns)
      if (c.link) close(c.link->fd());
    if (listen_fd >= 0) close(listen_fd);
  }

  std::string name(uint32_t rank) const {
    const Member& m = doc.roster[rank];
    return "rank " + std::to_string(rank) + (m.host.empty() ? "" : " (" + m.host + ")");
  }

  void lose(uint32_t rank, const std::string& why) {
    Conn& c = conns[rank];
    if (c.link) {
      close(c.link->fd());
      c.link.reset();
    }
    if (doc.roster[rank].lost.empty()) {
      doc.roster[rank].lost = why;
      doc.errors.push_back(name(rank) + " lost: " + why);
    }
  }

  bool live(uint32_t rank) const { return conns[rank].link != nullptr; }

  // Why a pair with this rank cannot run ("" when it can).
  std::string absent(uint32_t rank) const {
    const Member& m = doc.roster[rank];
    if (!m.joined) return name(rank) + " never joined";
    if (!m.lost.empty()) return name(rank) + " lost: " + m.lost;
    return "";
  }

  // HELLO: with a key, the coordinator proves it first, over the rank's nonce and its challenge.
  void welcome(Pending& p, const Message& hello) {
    if (!hello.body.contains("fleet"))
      throw control::ProtocolError("a HELLO without \"fleet\": not an mtperf fleet rank");
    json w = {{"version", control::kVersion}};
    if (!opts.key.empty()) {
      p.nonce = control::nonce_field(hello.body, "nonce", "HELLO");
      p.challenge = control::random_hex(16);
      w["challenge"] = p.challenge;
      w["proof"] = control::prove(opts.key, "coordinator", p.nonce, p.challenge);
    }
    // A few hundred bytes into a new connection's empty send buffer: never waits.
    control::send_message(*p.link, {MsgType::welcome, w}, 1000);
    p.welcomed = true;
  }

  // JOIN: the rank proven (with a key), of this job and this test, at the address it connected
  // from; its connection sealed from here on. Returns its rank.
  uint32_t admit(Pending& p, const Message& join) {
    const json& mj = join.body.at("member");
    if (!opts.key.empty()) {
      std::string mac;
      jf::optional(join.body, "join", "mac", mac);
      if (!control::mac_matches(mac, join_mac(opts.key, p.challenge, mj)))
        throw control::ProtocolError("authentication failed (wrong or missing key)");
      // Proven: from here on, a refusal too is sealed, so the rank can trust it.
      p.link->seal(opts.key, false, p.nonce, p.challenge);
    }
    Member m = member_from_json(mj, "join.member");
    const std::string who = "rank " + std::to_string(m.rank);
    if (m.rank >= opts.size)
      throw control::ProtocolError(who + " is outside the fleet of " + std::to_string(opts.size));
    std::string job;
    jf::optional(join.body, "join", "job", job);
    if (job != opts.job)
      throw control::ProtocolError(who + " is of job '" + (job.empty() ? "-" : job) +
                                   "', this fleet is job '" + (opts.job.empty() ? "-" : opts.job) +
                                   "'");
    if (doc.roster[m.rank].joined)
      throw control::ProtocolError(who + " has joined already (from " + doc.roster[m.rank].host +
                                   ")");
    if (join.body.value("test", json()) != opts.test)
      throw control::ProtocolError(who +
                                   "'s test differs from rank 0's (give every rank the same "
                                   "options)");
    const std::string peer = peer_host(p.link->fd());
    // Traffic only toward the roster: the address other ranks will be sent to is the one this
    // rank's connection came from (it binds its connection to the address it declares).
    if (!m.address.empty() && m.address != peer && !(is_loopback(m.address) && is_loopback(peer)))
      throw control::ProtocolError(who + " declares the address " + m.address +
                                   " but connected from " + peer +
                                   ": refused (a rank's server must be at the address it joins "
                                   "from)");
    const uint32_t rank = m.rank;
    Conn& c = conns[rank];
    c.link = std::move(p.link);
    c.peer = peer;
    c.local = local_host(c.link->fd());
    if (m.address.empty()) m.address = peer;
    m.joined = true;
    doc.roster[rank] = std::move(m);
    return rank;
  }

  // Each refusal is named, up to a bound (a flood of strangers must not grow the document).
  void refuse(Pending& p, const std::string& why) {
    if (++refused <= kNamedRefusals) {
      doc.errors.push_back("a rank connecting from " + p.from + " was refused: " + why);
      std::fprintf(stderr, "mtperf fleet: a rank connecting from %s was refused: %s\n",
                   p.from.c_str(), why.c_str());
    }
    try {
      control::send_message(*p.link, {MsgType::error, {{"message", why}}}, 200);
    } catch (const std::exception&) {
    }
    close(p.link->fd());
    p.link.reset();
  }

  // Takes what arrived on one pending connection; true when it joined.
  bool step_pending(Pending& p) {
    Message m;
    try {
      while (p.link && p.link->try_recv(m, control::kMaxRequestBody)) {
        if (!p.welcomed) {
          welcome(p, control::check_type(std::move(m), MsgType::hello));
          continue;
        }
        admit(p, control::check_type(std::move(m), MsgType::join));
        return true;
      }
    } catch (const std::exception& e) {
      // A rank of another key leaves at the challenge, its own check of our proof failing.
      const bool left = p.welcomed && !opts.key.empty() &&
                        std::string_view(e.what()).find("closed") != std::string_view::npos;
      refuse(p, left ? std::string("authentication failed (wrong or missing key: it left after "
                                   "the challenge): ") +
                           e.what()
                     : std::string(e.what()));
    }
    return false;
  }

  // New connections while there are descriptors; EMFILE/ENFILE pauses accepting (named once).
  void accept_new(std::vector<Pending>& pending, int64_t& paused_until) {
    for (;;) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          paused_until = control::monotonic_ns() + 100'000'000;
          if (!fd_limit_named) {
            fd_limit_named = true;
            rlimit rl{};
            getrlimit(RLIMIT_NOFILE, &rl);
            doc.errors.push_back(std::string("accepting joins: ") + std::strerror(errno) +
                                 " (RLIMIT_NOFILE " + std::to_string(rl.rlim_cur) +
                                 "): joins wait for a descriptor");
          }
        }
        return;  // EAGAIN, or an error the next wake-up meets again
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (pending.size() >= opts.size + kMaxStrangerJoins) {
        close(pending.front().link->fd());
        pending.erase(pending.begin());
      }
      Pending p;
      p.link = std::make_unique<control::Link>(fd);
      p.from = peer_host(fd);
      p.deadline_ns = control::deadline_in(kHandshakeTimeoutMs);
      pending.push_back(std::move(p));
    }
  }

  uint32_t accept_joins() {
    const int64_t deadline = control::deadline_in(opts.join_timeout_ms);
    fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
    std::vector<Pending> pending;
    int64_t paused_until = 0;
    uint32_t joined = 0;
    while (joined < opts.size && !stop) {
      const int64_t now = control::monotonic_ns();
      if (now >= deadline) break;
      std::vector<pollfd> fds;
      const bool accepting = now >= paused_until;
      if (accepting) fds.push_back({listen_fd, POLLIN, 0});
      for (const Pending& p : pending)
        fds.push_back({p.link->fd(), POLLIN, 0});
      const int64_t wait_ms = std::clamp<int64_t>((deadline - now) / 1000000, 1, 100);
      const int n = ::poll(fds.data(), fds.size(), int(wait_ms));
      if (n < 0 && errno != EINTR)
        throw std::runtime_error(std::string("poll: ") + strerror(errno));
      const size_t first = accepting ? 1 : 0;
      for (size_t k = first; n > 0 && k < fds.size(); ++k)
        if (fds[k].revents && pending[k - first].link && step_pending(pending[k - first])) ++joined;
      const int64_t after = control::monotonic_ns();
      for (Pending& p : pending)
        if (p.link && after > p.deadline_ns)
          refuse(p, "no JOIN within " + std::to_string(kHandshakeTimeoutMs / 1000) +
                        " s of connecting");
      std::erase_if(pending, [](const Pending& p) { return !p.link; });
      if (accepting && n > 0 && fds[0].revents) accept_new(pending, paused_until);
    }
    for (Pending& p : pending)
      close(p.link->fd());
    if (refused > kNamedRefusals)
      doc.errors.push_back(std::to_string(refused - kNamedRefusals) +
                           " more connections were refused before their JOIN (not listed)");
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
      if (c.link && !is_loopback(c.local)) outward = c.local;
    if (outward.empty()) return;
    for (uint32_t r = 0; r < opts.size; ++r) {
      Member& m = doc.roster[r];
      if (!m.joined || !is_loopback(m.address) || !is_loopback(conns[r].peer)) continue;
      m.address = outward;
      // Its member named the loopback's adapter; the others reach it through this one, on this
      // host: its line is that adapter's.
      const LinkLine line = link_line_of_address(outward);
      m.adapter = line.adapter;
      m.speed_bps = line.speed_bps;
      m.rdma_rate_bps = line.rdma_rate_bps;
    }
  }

  // Waits on the live ranks that `waiting` marks until none is left, the deadline or a stop:
  // each readable one goes to take(r), which clears waiting[r] once it has what it waited for
  // (and loses the rank on a bad frame). At the deadline, overdue(ranks) gets those still
  // waiting. One epoll set for the whole wait: a wake costs what is ready, not the fleet (a poll
  // list rebuilt on every wake was 4,096 entries a wake at 4,096 ranks).
  template <class Take, class Overdue>
  void poll_waiting(const std::vector<bool>& waiting, int64_t deadline, Take&& take,
                    Overdue&& overdue) {
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) throw std::runtime_error(std::string("epoll_create1: ") + strerror(errno));
    struct Closer {
      int fd;
      ~Closer() { close(fd); }
    } closer{ep};
    std::vector<char> in_set(opts.size, 0);
    size_t left = 0;
    for (uint32_t r = 0; r < opts.size; ++r) {
      if (!waiting[r] || !live(r)) continue;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u32 = r;
      if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[r].link->fd(), &ev) != 0)
        throw std::runtime_error(std::string("epoll_ctl: ") + strerror(errno));
      in_set[r] = 1;
      ++left;
    }
    std::vector<epoll_event> ready(std::min<size_t>(std::max<size_t>(left, 1), 1024));
    while (!stop && left > 0) {
      const int wait_ms = ms_until(deadline);
      if (wait_ms <= 0) {
        std::vector<uint32_t> late;
        for (uint32_t r = 0; r < opts.size; ++r)
          if (in_set[r] && waiting[r] && live(r)) late.push_back(r);
        overdue(late);
        return;
      }
      const int n = epoll_wait(ep, ready.data(), int(ready.size()), std::min(wait_ms, 200));
      if (n <= 0) {  // a quiet moment: recount, for a rank another's take() lost
        left = 0;
        for (uint32_t r = 0; r < opts.size; ++r) {
          in_set[r] = in_set[r] && waiting[r] && live(r);
          left += size_t(in_set[r]);
        }
      }
      for (int k = 0; k < n; ++k) {
        const uint32_t r = ready[size_t(k)].data.u32;
        if (!in_set[r]) continue;
        take(r);
        if (waiting[r] && live(r)) continue;
        // A lost rank's descriptor is closed, which takes it out of the set by itself.
        if (live(r)) epoll_ctl(ep, EPOLL_CTL_DEL, conns[r].link->fd(), nullptr);
        in_set[r] = 0;
        --left;
      }
    }
  }

  // Three round trips a rank, every rank at once: a CLOCK to each, then each answer as it comes
  // and the rank's next CLOCK, so a fleet's exchange takes a few round trips, not a few per rank.
  // The shortest of each rank's three is kept: its offset and round-trip time. Returns the
  // largest change of a rank's offset from the one measured before, ns.
  int64_t sync_clocks() {
    struct Probe {
      int64_t sent_ns = 0, best_rtt = INT64_MAX, offset_ns = 0;
      int left = 3;
    };
    std::vector<Probe> probes(opts.size);
    std::vector<bool> waiting(opts.size, false);
    auto ask = [&](uint32_t r) {
      probes[r].sent_ns = realtime_ns();
      control::send_message(*conns[r].link, {MsgType::clock, json::object()}, kHandshakeTimeoutMs);
      waiting[r] = true;
    };
    auto take = [&](uint32_t r) {
      try {
        Message m;
        if (!conns[r].link->try_recv(m, control::kMaxRequestBody)) return;
        const int64_t t1 = realtime_ns();
        Probe& p = probes[r];
        waiting[r] = false;
        const int64_t theirs = jf::required<int64_t>(
            control::check_type(std::move(m), MsgType::clock).body, "clock", "now_ns");
        if (t1 - p.sent_ns < p.best_rtt) {
          p.best_rtt = t1 - p.sent_ns;
          p.offset_ns = theirs - (p.sent_ns + t1) / 2;
        }
        if (--p.left > 0) ask(r);
      } catch (const std::exception& e) {
        lose(r, std::string("during the clock exchange: ") + e.what());
      }
    };
    for (uint32_t r = 0; r < opts.size; ++r) {
      if (!live(r)) continue;
      try {
        ask(r);
      } catch (const std::exception& e) {
        lose(r, std::string("during the clock exchange: ") + e.what());
      }
    }
    poll_waiting(waiting, control::deadline_in(kHandshakeTimeoutMs), take,
                 [&](const std::vector<uint32_t>& late) {
                   for (uint32_t r : late)
                     lose(r, "during the clock exchange: no answer within " +
                                 std::to_string(kHandshakeTimeoutMs / 1000) + " s");
                 });
    int64_t moved = 0;
    for (uint32_t r = 0; r < opts.size; ++r) {
      const Probe& p = probes[r];
      if (!live(r) || p.best_rtt == INT64_MAX) continue;
      Conn& c = conns[r];
      if (c.rtt_ns != 0) moved = std::max(moved, std::abs(p.offset_ns - c.offset_ns));
      c.offset_ns = p.offset_ns;
      c.rtt_ns = p.best_rtt;
      doc.clock_offset_max_ns = std::max(doc.clock_offset_max_ns, std::fabs(double(c.offset_ns)));
    }
    return moved;
  }

  // The roster's groups (--groups), then the plan.
  Plan make() {
    std::vector<std::string> hosts, declared;
    for (const Member& m : doc.roster) {
      hosts.push_back(m.joined ? m.host : "");
      declared.push_back(m.group);  // --groups lldp: each rank's, at JOIN
    }
    GroupsSource source = opts.groups;
    if (source.from == "slurm" && source.text.empty()) source.text = read_slurm_topology();
    const std::vector<std::string> groups = resolve_groups(source, hosts, declared);
    doc.groups_from = source.from == "file" ? "file " + source.name : source.from;
    for (Member& m : doc.roster)
      m.group = m.rank < groups.size() ? groups[m.rank] : "";
    if (!opts.pairs_text.empty()) return parse_pairs(opts.pairs_text, hosts, opts.pairs_name);
    if (opts.pattern == "rail") return within_groups(rails_of(hosts), "rail");
    if (!is_group_pattern(opts.pattern)) return make_plan(opts.pattern, opts.size);
    if (groups.empty())
      throw std::invalid_argument("pattern " + opts.pattern +
                                  ": the fleet has no groups: give --groups FILE, slurm or lldp");
    const GroupIndex index = index_groups(groups);
    return opts.pattern == "within-group" ? within_groups(index.of) : across_groups(index.of);
  }

  // Each member's entry of a ROSTER's peers, dumped once: [rank,"host:port"]; "" for a rank
  // that never joined.
  std::vector<std::string> peer_entries() const {
    std::vector<std::string> entry(opts.size);
    for (uint32_t r = 0; r < opts.size; ++r) {
      const Member& m = doc.roster[r];
      if (m.joined) entry[r] = json::array({r, join_host_port(m.address, m.port)}).dump();
    }
    return entry;
  }

  // What each rank needs of the roster: the servers of the ranks the plan has it test against
  // (its peers, both directions where the plan runs them), the only servers a ROUND may send it
  // to; no other rank's address, so a sparse plan (shift, rail, within-group) sends each rank a
  // few entries, not the fleet's. The members' other facts stay in the document. Each body is
  // assembled from the entries' text as dump() writes {size, peers, pattern, steps, wait_ms}
  // (keys in order): all-pairs at 4,096 ranks is 4,095 entries a rank.
  void send_rosters(size_t steps, int wait_ms) {
    std::vector<std::vector<uint32_t>> peers(opts.size);
    for (const Round& round : doc.plan.rounds) {
      for (const Pair& p : round.pairs) {
        if (p.src >= opts.size || p.dst >= opts.size) continue;
        peers[p.src].push_back(p.dst);
        if (doc.plan.both_directions) peers[p.dst].push_back(p.src);
      }
    }
    const std::vector<std::string> entry = peer_entries();
    const std::string head = "{\"pattern\":" + json(doc.plan.pattern).dump() + ",\"peers\":[";
    const std::string tail = "],\"size\":" + std::to_string(opts.size) +
                             ",\"steps\":" + std::to_string(steps) +
                             ",\"wait_ms\":" + std::to_string(wait_ms) + "}";
    for (uint32_t r = 0; r < opts.size; ++r) {
      if (!live(r)) continue;
      std::sort(peers[r].begin(), peers[r].end());
      peers[r].erase(std::unique(peers[r].begin(), peers[r].end()), peers[r].end());
      std::string body = head;
      for (uint32_t dst : peers[r]) {
        if (entry[dst].empty() || !doc.roster[dst].lost.empty()) continue;
        if (body.size() > head.size()) body += ',';
        body += entry[dst];
      }
      body += tail;
      try {
        conns[r].link->send_frame(control::encode(MsgType::roster, body),
                                  control::deadline_in(kHandshakeTimeoutMs));
      } catch (const std::exception& e) {
        lose(r, e.what());
      }
      std::vector<uint32_t>().swap(peers[r]);
    }
  }

  // ROUND to every live rank: each rank's runs dumped once, the body assembled as text (what
  // dump() makes of {step, start_ns, runs}: keys in order), sealed per connection. The frames
  // are a few hundred bytes into a send buffer the rank emptied (it answered the previous step):
  // the sends do not wait. Most of a ROUND's time is the kernel's part of each send (7 to 8 us
  // at 4,096 ranks on loopback, where it includes the receiver's TCP processing), so a large
  // fleet's sends are split among threads, each with its own ranks' connections; a rank whose
  // send failed is lost once they are done.
  void send_rounds(const std::vector<json>& runs, int64_t start, uint32_t step_no,
                   std::vector<bool>& waiting) {
    const std::string step_tail = ",\"step\":" + std::to_string(step_no) + "}";
    std::vector<std::optional<std::string>> failed(opts.size);
    auto send_some = [&](uint32_t from, uint32_t to) {
      std::string body;
      for (uint32_t r = from; r < to; ++r) {
        if (!live(r)) continue;
        try {
          body = "{\"runs\":";
          body += runs[r].is_null() ? "[]" : runs[r].dump();
          body += ",\"start_ns\":";
          body += std::to_string(start + conns[r].offset_ns);
          body += step_tail;
          conns[r].link->send_frame(control::encode(MsgType::round, body),
                                    control::deadline_in(kHandshakeTimeoutMs));
        } catch (const std::exception& e) {
          failed[r] = e.what();
        }
      }
    };
    split_among_threads(opts.size, send_some);
    for (uint32_t r = 0; r < opts.size; ++r) {
      if (!live(r)) continue;
      if (failed[r])
        lose(r, *failed[r]);
      else
        waiting[r] = true;
    }
  }

  // Sends ROUND, waits for every live rank's RESULTS; the step's results, in the step's order.
  std::vector<PairResult> run_step(const Step& s, uint32_t step_no) {
    std::vector<PairResult> out(s.pairs.size());
    std::vector<json> runs(opts.size);  // null: no run
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
      if (c.link) max_rtt = std::max(max_rtt, c.rtt_ns);
    const int64_t start = realtime_ns() + int64_t(opts.start_delay_ms) * 1000000 + 4 * max_rtt;
    std::vector<bool> waiting(opts.size, false);
    send_rounds(runs, start, step_no, waiting);
    const int64_t deadline = control::deadline_in(opts.start_delay_ms + opts.pair_timeout_ms);
    // When each run's data began, on its rank's clock: put on ours after the step, with offsets
    // measured then, apart from those the start was planned with.
    std::vector<std::optional<int64_t>> started(out.size());
    // Each rank's RESULTS as its bytes arrive: one that stalls mid-frame holds up no one, and
    // at the deadline what the others sent is taken before anyone is declared lost.
    auto take = [&](uint32_t r) {
      try {
        Message m;
        if (!conns[r].link->try_recv(m, kMaxFleetBody)) return;
        waiting[r] = false;
        take_results(r, control::check_type(std::move(m), MsgType::results).body, step_no, out,
                     started);
      } catch (const std::exception& e) {
        waiting[r] = false;
        lose(r, e.what());
      }
    };
    poll_waiting(waiting, deadline, take, [&](const std::vector<uint32_t>& late) {
      for (uint32_t r : late)
        take(r);
      for (uint32_t r : late)
        if (waiting[r])
          lose(r, "no RESULTS of step " + std::to_string(step_no) + " within " +
                      std::to_string((opts.start_delay_ms + opts.pair_timeout_ms) / 1000) +
                      " s (--pair-timeout)");
    });
    for (PairResult& r : out) {
      if (r.ok || !r.error.empty()) continue;
      std::string why = absent(r.pair.src);
      r.error = why.empty() ? (stop ? "interrupted" : "no result came back") : why;
    }
    StepTiming t;
    t.step = step_no;
    t.round = s.round;
    t.transport = s.transport;
    t.pairs = s.pairs.size();
    t.seconds = double(realtime_ns() - start) / 1e9;
    if (!stop) t.clock_moved_ns = sync_clocks();
    std::vector<int64_t> starts;
    for (size_t i = 0; i < out.size(); ++i) {
      if (!started[i]) continue;
      const int64_t ours = *started[i] - conns[out[i].pair.src].offset_ns;
      out[i].start_offset_ns = ours - start;
      starts.push_back(ours);
    }
    if (starts.size() > 1) {
      auto [lo, hi] = std::minmax_element(starts.begin(), starts.end());
      t.start_spread_ns = *hi - *lo;
    }
    doc.steps.push_back(t);
    return out;
  }

  void take_results(uint32_t rank, const json& body, uint32_t step_no, std::vector<PairResult>& out,
                    std::vector<std::optional<int64_t>>& started) {
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
      if (auto it = list[i].find("started_ns"); it != list[i].end() && !it->is_null())
        started[index] = jf::value<int64_t>(*it, where + ".started_ns");
      out[index] = std::move(r);
    }
  }

  void finish(bool ok, const std::string& why) {
    for (uint32_t r = 0; r < opts.size; ++r) {
      if (!live(r)) continue;
      try {
        if (ok)
          control::send_message(*conns[r].link, {MsgType::finish, {{"ok", true}}}, 2000);
        else
          control::send_message(*conns[r].link, {MsgType::error, {{"message", why}}}, 2000);
      } catch (const std::exception&) {
      }
      close(conns[r].link->fd());
      conns[r].link.reset();
    }
  }

  bool must_end() const {
    if (!opts.need_all) return false;
    for (const Member& m : doc.roster)
      if (!m.joined || !m.lost.empty()) return true;
    return false;
  }

  // --retest N: up to N passes over the pairs still failing, each in steps of pairs disjoint by
  // host, all of a step at once.
  void retest(uint32_t& step_no) {
    for (uint32_t pass = 0; opts.retest && pass < opts.retests && !stop && !must_end(); ++pass) {
      const auto steps = retest_steps(doc, opts.retest(doc));
      if (steps.empty()) return;
      for (const RetestStep& rs : steps) {
        if (stop || must_end()) return;
        Step s{doc.results[rs.results.front()].round, rs.transport, {}};
        for (size_t i : rs.results)
          s.pairs.push_back(doc.results[i].pair);
        std::vector<PairResult> again = run_step(s, step_no++);
        for (size_t k = 0; k < rs.results.size(); ++k) {
          PairResult& old = doc.results[rs.results[k]];
          again[k].round = old.round;
          again[k].tries = old.tries + 1;
          old = std::move(again[k]);
          if (opts.on_result) opts.on_result(doc, old);
        }
      }
      assign_lines(doc, opts.verbs);
    }
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
    send_rosters(steps.size(), wait_ms);
    uint32_t step_no = 0;
    for (const Step& s : steps) {
      if (stop || must_end()) break;
      for (PairResult& r : run_step(s, step_no++)) {
        if (!opts.keep_results) {
          if (opts.on_result) opts.on_result(doc, r);
          continue;
        }
        doc.results.push_back(std::move(r));
        if (opts.on_result) opts.on_result(doc, doc.results.back());
      }
    }
    assign_lines(doc, opts.verbs);
    retest(step_no);
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
