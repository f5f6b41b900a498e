#include "harness/sweep_run.hpp"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include <fmt/format.h>

#include "control/local_server.hpp"
#include "harness/hosts_run.hpp"
#include "harness/line_run.hpp"
#include "platform/interrupt.hpp"
#include "platform/link_mtu.hpp"
#include "stats/fairness.hpp"
#include "workloads/kind.hpp"

namespace mtperf {
namespace {

SweepCell cell_of(int64_t at, const Report& r) {
  const Summary& s = r.summary;
  bool rr = kind_of(r.spec.workload).headline == Headline::transactions;
  SweepCell c;
  c.at = at;
  c.value = rr ? s.transaction_rate : s.throughput_bps;
  if (s.local_cpu) {
    c.local_cpu = s.local_cpu->host.total.util;
    if (s.local_cpu->service_demand > 0) c.local_sd = s.local_cpu->service_demand;
  }
  if (s.remote_cpu) {
    c.remote_cpu = s.remote_cpu->host.total.util;
    if (s.remote_cpu->service_demand > 0) c.remote_sd = s.remote_cpu->service_demand;
  }
  if (rr && s.latency && s.latency->count > 0) {
    c.latency_mean_us = s.latency->mean_us;
    c.latency_p99_us = s.latency->p99_us;
  }
  if (s.adapters.size() > 1) {
    std::vector<double> per;
    for (const auto& g : s.adapters)
      per.push_back(rr ? g.transaction_rate : g.throughput_bps);
    c.jain_fairness = jain_index(per);
  }
  c.errors = s.errors;
  return c;
}

SweepCell failed_cell(int64_t at, const std::string& why) {
  SweepCell c;
  c.at = at;
  c.errors.push_back(why);
  return c;
}

// Runs one cell on the hosts at hand.
using CellRunner = std::function<Report(const RunRequest&)>;
// Called before each column's runs with its axis value (--mtu sets the links).
using ColumnSetup = std::function<void(int64_t)>;

Sweep sweep_cells(const SweepRequest& q, const CellRunner& runner, const ColumnSetup& setup = {}) {
  Sweep sweep = q.layout;
  for (size_t col = 0; col < sweep.axis_values.size() && interrupts() == 0; ++col) {
    const int64_t at = sweep.axis_values[col];
    if (setup) {
      try {
        setup(at);
      } catch (const std::exception& e) {
        // Every row of the column failed for the same reason; the sweep goes on.
        for (auto& row : sweep.rows)
          row.cells.push_back(failed_cell(at, e.what()));
        continue;
      }
    }
    for (size_t r = 0; r < sweep.rows.size() && interrupts() == 0; ++r) {
      const RunRequest& o = q.runs.at(col).at(r);
      sweep.transport = o.spec.transport;
      sweep.length_s = o.spec.duration_s;
      std::fprintf(stderr, "  %s %s...\n", sweep.rows[r].label.c_str(),
                   axis_cell_phrase(sweep.axis, at).c_str());
      try {
        sweep.rows[r].cells.push_back(cell_of(at, runner(o)));
      } catch (const std::exception& e) {
        sweep.rows[r].cells.push_back(failed_cell(at, e.what()));
      }
    }
  }
  return sweep;
}

// The testbed's links, both ends: what --mtu sets.
std::vector<NamespacedLink> both_ends(const TestHosts& hosts) {
  std::vector<NamespacedLink> out;
  for (const auto& l : hosts.links) {
    out.push_back({hosts.near_ns, l.near_if});
    out.push_back({hosts.far_ns, l.far_if});
  }
  return out;
}

// The links a sweep needs: as many as its largest adapter count, else one.
int links_needed(const SweepRequest& q) {
  return q.layout.axis == SweepAxis::adapters ? int(q.layout.axis_values.back()) : 1;
}

Sweep sweep_over_line(const SweepRequest& q, const LineHook& hook) {
  // A transport that brings its own line runs over it: the one --testbed names, or one built for
  // the sweep with as many adapter pairs as needed (removed when the sweep ends).
  const RunRequest& probe = q.runs.back().back();
  const Line line = line_for(probe, q.testbed, hook, links_needed(q));
  Sweep sweep = sweep_cells(q, [&](const RunRequest& o) { return run_on_hosts(o, line.hosts); });
  sweep.hosts = line.text;
  return sweep;
}

Sweep sweep_over_testbed(const SweepRequest& q) {
  check_testbed_name(*q.testbed);
  std::unique_ptr<Testbed> bed;
  TestHosts hosts;
  if (std::filesystem::exists(testbed_state_path(*q.testbed))) {
    hosts = hosts_from_state(read_testbed_state(*q.testbed));
  } else {
    TestbedOptions t;
    t.adapters = links_needed(q);
    t.tag = *q.testbed;
    bed = std::make_unique<Testbed>(t);  // removed when the sweep ends
    hosts = bed->hosts();
  }
  // Declared after the testbed, so the MTUs are put back before a built testbed goes; also when
  // a run throws or the sweep is interrupted.
  std::unique_ptr<LinkMtuOverride> mtu;
  ColumnSetup setup;
  if (q.layout.axis == SweepAxis::mtu) {
    mtu = std::make_unique<LinkMtuOverride>(both_ends(hosts));
    setup = [&](int64_t at) { mtu->set(int(at)); };
  }
  Sweep sweep = sweep_cells(
      q, [&](const RunRequest& o) { return run_on_hosts(o, hosts); }, setup);
  sweep.hosts = fmt::format("testbed {} -> {} ({}, {} link{})", hosts.near_ns, hosts.far_ns,
                            hosts.kind, hosts.links.size(), hosts.links.size() == 1 ? "" : "s");
  return sweep;
}

Sweep sweep_here(const SweepRequest& q) {
  std::unique_ptr<control::LocalServer> local;
  std::string where;
  Sweep sweep = sweep_cells(q, [&](const RunRequest& o) {
    control::ClientOptions client = o.client;
    if (o.embedded) {
      if (!local) {
        local = std::make_unique<control::LocalServer>(
            control::own_server_options(o.client.max_memory));
      }
      control::aim_at_own_server(client, local->address());
    }
    where = client.server;
    return run_placed(o, client);
  });
  const char* what = q.layout.axis == SweepAxis::adapters ? "this host's adapters" : "this host";
  sweep.hosts = std::string(what) + " -> " + (local ? "an in-process server" : where);
  return sweep;
}

}  // namespace

Sweep run_sweep(const SweepRequest& q) {
  if (q.runs.empty() || q.runs.front().empty())
    throw std::invalid_argument("a sweep needs a column and a row");
  if (const LineHook* line = line_hook_of(q.runs.front().front().spec.transport))
    return sweep_over_line(q, *line);
  return q.testbed ? sweep_over_testbed(q) : sweep_here(q);
}

}  // namespace mtperf
