// fleet_sim: the real coordinator (fleet/coordinator.hpp) against N simulated ranks over real
// loopback sockets, to measure what the coordinator costs at a size no test bed here has.
//
//   fleet_sim [-n RANKS] [-r ROUNDS] [-k]     (defaults: 256 ranks, 5 rounds, keyed)
//
// The ranks are state machines on one thread (epoll over their connections), not processes:
// each joins as a rank does (HELLO with a nonce, the coordinator's proof checked, a JOIN with
// its MAC, every frame after it sealed), answers the clock exchanges, takes the ROSTER, and
// answers every ROUND at once with a result per run (no traffic: simulated figures, named as
// such in nothing the coordinator keeps). The plan is ROUNDS rounds of N/2 disjoint pairs.
//
// Printed, one line each: the time until every rank joined (its JOIN taken: the first CLOCK
// came), until the ROSTER reached every rank, each ROUND's fan-out (from the first rank's
// receipt to the last's, median and max over the rounds), the ROSTER's size,
// the coordinator thread's CPU per round, the process's peak RSS, and the document's size.
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/link.hpp"
#include "fleet/coordinator.hpp"
#include "fleet/model.hpp"
#include "fleet/net.hpp"
#include "fleet/protocol.hpp"
#include "fleet/render.hpp"
#include "platform/clock.hpp"

