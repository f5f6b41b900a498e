// fleet_sim: the real coordinator (fleet/coordinator.hpp) against N simulated ranks over real
// loopback sockets, to measure what the coordinator costs at a size no test bed here has.
//
//   fleet_sim [-n RANKS] [-r ROUNDS] [-k] [-a [-l FILE]]
//
// Defaults: 256 ranks, 5 rounds, keyed. The ranks are state machines on one thread (epoll over
// their connections) in a child process, so that the coordinator's process holds the
// coordinator alone: each joins as a rank does (HELLO with a nonce, the coordinator's proof
// checked, a JOIN with its MAC, every frame after it sealed), answers the clock exchanges, takes
// the ROSTER, and answers every ROUND at once with a result per run (no traffic: simulated
// figures, named as such in nothing the coordinator keeps).
//
// The plan: ROUNDS rounds of N/2 disjoint pairs; with -a the whole all-pairs plan (N-1 rounds,
// each pair both ways: 2 steps a round), the coordinator keeping no result (keep_results off):
// each streams to the results log FILE (default fleet_sim.results.jsonl) and its throughput into
// one N x N matrix of floats (fleet/figure_matrix.hpp). -a with -r runs the plan's first ROUNDS
// rounds and stops the coordinator, the plan and the matrix made whole all the same.
//
// Printed, one line each: the time until every rank joined (its JOIN taken: the first CLOCK
// came), until the ROSTER reached every rank, each step's ROUND fan-out (from its arrival at the
// first rank's socket to its arrival at the last's, the kernel's receive timestamps; median and
// max over the steps), the same from the simulator's reading of them, the coordinator thread's
// CPU per step, each process's peak RSS, and the document's size (or the results log's).
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/link.hpp"
#include "fleet/coordinator.hpp"
#include "fleet/figure_matrix.hpp"
#include "fleet/model.hpp"
#include "fleet/net.hpp"
#include "fleet/protocol.hpp"
#include "fleet/render.hpp"
#include "fleet/results_log.hpp"
#include "platform/clock.hpp"

namespace {

using mtperf::control::Link;
using mtperf::control::Message;
using mtperf::control::MsgType;
using nlohmann::json;
namespace fleet = mtperf::fleet;
namespace control = mtperf::control;

const std::string kKey = "fleet_sim key";

struct Options {
  uint32_t n = 256, rounds = 5;
  bool rounds_given = false, keyed = true, all_pairs = false;
  std::string log = "fleet_sim.results.jsonl";
};

struct SimRank {
  uint32_t rank = 0;
  std::unique_ptr<Link> link;
  std::string nonce;
  bool welcomed = false, joined = false, has_roster = false, finished = false;
  bool at_frame_start = true;  // the next byte to read begins a frame
  int64_t arrived_ns = 0;      // the frame being read: when its first byte reached the socket
  size_t roster_bytes = 0;
};

// Each step's ROUND: when it reached the first and the last rank, CLOCK_REALTIME ns.
struct Spread {
  std::vector<int64_t> first, last;
  void add(uint32_t step, int64_t t) {
    if (step >= first.size()) {
      first.resize(step + 1, 0);
      last.resize(step + 1, 0);
    }
    if (first[step] == 0 || t < first[step]) first[step] = t;
    last[step] = std::max(last[step], t);
  }
  std::vector<double> sorted_ms() const {
    std::vector<double> ms;
    for (size_t s = 0; s < first.size(); ++s)
      if (first[s]) ms.push_back(double(last[s] - first[s]) / 1e6);
    std::sort(ms.begin(), ms.end());
    return ms;
  }
};

// What the ranks' process measured, sent to the coordinator's process as JSON at its end.
struct SimReport {
  double all_joined = 0, all_roster = 0;
  size_t roster_bytes = 0;
  uint32_t joined = 0, rostered = 0, finished = 0;
  Spread arrival, receipt;
  bool stamped = true;  // every arrival had the kernel's timestamp
  long peak_rss_kib = 0;
};

double seconds_since(int64_t t0) {
  return double(mtperf::now_ns() - t0) / 1e9;
}

long status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::strlen(field));
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

// When the next unread byte reached the socket (the kernel's receive timestamp, SO_TIMESTAMPNS,
// CLOCK_REALTIME), peeked without reading it: 0 when nothing is there, -1 when something is
// (or the end of the connection) without a timestamp.
int64_t arrival_ns(int fd) {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control_buf[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control_buf;
  msg.msg_controllen = sizeof control_buf;
  const ssize_t n = ::recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); n > 0 && c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts{};
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    }
  }
  return -1;
}

