// Placement policy on the server8 fixture (8 NICs, 4 PCI controllers, 2 NUMA nodes) and on a
// veth-only topology.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "platform/affinity.hpp"
#include "platform/placement.hpp"

using mtperf::BindMode;
using mtperf::PlacementRequest;

namespace {

const mtperf::Topology& server8() {
  static const auto t = mtperf::read_topology(std::string(MTPERF_FIXTURES) + "/topology/server8");
  return t;
}

PlacementRequest request(const std::string& adapters, const std::string& bind = "irq",
                         int per_controller = 0, int flows = 1) {
  PlacementRequest r;
  mtperf::parse_adapter_selection(adapters, r);
  mtperf::parse_bind(bind, r);
  r.per_controller = per_controller;
  r.flows_per_adapter = flows;
  return r;
}

std::vector<std::string> chosen(const mtperf::Placement& p) {
  return p.adapters;
}

// Two veth adapters without controllers or IRQs, as a testbed shows them.
mtperf::Topology veth_pair() {
  mtperf::Topology t;
  for (int i = 0; i < 2; ++i) {
    mtperf::Adapter a;
    a.name = "mtperf" + std::to_string(i) + "n";
    a.ifindex = i + 2;
    a.type = mtperf::LinkType::virtual_link;
    a.kind = "veth";
    a.up = true;
    t.adapters.push_back(a);
  }
  t.online_cpus = {0, 1};
  return t;
}

}  // namespace

TEST_CASE("auto:N spreads over controllers round-robin") {
  auto p = mtperf::place(server8(), request("auto:4"));
  CHECK(chosen(p) == std::vector<std::string>{"ens1f0", "ens2f0", "ens3f0", "ens4f0"});
  p = mtperf::place(server8(), request("auto:6"));
  CHECK(chosen(p) ==
        std::vector<std::string>{"ens1f0", "ens2f0", "ens3f0", "ens4f0", "ens1f1", "ens2f1"});
  p = mtperf::place(server8(), request("auto:2"));
  CHECK(chosen(p) == std::vector<std::string>{"ens1f0", "ens2f0"});
}

TEST_CASE("auto:N skips loopback, down and virtual adapters") {
  // ens4f1 has no carrier, lo is loopback, docker0 is virtual: 7 qualify.
  auto p = mtperf::place(server8(), request("auto:7"));
  CHECK(chosen(p) == std::vector<std::string>{"ens1f0", "ens2f0", "ens3f0", "ens4f0", "ens1f1",
                                              "ens2f1", "ens3f1"});
  CHECK_THROWS_WITH(mtperf::place(server8(), request("auto:8")),
                    Catch::Contains("only 7 qualify") && Catch::Contains("ens4f1 (down)") &&
                        Catch::Contains("lo (loopback)") && Catch::Contains("docker0 (down)"));
}

TEST_CASE("per-controller K is honoured") {
  auto p = mtperf::place(server8(), request("auto:4", "irq", 1));
  CHECK(chosen(p) == std::vector<std::string>{"ens1f0", "ens2f0", "ens3f0", "ens4f0"});
  CHECK_THROWS_WITH(mtperf::place(server8(), request("auto:5", "irq", 1)),
                    Catch::Contains("only 4 qualify with at most 1 per controller"));
  p = mtperf::place(server8(), request("auto:7", "irq", 2));
  CHECK(chosen(p).size() == 7);
  CHECK_THROWS_WITH(mtperf::place(server8(), request("ens1f0,ens1f1", "irq", 1)),
                    Catch::Contains("share controller pci0000:00"));
}

TEST_CASE("bind irq picks the CPU that takes the adapter's interrupts") {
  auto p = mtperf::place(server8(), request("auto:4", "irq", 1, 2));
  REQUIRE(p.flows.size() == 8);
  // Two flows per adapter spread over its queue IRQ CPUs; the link/async vectors on CPU 0 are
  // not packet interrupts and are not used.
  const int expected[][2] = {{0, 1}, {8, 9}, {16, 17}, {24, 25}};
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = 0; j < 2; ++j) {
      const auto& f = p.flows[i * 2 + j];
      INFO(f.adapter << " flow " << j);
      CHECK(f.worker_cpu == expected[i][j]);
      CHECK(f.worker_cpus == std::vector<int>{expected[i][j]});
      CHECK(f.adapter_flow == static_cast<int>(j));
      CHECK(f.numa_node == (i < 2 ? 0 : 1));
    }
  }
  CHECK(p.flows[2].controller == "pci0000:40");
  CHECK(p.flows[2].irq_cpus == std::vector<int>{8, 9, 10, 11});
  CHECK(p.notes.empty());
  // More flows than IRQ CPUs wrap around.
  p = mtperf::place(server8(), request("ens3f1", "irq", 0, 5));
  std::vector<int> cpus;
  for (const auto& f : p.flows)
    cpus.push_back(f.worker_cpu);
  CHECK(cpus == std::vector<int>{20, 21, 22, 23, 20});
}

