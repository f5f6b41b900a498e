#include "fleet/run.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <system_error>
#include <thread>

#include "fleet/coordinator.hpp"
#include "fleet/member.hpp"
#include "fleet/net.hpp"
#include "fleet/pair_run.hpp"
#include "fleet/render.hpp"
#include "fleet/results_log.hpp"
#include "platform/interrupt.hpp"
#include "transports/api/registry.hpp"
#include "workloads/kind.hpp"

namespace mtperf::fleet {
namespace {

// A thread, or an error that names the limit (never std::terminate from a constructor).
template <typename F>
std::thread start_thread(const char* what, F&& f) {
  try {
    return std::thread(std::forward<F>(f));
  } catch (const std::system_error& e) {
    throw std::runtime_error(std::string("cannot start the ") + what + " thread: " + e.what() +
                             " (the process's thread limit, ulimit -u, or memory)");
  }
}

// Joins a thread when the scope ends, however it ends.
struct Joining {
  std::thread& t;
  ~Joining() {
    if (t.joinable()) t.join();
  }
};

MemberOptions member_options(const FleetRun& r, const nlohmann::json& test,
                             std::atomic<bool>& stop) {
  MemberOptions m;
  m.launch = r.launch;
  m.coordinator_port = r.port;
  m.key = r.key;
  m.bind = r.bind;
  m.test = test;
  m.usable = usable_transports();
  m.max_memory = r.run.client.max_memory;
  m.join_timeout_ms = r.join_timeout_ms;
  m.lldp = r.groups.from == "lldp";
  m.stop = &stop;
  m.run_pair = [run = r.run, names = r.transports, key = r.key](uint32_t t,
                                                                const std::string& server) {
    if (t >= names.size()) {
      PairResult p;
      p.error = "transport index " + std::to_string(t) + " is not in the fleet's list";
      return p;
    }
    RunRequest one = run;
    one.client.key = key;
    return run_pair(one, names[t], server);
  };
  return m;
}

CoordinatorOptions coordinator_options(const FleetRun& r, const nlohmann::json& test) {
  CoordinatorOptions c;
  c.bind = r.bind;
  c.port = r.port;
  if (!r.launch.coordinator.empty()) {
    std::string host;
    split_host_port(r.launch.coordinator, c.port, host, c.port);
  }
  c.key = r.key;
  c.job = r.launch.job;
  c.size = r.launch.size;
  c.join_timeout_ms = r.join_timeout_ms;
  c.need_all = r.need_all;
  c.pattern = r.pattern;
  c.pairs_text = r.pairs_text;
  c.pairs_name = r.pairs_name;
  c.groups = r.groups;
  c.concurrency = r.concurrency;
  c.transports = r.transports;
  c.test = test;
  c.workload = std::string(to_string(r.run.spec.workload));
  c.headline = matrix_figures(c.workload).front();
  c.pair_timeout_ms = r.pair_timeout_ms;
  c.launcher = r.launch.launcher;
  c.launcher_why = r.launch.why;
  c.retest = r.retest;
  c.retests = r.retests;
  c.line_rate_bps = r.line_rate_bps;
  for (const std::string& t : r.transports)
    c.verbs.push_back(find_transport(t).caps.one_sided);  // RDMA verbs: the port's rate
  return c;
}

}  // namespace

std::vector<std::string> usable_transports() {
  std::vector<std::string> out;
  for (const TransportEntry& e : transports())
    if (e.line == nullptr && e.probe("/").usable) out.emplace_back(e.name);
  return out;
}

FleetOutcome run(const FleetRun& r, std::atomic<bool>& stop) {
  catch_interrupts();
  nlohmann::json test = r.run.spec;
  test.erase("transport");
  MemberOptions m = member_options(r, test, stop);
  FleetOutcome out;
  std::unique_ptr<Coordinator> coordinator;
  std::unique_ptr<ResultsLog> log;  // outlives the coordinator's thread, which writes it
  std::atomic<Coordinator*> coordinator_ptr{nullptr};
  std::atomic<bool> done{false};
  // Ctrl-C / SIGTERM: the member and the coordinator end at their next wait.
  std::thread watch = start_thread("interrupt watcher", [&] {
    while (!done) {
      if (interrupts() > 0 || stop) {
        stop = true;
        if (auto* c = coordinator_ptr.load()) c->stop();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  struct Done {
    std::atomic<bool>& done;
    std::thread& t;
    ~Done() {
      done = true;
      t.join();
    }
  } watching{done, watch};
  std::thread coordinating;
  Joining coordinator_joined{coordinating};
  if (r.launch.rank == 0) {
    CoordinatorOptions co = coordinator_options(r, test);
    if (!r.results_log.empty()) {
      log = std::make_unique<ResultsLog>(r.results_log);
      co.on_result = [&log](const FleetDoc& d, const PairResult& p) { log->write(d, p); };
    }
    coordinator = std::make_unique<Coordinator>(std::move(co));
    const uint16_t port = coordinator->port();
    const std::string here = r.bind.empty() || r.bind == "0.0.0.0" ? "127.0.0.1" : r.bind;
    m.launch.coordinator = join_host_port(here, port);
    if (!r.launch.rendezvous.empty()) {
      const std::string advertised = r.bind.empty() || r.bind == "0.0.0.0" ? host_name() : r.bind;
      write_rendezvous(r.launch.rendezvous, r.launch.job, join_host_port(advertised, port));
    }
    coordinator_ptr = coordinator.get();
    out.coordinated = true;
    coordinating = start_thread("coordinator", [&] {
      try {
        out.doc = coordinator->run();
      } catch (const std::exception& e) {
        out.doc.errors.push_back(std::string("the coordinator failed: ") + e.what());
      }
    });
  }
  try {
    run_member(m);
  } catch (const std::exception& e) {
    out.member_error = e.what();
  }
  if (coordinating.joinable()) coordinating.join();
  if (out.coordinated && !r.launch.rendezvous.empty()) std::remove(r.launch.rendezvous.c_str());
  out.interrupted = interrupts() > 0;
  return out;
}

}  // namespace mtperf::fleet