void answer_welcome(SimRank& s, const Message& m, bool keyed) {
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
}

void answer_round(SimRank& s, const Message& m) {
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
}

// The rank's answer to one message.
void on_message(SimRank& s, const Message& m, bool keyed) {
  switch (m.type) {
    case MsgType::welcome:
      answer_welcome(s, m, keyed);
      return;
    case MsgType::clock:
      s.joined = true;
      control::send_message(*s.link, {MsgType::clock, {{"now_ns", mtperf::realtime_ns()}}}, 10000);
      return;
    case MsgType::roster:
      s.has_roster = true;
      s.roster_bytes = m.body.dump().size();
      return;
    case MsgType::round:
      answer_round(s, m);
      return;
    case MsgType::finish:
    case MsgType::error:
      s.finished = true;
      return;
    default:
      throw std::runtime_error("unexpected " + std::string(control::to_string(m.type)));
  }
}

// The ranks' connections, each with its HELLO sent and its receive timestamps on.
std::vector<SimRank> connect_ranks(uint32_t n, uint16_t port, int ep) {
  std::vector<SimRank> ranks(n);
  for (uint32_t r = 0; r < n; ++r) {
    SimRank& s = ranks[r];
    s.rank = r;
    s.link = std::make_unique<Link>(fleet::connect_tcp("127.0.0.1", port, 10000));
    int one = 1;
    setsockopt(s.link->fd(), SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
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
  return ranks;
}

// Every whole frame that has arrived on one rank's connection, answered; its ROUNDs' arrival
// (the kernel's timestamp of the frame's first byte) and receipt noted.
void drain(SimRank& s, SimReport& rep, uint32_t n, int64_t t0, bool keyed) {
  for (;;) {
    if (s.at_frame_start) {
      const int64_t at = arrival_ns(s.link->fd());
      if (at == 0) return;
      s.arrived_ns = at;
      s.at_frame_start = false;
    }
    Message m;
    if (!s.link->try_recv(m, fleet::kMaxFleetBody)) return;
    s.at_frame_start = true;
    if (m.type == MsgType::round) {
      const uint32_t step = m.body.at("step").get<uint32_t>();
      const int64_t now = mtperf::realtime_ns();
      rep.stamped = rep.stamped && s.arrived_ns > 0;
      rep.arrival.add(step, s.arrived_ns > 0 ? s.arrived_ns : now);
      rep.receipt.add(step, now);
    }
    const bool was_joined = s.joined, had_roster = s.has_roster;
    on_message(s, m, keyed);
    if (!was_joined && s.joined && ++rep.joined == n) rep.all_joined = seconds_since(t0);
    if (!had_roster && s.has_roster && ++rep.rostered == n) rep.all_roster = seconds_since(t0);
    if (s.finished) return;
  }
}

// The ranks' process: every rank until FINISH (or ERROR), or 60 s without progress.
SimReport simulate(uint32_t n, uint16_t port, int64_t t0, bool keyed) {
  SimReport rep;
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  std::vector<SimRank> ranks = connect_ranks(n, port, ep);
  std::vector<epoll_event> events(1024);
  while (rep.finished < n) {
    const int k = epoll_wait(ep, events.data(), int(events.size()), 60000);
    if (k <= 0) {
      std::fprintf(stderr, "fleet_sim: no progress in 60 s (%u of %u ranks finished)\n",
                   rep.finished, n);
      break;
    }
    for (int e = 0; e < k; ++e) {
      SimRank& s = ranks[events[e].data.u32];
      if (s.finished) continue;
      try {
        drain(s, rep, n, t0, keyed);
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "fleet_sim: rank %u: %s\n", s.rank, ex.what());
        s.finished = true;
      }
      if (s.finished) {
        ++rep.finished;
        epoll_ctl(ep, EPOLL_CTL_DEL, s.link->fd(), nullptr);
      }
    }
  }
  rep.roster_bytes = ranks[0].roster_bytes;
  rep.peak_rss_kib = status_kib("VmHWM:");
  for (SimRank& s : ranks)
    close(s.link->fd());
  close(ep);
  return rep;
}

json to_json(const Spread& s) {
  return {{"first", s.first}, {"last", s.last}};
}

Spread spread_from(const json& j) {
  return {j.at("first").get<std::vector<int64_t>>(), j.at("last").get<std::vector<int64_t>>()};
}

json to_json(const SimReport& r) {
  return {{"all_joined", r.all_joined},     {"all_roster", r.all_roster},
          {"roster_bytes", r.roster_bytes}, {"finished", r.finished},
          {"arrival", to_json(r.arrival)},  {"receipt", to_json(r.receipt)},
          {"stamped", r.stamped},           {"peak_rss_kib", r.peak_rss_kib}};
}

SimReport report_from(const json& j) {
  SimReport r;
  r.all_joined = j.at("all_joined");
  r.all_roster = j.at("all_roster");
  r.roster_bytes = j.at("roster_bytes");
  r.finished = j.at("finished");
  r.arrival = spread_from(j.at("arrival"));
  r.receipt = spread_from(j.at("receipt"));
  r.stamped = j.at("stamped");
  r.peak_rss_kib = j.at("peak_rss_kib");
  return r;
}

// Forks the ranks' process; its report comes back on the returned pipe's read end.
int start_ranks(const Options& o, uint16_t port, int64_t t0, pid_t& child) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    close(fds[0]);
    const std::string text = to_json(simulate(o.n, port, t0, o.keyed)).dump();
    for (size_t done = 0; done < text.size();) {
      const ssize_t w = ::write(fds[1], text.data() + done, text.size() - done);
      if (w <= 0 && errno != EINTR) _exit(1);
      if (w > 0) done += size_t(w);
    }
    _exit(0);
  }
  close(fds[1]);
  return fds[0];
}