namespace {

using mtperf::control::Link;
using mtperf::control::Message;
using mtperf::control::MsgType;
using nlohmann::json;
namespace fleet = mtperf::fleet;
namespace control = mtperf::control;

const std::string kKey = "fleet_sim key";

struct SimRank {
  uint32_t rank = 0;
  std::unique_ptr<Link> link;
  std::string nonce;
  bool welcomed = false, joined = false, has_roster = false, finished = false;
  size_t roster_bytes = 0;
};

double seconds_since(int64_t t0) {
  return double(mtperf::now_ns() - t0) / 1e9;
}

long peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

std::string pairs_text(uint32_t n, uint32_t rounds) {
  std::string out;
  for (uint32_t r = 0; r < rounds; ++r)
    for (uint32_t i = 0; i < n / 2; ++i)
      out += std::to_string(r) + " " + std::to_string(i) + " " +
             std::to_string(n / 2 + (i + r) % (n / 2)) + "\n";
  return out;
}

json test_of() {
  return {{"workload", "stream"}, {"duration_s", 1}};
}

// The rank's answer to one message.
void on_message(SimRank& s, Message m, bool keyed) {
  switch (m.type) {
    case MsgType::welcome: {
      fleet::Member me;
      me.rank = s.rank;
      me.host = "sim" + std::to_string(s.rank);
      me.address = "127.0.0.1";
      me.port = uint16_t(20000 + s.rank % 40000);
      me.transports = {"socket"};
      json mj = fleet::to_json(me);
      json join = {{"member", mj}, {"test", test_of()}, {"job", ""}};
      std::string challenge;
      if (keyed) {
        challenge = m.body.at("challenge").get<std::string>();
        if (m.body.at("proof") != control::prove(kKey, "coordinator", s.nonce, challenge))
          throw std::runtime_error("the coordinator's proof is wrong");
        join["mac"] = fleet::join_mac(kKey, challenge, mj);
      }
      control::send_message(*s.link, {MsgType::join, join}, 10000);
      if (keyed) s.link->seal(kKey, true, s.nonce, challenge);
      s.welcomed = true;
      return;
    }
    case MsgType::clock:
      s.joined = true;
      control::send_message(*s.link, {MsgType::clock, {{"now_ns", mtperf::realtime_ns()}}}, 10000);
      return;
    case MsgType::roster:
      s.has_roster = true;
      s.roster_bytes = m.body.dump().size();
      return;
    case MsgType::round: {
      json results = json::array();
      for (const json& run : m.body.at("runs")) {
        fleet::PairResult r;
        r.ok = true;
        r.throughput_bps = 1e9;
        r.throughput_c2s_bps = 1e9;
        r.c2s_sent = 125000000;
        r.c2s_received = 125000000;
        results.push_back({{"index", run.at("index")},
                           {"result", fleet::to_json(r)},
                           {"started_ns", mtperf::realtime_ns()}});
      }
      control::send_message(
          *s.link, {MsgType::results, {{"step", m.body.at("step")}, {"results", results}}}, 10000);
      return;
    }
    case MsgType::finish:
    case MsgType::error:
      s.finished = true;
      return;
    default:
      throw std::runtime_error("unexpected " + std::string(control::to_string(m.type)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t n = 256, rounds = 5;
  bool keyed = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-n" && i + 1 < argc)
      n = uint32_t(std::atoi(argv[++i]));
    else if (a == "-r" && i + 1 < argc)
      rounds = uint32_t(std::atoi(argv[++i]));
    else if (a == "-k")
      keyed = false;
    else {
      std::fprintf(stderr, "usage: fleet_sim [-n RANKS] [-r ROUNDS] [-k (no key)]\n");
      return 2;
    }
  }
  if (n < 2 || n % 2 || rounds < 1) {
    std::fprintf(stderr, "fleet_sim: an even number of ranks, at least 2, and a round\n");
    return 2;
  }
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < 2 * n + 64) {
    std::fprintf(stderr, "fleet_sim: %u ranks need %u descriptors; the limit is %lu\n", n,
                 2 * n + 64, static_cast<unsigned long>(rl.rlim_cur));
    return 1;
  }

  fleet::CoordinatorOptions co;
  co.bind = "127.0.0.1";
  co.key = keyed ? kKey : "";
  co.size = n;
  co.join_timeout_ms = 120000;
  co.transports = {"socket"};
  co.test = test_of();
  co.workload = "stream";
  co.headline = "throughput";
  co.pair_timeout_ms = 60000;
  co.start_delay_ms = 20;
  co.pairs_text = pairs_text(n, rounds);
  co.pairs_name = "fleet_sim";
  fleet::Coordinator coordinator(co);
  const uint16_t port = coordinator.port();

  fleet::FleetDoc doc;
  double coordinator_cpu = 0;
  const int64_t t0 = mtperf::now_ns();
  std::thread coordinating([&] {
    const double c0 = thread_cpu_s();
    doc = coordinator.run();
    coordinator_cpu = thread_cpu_s() - c0;
  });

  std::vector<SimRank> ranks(n);
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  for (uint32_t r = 0; r < n; ++r) {
    SimRank& s = ranks[r];
    s.rank = r;
    s.link = std::make_unique<Link>(fleet::connect_tcp("127.0.0.1", port, 10000));
    s.nonce = control::random_hex(16);
    control::send_message(
        *s.link,
        {MsgType::hello, {{"version", control::kVersion}, {"fleet", 1}, {"nonce", s.nonce}}},
        10000);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = r;
    epoll_ctl(ep, EPOLL_CTL_ADD, s.link->fd(), &ev);
  }
  double all_joined = 0, all_roster = 0;
  uint32_t joined = 0, rostered = 0, finished = 0;
  std::vector<int64_t> first_round(rounds, 0), last_round(rounds, 0);
  std::vector<epoll_event> events(1024);
  while (finished < n) {
    const int k = epoll_wait(ep, events.data(), int(events.size()), 60000);
    if (k <= 0) {
      std::fprintf(stderr, "fleet_sim: no progress in 60 s (%u of %u ranks finished)\n", finished,
                   n);
      break;
    }
    for (int e = 0; e < k; ++e) {
      SimRank& s = ranks[events[e].data.u32];
      try {
        Message m;
        while (!s.finished && s.link->try_recv(m, fleet::kMaxFleetBody)) {
          const bool was_joined = s.joined, had_roster = s.has_roster;
          if (m.type == MsgType::round) {
            const uint32_t step = m.body.at("step").get<uint32_t>();
            const int64_t now = mtperf::now_ns();
            if (step < rounds) {
              if (first_round[step] == 0) first_round[step] = now;
              last_round[step] = std::max(last_round[step], now);
            }
          }
          on_message(s, std::move(m), keyed);
          if (!was_joined && s.joined && ++joined == n) all_joined = seconds_since(t0);
          if (!had_roster && s.has_roster && ++rostered == n) all_roster = seconds_since(t0);
          if (s.finished) ++finished;
        }
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "fleet_sim: rank %u: %s\n", s.rank, ex.what());
        s.finished = true;
        ++finished;
        epoll_ctl(ep, EPOLL_CTL_DEL, s.link->fd(), nullptr);
      }
    }
  }
  coordinating.join();
  const double total = seconds_since(t0);
  std::vector<double> fanout_ms;
  for (uint32_t r = 0; r < rounds; ++r)
    if (first_round[r]) fanout_ms.push_back(double(last_round[r] - first_round[r]) / 1e6);
  std::sort(fanout_ms.begin(), fanout_ms.end());
  const std::string document = fleet::fleet_json(doc, {}).dump();
  size_t measured = 0;
  for (const auto& r : doc.results)
    measured += r.ok;
  std::printf("fleet_sim: %u ranks, %u rounds of %u pairs, %s\n", n, rounds, n / 2,
              keyed ? "keyed (sealed frames)" : "no key");
  std::printf("  all joined           %.3f s\n", all_joined);
  std::printf("  roster at every rank %.3f s (%zu bytes each)\n", all_roster,
              ranks[0].roster_bytes);
  if (!fanout_ms.empty())
    std::printf("  ROUND fan-out        median %.2f ms, max %.2f ms (first receipt to last)\n",
                fanout_ms[fanout_ms.size() / 2], fanout_ms.back());
  std::printf("  coordinator CPU      %.3f s in all, %.1f ms per round\n", coordinator_cpu,
              coordinator_cpu * 1000 / rounds);
  std::printf("  peak RSS             %ld MiB (the process: coordinator and simulated ranks)\n",
              peak_rss_kib() / 1024);
  std::printf("  document             %zu bytes, %zu of %zu pairs measured\n", document.size(),
              measured, doc.results.size());
  std::printf("  total                %.3f s\n", total);
  for (SimRank& s : ranks)
    close(s.link->fd());
  close(ep);
  return measured == doc.results.size() && doc.complete ? 0 : 1;
}