TEST_CASE("bind numa, a CPU list and none") {
  auto p = mtperf::place(server8(), request("ens1f0,ens4f0", "numa"));
  CHECK(mtperf::format_cpu_list(p.flows[0].worker_cpus) == "0-15");
  CHECK(mtperf::format_cpu_list(p.flows[1].worker_cpus) == "16-31");
  CHECK(p.flows[0].worker_cpu == -1);
  p = mtperf::place(server8(), request("ens1f0,ens2f0", "2,5", 0, 2));
  std::vector<int> cpus;
  for (const auto& f : p.flows)
    cpus.push_back(f.worker_cpu);
  CHECK(cpus == std::vector<int>{2, 5, 2, 5});
  CHECK_FALSE(p.notes.empty());  // CPU 2 and 5 each serve two adapters
  p = mtperf::place(server8(), request("ens1f0", "none"));
  CHECK(p.flows[0].worker_cpu == -1);
  CHECK(p.flows[0].worker_cpus.empty());
}

TEST_CASE("adapters without IRQs fall back to given CPUs or say why they are unbound") {
  auto t = veth_pair();
  auto r = request("auto:2", "irq", 1, 2);
  CHECK_THROWS_WITH(mtperf::place(t, r), Catch::Contains("virtual"));
  r.allow_virtual = true;
  auto p = mtperf::place(t, r);
  REQUIRE(p.flows.size() == 4);
  for (const auto& f : p.flows) {
    CHECK(f.worker_cpu == -1);
    CHECK_THAT(f.reason, Catch::Contains("no IRQs") && Catch::Contains("not bound"));
  }
  r.fallback_cpus = {1, 0};
  p = mtperf::place(t, r);
  std::vector<int> cpus;
  for (const auto& f : p.flows)
    cpus.push_back(f.worker_cpu);
  CHECK(cpus == std::vector<int>{1, 0, 1, 0});
  CHECK_THAT(p.flows[0].reason, Catch::Contains("fallback CPU 1"));
}

TEST_CASE("bad requests are rejected with the reason") {
  PlacementRequest r;
  CHECK_THROWS_WITH(mtperf::parse_adapter_selection("auto:0", r), Catch::Contains("auto:N"));
  CHECK_THROWS_WITH(mtperf::parse_adapter_selection("auto:x", r), Catch::Contains("auto:N"));
  CHECK_THROWS_WITH(mtperf::parse_adapter_selection("eth0,,eth1", r),
                    Catch::Contains("not an interface name"));
  CHECK_THROWS_WITH(mtperf::parse_adapter_selection("averyveryverylongname", r),
                    Catch::Contains("not an interface name"));
  CHECK_THROWS_WITH(mtperf::parse_bind("irqs", r),
                    Catch::Contains("'irqs' is not irq, numa, none"));
  CHECK_THROWS_WITH(mtperf::place(server8(), request("eth9")),
                    Catch::Contains("unknown adapter 'eth9'") && Catch::Contains("ens1f0"));
  CHECK_THROWS_WITH(mtperf::place(server8(), request("ens4f1")), Catch::Contains("is down"));
  CHECK_THROWS_WITH(mtperf::place(server8(), request("ens1f0,ens1f0")),
                    Catch::Contains("listed twice"));
  auto bad = request("ens1f0");
  bad.flows_per_adapter = 0;
  CHECK_THROWS_WITH(mtperf::place(server8(), bad), Catch::Contains("flows per adapter"));
}

TEST_CASE("placement renders as JSON and text") {
  auto p = mtperf::place(server8(), request("auto:2", "irq", 1, 1));
  auto j = mtperf::to_json(p);
  CHECK(j["bind"] == "irq");
  CHECK(j["adapters"] == nlohmann::json({"ens1f0", "ens2f0"}));
  CHECK(j["flows"][1]["worker_cpu"] == 8);
  CHECK(j["flows"][1]["controller"] == "pci0000:40");
  std::string text = mtperf::render_text(p);
  CHECK_THAT(text, Catch::Contains("ens2f0") && Catch::Contains("pci0000:40") &&
                       Catch::Contains("takes ens2f0's interrupts"));
}