SimReport wait_ranks(int fd, pid_t child) {
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    text.append(buf, size_t(r));
  }
  close(fd);
  int status = 0;
  waitpid(child, &status, 0);
  if (text.empty()) throw std::runtime_error("the ranks' process ended without its report");
  return report_from(json::parse(text));
}

bool parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-n" && i + 1 < argc) {
      o.n = uint32_t(std::atoi(argv[++i]));
    } else if (a == "-r" && i + 1 < argc) {
      o.rounds = uint32_t(std::atoi(argv[++i]));
      o.rounds_given = true;
    } else if (a == "-k") {
      o.keyed = false;
    } else if (a == "-a") {
      o.all_pairs = true;
    } else if (a == "-l" && i + 1 < argc) {
      o.log = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: fleet_sim [-n RANKS] [-r ROUNDS] [-k (no key)] [-a (all-pairs) "
                   "[-l RESULTS_LOG]]\n");
      return false;
    }
  }
  if (o.n < 2 || o.n % 2 || o.rounds < 1) {
    std::fprintf(stderr, "fleet_sim: an even number of ranks, at least 2, and a round\n");
    return false;
  }
  if (o.all_pairs && (!o.rounds_given || o.rounds > o.n - 1)) o.rounds = o.n - 1;
  return true;
}

bool raise_fd_limit(uint32_t n) {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur >= 2 * n + 64) return true;
  std::fprintf(stderr, "fleet_sim: %u ranks need %u descriptors; the limit is %lu\n", n, 2 * n + 64,
               static_cast<unsigned long>(rl.rlim_cur));
  return false;
}

fleet::CoordinatorOptions coordinator_options(const Options& o) {
  fleet::CoordinatorOptions co;
  co.bind = "127.0.0.1";
  co.key = o.keyed ? kKey : "";
  co.size = o.n;
  co.join_timeout_ms = 120000;
  co.transports = {"socket"};
  co.test = test_of();
  co.workload = "stream";
  co.headline = "throughput";
  co.pair_timeout_ms = 60000;
  co.start_delay_ms = 20;
  if (o.all_pairs) {
    co.pattern = "all-pairs";
    co.keep_results = false;
  } else {
    co.pairs_text = pairs_text(o.n, o.rounds);
    co.pairs_name = "fleet_sim";
  }
  return co;
}

// -a: what the coordinator's process keeps of the results, and its RSS step by step.
struct Streamed {
  std::unique_ptr<fleet::ResultsLog> log;
  std::unique_ptr<fleet::FigureMatrix> matrix;
  size_t results = 0, ok = 0, cap = 0;
  uint32_t last_step = UINT32_MAX;
  long rss_first_step_kib = 0, rss_last_step_kib = 0;

  void take(const fleet::FleetDoc& d, const fleet::PairResult& r, fleet::Coordinator& c) {
    log->write(d, r);
    matrix->take(r);
    ++results;
    ok += r.ok;
    if (r.step != last_step) {
      last_step = r.step;
      const long rss = status_kib("VmRSS:");
      if (rss_first_step_kib == 0) rss_first_step_kib = rss;
      rss_last_step_kib = rss;
    }
    if (results == cap) c.stop();  // -r: the plan's first rounds only
  }
};

