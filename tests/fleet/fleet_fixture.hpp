#pragma once
// A fleet in one process over loopback, for the tests: a short stream, the coordinator's and a
// member's options, members on threads.
#include <string>
#include <thread>
#include <vector>

#include "fleet/coordinator.hpp"
#include "fleet/member.hpp"
#include "fleet/pair_run.hpp"

namespace mtperf::fleet::testing {

inline RunRequest short_stream() {
  RunRequest r;
  r.spec.workload = Workload::stream;
  r.spec.duration_s = 0.3;
  r.spec.warmup_s = 0.1;
  r.spec.msg_size = 16384;
  r.embedded = false;
  return r;
}

inline nlohmann::json test_of(const RunRequest& r) {
  nlohmann::json j = r.spec;
  j.erase("transport");
  return j;
}

inline CoordinatorOptions coordinator_options(uint32_t size, const RunRequest& r) {
  CoordinatorOptions c;
  c.bind = "127.0.0.1";
  c.size = size;
  c.join_timeout_ms = 10000;
  c.transports = {"socket"};
  c.test = test_of(r);
  c.workload = "stream";
  c.headline = "throughput";
  c.pair_timeout_ms = 10000;
  c.start_delay_ms = 50;
  c.launcher = "command line";
  return c;
}

inline MemberOptions member_options(uint32_t rank, uint32_t size, uint16_t port,
                                    const RunRequest& r, const std::string& key = "") {
  MemberOptions m;
  m.launch.launcher = "command line";
  m.launch.rank = rank;
  m.launch.size = size;
  m.launch.coordinator = "127.0.0.1:" + std::to_string(port);
  m.key = key;
  m.bind = "127.0.0.1";
  m.test = test_of(r);
  m.usable = {"socket"};
  m.join_timeout_ms = 10000;
  m.run_pair = [r, key](uint32_t, const std::string& server) {
    RunRequest o = r;
    o.client.key = key;
    return run_pair(o, "socket", server);
  };
  return m;
}

// Members on threads; each one's error ("" when it reached FINISH).
struct Members {
  std::vector<std::thread> threads;
  std::vector<std::string> errors;
  explicit Members(size_t n) : errors(n) {}
  void start(size_t i, MemberOptions m) {
    threads.emplace_back([this, i, m] {
      try {
        run_member(m);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  void join() {
    for (auto& t : threads)
      t.join();
  }
};

}  // namespace mtperf::fleet::testing
