#include "fleet/member.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "control/link.hpp"
#include "control/protocol.hpp"
#include "control/server.hpp"
#include "fleet/groups.hpp"
#include "fleet/net.hpp"
#include "fleet/protocol.hpp"
#include "platform/clock.hpp"
#include "platform/link_line.hpp"
#include "workloads/json_field.hpp"

namespace mtperf::fleet {
namespace jf = json_field;
using control::Message;
using control::MsgType;
using nlohmann::json;

namespace {

bool stopped(const std::atomic<bool>* stop) {
  return stop && *stop;
}

// This rank's server, on a thread, until the object goes.
class ServingThread {
 public:
  explicit ServingThread(control::ServerOptions o)
      : server_(std::move(o)), thread_([this] { server_.run(); }) {}
  ~ServingThread() {
    server_.stop();
    thread_.join();
  }
  uint16_t port() const { return server_.port(); }

 private:
  control::Server server_;
  std::thread thread_;
};

// Connects to the coordinator, trying again until the deadline: ranks start in any order.
int reach(const std::string& host, uint16_t port, const std::string& source, int64_t deadline,
          const std::atomic<bool>* stop) {
  std::string last;
  while (!stopped(stop)) {
    try {
      return connect_tcp(host, port, 2000, source);
    } catch (const std::exception& e) {
      last = e.what();
    }
    if (control::monotonic_ns() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  throw std::runtime_error("no coordinator: " + last);
}

void sleep_until_realtime(int64_t at_ns, const std::atomic<bool>* stop) {
  // Bounded: a start more than a minute away is a clock gone wrong, not a plan.
  const int64_t limit = realtime_ns() + 60'000'000'000LL;
  at_ns = std::min(at_ns, limit);
  timespec ts{time_t(at_ns / 1000000000), long(at_ns % 1000000000)};
  while (!stopped(stop) && clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

// ROSTER's members, each rank's server as the coordinator gave it: the only servers a ROUND may
// send this rank's traffic to.
// ROSTER's servers, by rank: {"size": N, "peers": [[RANK, "HOST:PORT"], ...]}, the ranks this
// one tests against; every other entry stays empty (a ROUND toward it is refused).
std::vector<std::string> roster_servers(const json& body) {
  const uint32_t size = jf::required<uint32_t>(body, "ROSTER", "size");
  if (size > kMaxFleetRanks)
    throw control::ProtocolError("ROSTER.size " + std::to_string(size) + ": over " +
                                 std::to_string(kMaxFleetRanks) + " ranks");
  const json& list = body.at("peers");
  if (!list.is_array() || list.size() > size)
    throw control::ProtocolError("ROSTER.peers: not a list of at most " + std::to_string(size) +
                                 " [rank, server] entries");
  std::vector<std::string> servers(size);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = "ROSTER.peers[" + std::to_string(i) + "]";
    const json& e = list[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_number_unsigned() ||
        e[0].get<uint64_t>() >= size)
      throw control::ProtocolError(where + ": not [rank below " + std::to_string(size) +
                                   ", \"HOST:PORT\"]");
    servers[e[0].get<size_t>()] = jf::string(e[1], where + "[1]", 300);
  }
  return servers;
}

// Why this rank refuses to run `server` as rank dst's ("" when it is the roster's).
std::string outside_roster(const std::vector<std::string>& roster, uint32_t self, uint32_t dst,
                           const std::string& server) {
  if (dst >= roster.size() || roster[dst].empty())
    return "rank " + std::to_string(dst) + " is not a member of the roster";
  if (dst == self) return "a run against this rank itself";
  if (server != roster[dst])
    return "server " + server + " is not rank " + std::to_string(dst) + "'s (" + roster[dst] +
           " in the roster)";
  return "";
}

json run_round(const MemberOptions& o, const std::vector<std::string>& roster, const json& body) {
  const uint32_t step = jf::required<uint32_t>(body, "round", "step");
  const int64_t start = jf::required<int64_t>(body, "round", "start_ns");
  const json& runs = body.at("runs");
  if (!runs.is_array() || runs.size() > kMaxRunsPerRank)
    throw control::ProtocolError("ROUND.runs: not a list of at most " +
                                 std::to_string(kMaxRunsPerRank));
  struct Run {
    size_t index = 0;
    uint32_t transport = 0;
    std::string server;
    PairResult result;
    std::string refused;  // traffic toward a host outside the roster: never sent
  };
  std::vector<Run> assigned(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string where = "ROUND.runs[" + std::to_string(i) + "]";
    Run& r = assigned[i];
    r.index = jf::required<size_t>(runs[i], where, "index");
    r.transport = jf::required<uint32_t>(runs[i], where, "transport");
    r.server = jf::required<std::string>(runs[i], where, "server");
    r.refused = outside_roster(roster, o.launch.rank, jf::required<uint32_t>(runs[i], where, "dst"),
                               r.server);
    if (!r.refused.empty()) {
      r.refused = "refused by rank " + std::to_string(o.launch.rank) + ": " + r.refused;
      std::fprintf(stderr, "mtperf fleet: rank %u: step %u, %s: %s\n", o.launch.rank, step,
                   where.c_str(), r.refused.c_str());
      r.result.ok = false;
      r.result.error = r.refused;
    }
  }
  sleep_until_realtime(start, o.stop);
  std::vector<std::thread> threads;
  threads.reserve(assigned.size());
  for (Run& r : assigned) {
    if (!r.refused.empty()) continue;
    try {
      threads.emplace_back([&o, &r] {
        try {
          r.result = o.run_pair(r.transport, r.server);
        } catch (const std::exception& e) {
          r.result.ok = false;
          r.result.error = e.what();
        }
      });
    } catch (const std::system_error& e) {
      // Out of threads (RLIMIT_NPROC, memory): this run fails, named; those started finish.
      r.result.ok = false;
      r.result.error = std::string("cannot start a thread for this run: ") + e.what() +
                       " (ulimit -u, or fewer runs per rank)";
    }
  }
  for (auto& t : threads)
    t.join();
  json results = json::array();
  for (const Run& r : assigned) {
    json one = {{"index", r.index}, {"result", to_json(r.result)}};
    // When its data began (null for a run that never got that far).
    const std::optional<int64_t>& started = r.result.data_started_ns;
    one["started_ns"] = started ? json(*started) : json(nullptr);
    results.push_back(one);
  }
  return {{"step", step}, {"results", results}};
}

// Thrown for a failure worth another JOIN: the connection failed before the coordinator said
// anything this rank can trust (it was busy, restarting, or dropped us among strangers).
struct Retry : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// HELLO, WELCOME, JOIN on a new connection. With a key the coordinator must prove it first:
// one that does not ask for the key, or cannot prove it, is refused (never a silent downgrade);
// from the JOIN on, every frame is sealed (control/link.hpp).
void greet(const MemberOptions& o, control::Link& link, const Member& me) {
  const std::string nonce = control::random_hex(16);
  Message welcome;
  try {
    control::send_message(
        link, {MsgType::hello, {{"version", control::kVersion}, {"fleet", 1}, {"nonce", nonce}}},
        kHandshakeTimeoutMs);
    welcome = control::recv_message(link, control::kMaxRequestBody, kHandshakeTimeoutMs);
  } catch (const control::ProtocolError& e) {
    throw Retry(e.what());
  }
  welcome = control::check_type(std::move(welcome), MsgType::welcome);
  json mj = to_json(me);
  json join = {{"member", mj}, {"test", o.test}, {"job", o.launch.job}};
  auto c = welcome.body.find("challenge");
  if (c == welcome.body.end()) {
    if (!o.key.empty())
      throw std::runtime_error(
          "authentication failed: it does not ask for the key, and this rank has one: refusing "
          "to join unauthenticated "
          "(a coordinator started without the key, or not the fleet's)");
  } else {
    if (o.key.empty())
      throw std::runtime_error(
          "the coordinator wants a key: give every rank the same --key-file FILE or MTPERF_KEY");
    const std::string challenge = control::nonce_field(welcome.body, "challenge", "WELCOME");
    std::string proof;
    jf::optional(welcome.body, "WELCOME", "proof", proof);
    if (!control::mac_matches(proof, control::prove(o.key, "coordinator", nonce, challenge)))
      throw std::runtime_error(
          "authentication failed: it did not prove it has the fleet's key (a different key, or "
          "not the fleet's coordinator): refusing to join");
    join["mac"] = join_mac(o.key, challenge, mj);
    control::send_message(link, {MsgType::join, join}, kHandshakeTimeoutMs);
    link.seal(o.key, true, nonce, challenge);
    return;
  }
  control::send_message(link, {MsgType::join, join}, kHandshakeTimeoutMs);
}

// Connects and joins, trying again with a growing pause until the deadline.
std::unique_ptr<control::Link> join(const MemberOptions& o, const std::string& host, uint16_t port,
                                    const Member& me, int64_t deadline) {
  const std::string source = o.bind.empty() || o.bind == "0.0.0.0" ? "" : o.bind;
  int pause_ms = 200;
  Member mine = me;
  for (;;) {
    auto link = std::make_unique<control::Link>(reach(host, port, source, deadline, o.stop));
    try {
      if (mine.adapter.empty()) {
        // The line of the adapter its traffic leaves by: --bind's, else the one that reaches
        // the coordinator.
        const LinkLine line =
            link_line_of_address(source.empty() ? local_host(link->fd()) : source);
        mine.adapter = line.adapter;
        mine.speed_bps = line.speed_bps;
        mine.rdma_rate_bps = line.rdma_rate_bps;
        if (o.lldp) {
          try {
            mine.group = read_lldp_chassis(mine.adapter);
          } catch (const std::exception& e) {
            // The coordinator names the rank without a group; the reason is said here.
            std::fprintf(stderr, "mtperf fleet: rank %u: %s\n", o.launch.rank, e.what());
          }
        }
      }
      greet(o, *link, mine);
      return link;
    } catch (const Retry& e) {
      close(link->fd());
      if (stopped(o.stop) || control::monotonic_ns() + int64_t(pause_ms) * 1000000 > deadline)
        throw std::runtime_error(std::string("no JOIN taken before --join-timeout: ") + e.what());
    } catch (...) {
      close(link->fd());
      throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    pause_ms = std::min(pause_ms * 2, 3000);
  }
}

// After the JOIN: clocks, the roster, rounds, until FINISH.
void serve_coordinator(const MemberOptions& o, control::Link& link) {
  // Until the roster: the coordinator waits for the other ranks' JOINs.
  int wait_ms = o.join_timeout_ms + 2 * kHandshakeTimeoutMs;
  std::vector<std::string> roster;
  while (!stopped(o.stop)) {
    Message m = control::recv_message(link, kMaxFleetBody, wait_ms);
    switch (m.type) {
      case MsgType::clock:
        control::send_message(link,
                              {MsgType::clock, {{"now_ns", o.clock ? o.clock() : realtime_ns()}}},
                              kHandshakeTimeoutMs);
        break;
      case MsgType::roster:
        wait_ms = jf::required<int>(m.body, "roster", "wait_ms");
        if (wait_ms < 1000 || wait_ms > 86'400'000)
          throw control::ProtocolError("ROSTER.wait_ms " + std::to_string(wait_ms) +
                                       " is outside 1 s..1 day");
        roster = roster_servers(m.body);
        break;
      case MsgType::round:
        control::send_message(link, {MsgType::results, run_round(o, roster, m.body)},
                              kHandshakeTimeoutMs);
        break;
      case MsgType::finish:
        return;
      case MsgType::error:
        throw std::runtime_error(m.body.value("message", std::string("(no message)")));
      default:
        throw control::ProtocolError("unexpected " + std::string(control::to_string(m.type)));
    }
  }
  throw std::runtime_error("interrupted");
}

}  // namespace

void run_member(const MemberOptions& o) {
  control::ServerOptions so;
  so.bind = o.bind.empty() ? "0.0.0.0" : o.bind;
  so.port = 0;
  so.key = o.key;
  so.max_sessions = std::max<uint32_t>(16, o.launch.size);
  so.max_flows = o.max_flows;
  so.max_memory = o.max_memory;
  ServingThread serving(control::resolved(so));

  const int64_t join_deadline = control::deadline_in(o.join_timeout_ms);
  std::string where = o.launch.coordinator;
  if (where.empty())
    where = read_rendezvous(o.launch.rendezvous, o.launch.job, o.join_timeout_ms, o.stop);
  std::string host;
  uint16_t port = 0;
  split_host_port(where, o.coordinator_port, host, port);
  const std::string them = "the coordinator at " + join_host_port(host, port);
  Member me;
  me.rank = o.launch.rank;
  me.host = host_name();
  me.address = o.bind == "0.0.0.0" ? "" : o.bind;
  me.port = serving.port();
  me.cpus = std::thread::hardware_concurrency();
  me.transports = o.usable;
  me.launcher = o.launch.launcher;
  try {
    std::unique_ptr<control::Link> link = join(o, host, port, me, join_deadline);
    struct Closer {
      int fd;
      ~Closer() { close(fd); }
    } closer{link->fd()};
    serve_coordinator(o, *link);
  } catch (const std::exception& e) {
    throw std::runtime_error(them + ": " + e.what());
  }
}

void write_rendezvous(const std::string& path, const std::string& job,
                      const std::string& host_port) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    if (!(out << "mtperf-fleet 1 " << (job.empty() ? "-" : job) << ' ' << host_port << '\n'))
      throw std::runtime_error("cannot write the rendezvous file " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
}

std::string read_rendezvous(const std::string& path, const std::string& job, int timeout_ms,
                            const std::atomic<bool>* stop) {
  const int64_t deadline = control::deadline_in(timeout_ms);
  std::string seen;
  while (!stopped(stop)) {
    std::ifstream in(path);
    std::string magic, version, their_job, host_port;
    if (in >> magic >> version >> their_job >> host_port) {
      if (magic != "mtperf-fleet" || version != "1")
        throw std::runtime_error("rendezvous file " + path + " is not an mtperf fleet record");
      if (job.empty() || their_job == job) return host_port;
      seen = " (it names job " + their_job + ", this is job " + job + ")";
    }
    if (control::monotonic_ns() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("no rank 0 record in the rendezvous file " + path + " within " +
                           std::to_string(timeout_ms / 1000) + " s" + seen);
}

}  // namespace mtperf::fleet