void print_spreads(const SimReport& rep) {
  const std::vector<double> arrival = rep.arrival.sorted_ms(), receipt = rep.receipt.sorted_ms();
  if (arrival.empty()) return;
  std::printf("  ROUND fan-out        median %.2f ms, max %.2f ms (%s, first rank to last)\n",
              arrival[arrival.size() / 2], arrival.back(),
              rep.stamped ? "arrival at the ranks' sockets, kernel timestamps"
                          : "some without a kernel timestamp: receipt");
  std::printf(
      "  ROUND read           median %.2f ms, max %.2f ms (the simulator's one thread "
      "reading them, first to last)\n",
      receipt[receipt.size() / 2], receipt.back());
}

void print_streamed(const Streamed& st, const Options& o) {
  std::printf("  results log          %s: %zu lines, %zu of %zu pairs measured\n", o.log.c_str(),
              st.log->lines(), st.ok, st.results);
  std::printf("  figure matrix        %u x %u floats, %zu MiB, %zu cells filled\n", o.n, o.n,
              st.matrix->bytes() >> 20, st.matrix->filled());
  std::printf("  coordinator RSS      %ld MiB after the first step, %ld MiB after the last\n",
              st.rss_first_step_kib / 1024, st.rss_last_step_kib / 1024);
}

void print_header(const Options& o) {
  const char* key = o.keyed ? "keyed (sealed frames)" : "no key";
  if (o.all_pairs)
    std::printf(
        "fleet_sim: %u ranks, all-pairs: %u rounds of %u pairs both ways, the first %u "
        "run (%u steps), %s\n",
        o.n, o.n - 1, o.n / 2, o.rounds, 2 * o.rounds, key);
  else
    std::printf("fleet_sim: %u ranks, %u rounds of %u pairs, %s\n", o.n, o.rounds, o.n / 2, key);
}

// The figures of the run, a line each; true when every pair was measured.
bool print_results(const Options& o, const fleet::FleetDoc& doc, const SimReport& rep,
                   const Streamed& st, double coordinator_cpu) {
  print_header(o);
  std::printf("  all joined           %.3f s\n", rep.all_joined);
  std::printf("  roster at every rank %.3f s (%zu bytes each)\n", rep.all_roster, rep.roster_bytes);
  print_spreads(rep);
  std::printf("  coordinator CPU      %.3f s in all, %.1f ms per step\n", coordinator_cpu,
              coordinator_cpu * 1000 / double(std::max<size_t>(doc.steps.size(), 1)));
  std::printf("  peak RSS             coordinator's process %ld MiB, ranks' process %ld MiB\n",
              status_kib("VmHWM:") / 1024, rep.peak_rss_kib / 1024);
  if (o.all_pairs) {
    print_streamed(st, o);
    return rep.finished == o.n && st.ok == st.results && st.results == size_t(o.rounds) * o.n;
  }
  size_t measured = 0;
  for (const auto& r : doc.results)
    measured += r.ok;
  std::printf("  document             %zu bytes, %zu of %zu pairs measured\n",
              fleet::fleet_json(doc, {}).dump().size(), measured, doc.results.size());
  return rep.finished == o.n && measured == doc.results.size() && doc.complete;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, o)) return 2;
  if (!raise_fd_limit(o.n)) return 1;
  fleet::CoordinatorOptions co = coordinator_options(o);
  Streamed st;
  fleet::Coordinator* self = nullptr;
  if (o.all_pairs) {
    st.cap = o.rounds < o.n - 1 ? size_t(o.rounds) * o.n : 0;
    co.on_result = [&](const fleet::FleetDoc& d, const fleet::PairResult& r) {
      st.take(d, r, *self);
    };
  }
  fleet::Coordinator coordinator(co);
  self = &coordinator;
  const int64_t t0 = mtperf::now_ns();
  pid_t child = -1;
  const int from_ranks = start_ranks(o, coordinator.port(), t0, child);
  if (o.all_pairs) {  // after the fork: the ranks' process holds none of it
    st.log = std::make_unique<fleet::ResultsLog>(o.log);
    st.matrix = std::make_unique<fleet::FigureMatrix>(o.n, "throughput");
  }
  const double c0 = thread_cpu_s();
  const fleet::FleetDoc doc = coordinator.run();
  const double coordinator_cpu = thread_cpu_s() - c0;
  const SimReport rep = wait_ranks(from_ranks, child);
  const double total = seconds_since(t0);
  const bool ok = print_results(o, doc, rep, st, coordinator_cpu);
  std::printf("  total                %.3f s\n", total);
  return ok ? 0 : 1;
}
