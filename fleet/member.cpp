#include "fleet/member.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "control/protocol.hpp"
#include "control/server.hpp"
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
int reach(const std::string& host, uint16_t port, int64_t deadline, const std::atomic<bool>* stop) {
  std::string last;
  while (!stopped(stop)) {
    try {
      return connect_tcp(host, port, 2000);
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

json run_round(const MemberOptions& o, const json& body) {
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
    std::optional<int64_t> started;
  };
  std::vector<Run> assigned(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string where = "ROUND.runs[" + std::to_string(i) + "]";
    assigned[i].index = jf::required<size_t>(runs[i], where, "index");
    assigned[i].transport = jf::required<uint32_t>(runs[i], where, "transport");
    assigned[i].server = jf::required<std::string>(runs[i], where, "server");
  }
  sleep_until_realtime(start, o.stop);
  std::vector<std::thread> threads;
  for (Run& r : assigned) {
    threads.emplace_back([&o, &r] {
      r.started = realtime_ns();
      try {
        r.result = o.run_pair(r.transport, r.server);
      } catch (const std::exception& e) {
        r.result.ok = false;
        r.result.error = e.what();
      }
    });
  }
  for (auto& t : threads)
    t.join();
  json results = json::array();
  for (const Run& r : assigned) {
    json one = {{"index", r.index}, {"result", to_json(r.result)}};
    one["started_ns"] = r.started ? json(*r.started) : json(nullptr);
    results.push_back(one);
  }
  return {{"step", step}, {"results", results}};
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
  const int fd = reach(host, port, join_deadline, o.stop);
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  const std::string them = "the coordinator at " + join_host_port(host, port);
  try {
    control::send_message(fd, {MsgType::hello, {{"version", control::kVersion}, {"fleet", 1}}},
                          kHandshakeTimeoutMs);
    Message welcome =
        control::expect(fd, MsgType::welcome, control::kMaxRequestBody, kHandshakeTimeoutMs);
    Member me;
    me.rank = o.launch.rank;
    me.host = host_name();
    me.address = o.bind == "0.0.0.0" ? "" : o.bind;
    me.port = serving.port();
    me.cpus = std::thread::hardware_concurrency();
    me.transports = o.usable;
    me.launcher = o.launch.launcher;
    json mj = to_json(me);
    json join = {{"member", mj}, {"test", o.test}};
    if (auto c = welcome.body.find("challenge"); c != welcome.body.end()) {
      if (o.key.empty())
        throw std::runtime_error("the coordinator wants a key: give --key (the same as rank 0's)");
      join["mac"] = join_mac(o.key, jf::value<std::string>(*c, "WELCOME.challenge"), mj);
    }
    control::send_message(fd, {MsgType::join, join}, kHandshakeTimeoutMs);
    // Until the roster: the coordinator waits for the other ranks' JOINs.
    int wait_ms = o.join_timeout_ms + 2 * kHandshakeTimeoutMs;
    while (!stopped(o.stop)) {
      Message m = control::recv_message(fd, kMaxFleetBody, wait_ms);
      switch (m.type) {
        case MsgType::clock:
          control::send_message(fd, {MsgType::clock, {{"now_ns", realtime_ns()}}},
                                kHandshakeTimeoutMs);
          break;
        case MsgType::roster:
          wait_ms = jf::required<int>(m.body, "roster", "wait_ms");
          if (wait_ms < 1000 || wait_ms > 86'400'000)
            throw control::ProtocolError("ROSTER.wait_ms " + std::to_string(wait_ms) +
                                         " is outside 1 s..1 day");
          break;
        case MsgType::round:
          control::send_message(fd, {MsgType::results, run_round(o, m.body)}, kHandshakeTimeoutMs);
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
