#include <string>

#include <catch2/catch.hpp>

#include "platform/interrupts.hpp"

using namespace mtperf;

namespace {

std::string fixture(const std::string& host, const std::string& t) {
  return std::string(MTPERF_FIXTURES) + "/proc/" + host + "/" + t;
}

const IrqRow& row(const InterruptSnapshot& s, const std::string& name) {
  for (const auto& r : s.irqs) {
    if (r.name == name) return r;
  }
  FAIL("no row " << name);
  throw;
}

const IrqRate& rate(const InterruptRates& r, const std::string& name) {
  for (const auto& i : r.irqs) {
    if (i.name == name) return i;
  }
  FAIL("no rate " << name);
  throw;
}

}  // namespace

TEST_CASE("parse the 8-CPU /proc/interrupts", "[interrupts]") {
  const auto s = read_interrupt_snapshot(fixture("host8", "t0"));
  REQUIRE(s.cpu_ids == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  const auto& q3 = row(s, "134");
  CHECK(q3.numbered);
  CHECK(q3.chip == "IR-PCI-MSI-0000:3b:00.0");
  CHECK(q3.hwirq == "4-edge");
  CHECK(q3.actions == std::vector<std::string>{"ens1f0-TxRx-3"});
  CHECK(q3.per_cpu == std::vector<uint64_t>{0, 0, 0, 882137159, 4414, 0, 0, 0});
  CHECK(q3.total == 882137159 + 4414);
  const auto& shared = row(s, "16");
  CHECK(shared.hwirq == "16-fasteoi");
  CHECK(shared.actions == std::vector<std::string>{"ehci_hcd:usb1", "i801_smbus"});
  const auto& loc = row(s, "LOC");
  CHECK_FALSE(loc.numbered);
  CHECK(loc.description == "Local timer interrupts");
  CHECK(loc.per_cpu.size() == 8);
  CHECK(loc.per_cpu[7] == 40902233);
  const auto& err = row(s, "ERR");
  CHECK(err.per_cpu.empty());
  CHECK(err.total == 0);
  CHECK(row(s, "PIN").per_cpu.size() == 8);
  REQUIRE(s.softirq_cpu_ids.size() == 8);
  REQUIRE(s.softirqs.size() == 10);
  CHECK(s.softirqs[3].kind == "NET_RX");
  CHECK(s.softirqs[3].per_cpu[0] == 301882211);
}

TEST_CASE("8-CPU interrupt and softirq rates, exactly", "[interrupts]") {
  const auto r = rates(read_interrupt_snapshot(fixture("host8", "t0")),
                       read_interrupt_snapshot(fixture("host8", "t1")), 10.0);
  REQUIRE(r.cpu_ids == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  // Device IRQs: ens1f0-TxRx-q 12000/s on CPU q, ens1f1-TxRx-q 5000/s on CPU 4+q, acpi 1/s on
  // CPU0, the ens1f0 misc vector 2/s on CPU2.
  CHECK(r.per_cpu_device ==
        std::vector<double>{12001, 12000, 12002, 12000, 5000, 5000, 5000, 5000});
  // Plus LOC 250/s everywhere, RES 30/s on CPU0, CAL 10/s everywhere.
  CHECK(r.per_cpu_all == std::vector<double>{12291, 12260, 12262, 12260, 5260, 5260, 5260, 5260});
  const auto& q2 = rate(r, "133");
  CHECK(q2.actions == std::vector<std::string>{"ens1f0-TxRx-2"});
  CHECK(q2.per_cpu == std::vector<double>{0, 0, 12000, 0, 0, 0, 0, 0});
  CHECK(q2.total == 12000);
  CHECK(rate(r, "ERR").total == 0.0);
  CHECK(rate(r, "LOC").total == 2000.0);
  CHECK(r.softirq_rate("NET_RX", 0) == 10000.0);
  CHECK(r.softirq_rate("NET_RX", 5) == 4000.0);
  CHECK(r.softirq_rate("NET_TX", 3) == 500.0);
  CHECK(r.softirq_rate("NET_TX", 4) == 0.0);
  CHECK(r.softirq_rate("TIMER", 7) == 250.0);
  CHECK(r.softirq_rate("BLOCK", 5) == 0.0);
  CHECK(r.softirq_rate("NET_RX", 99) == 0.0);
  CHECK(r.softirq_rate("NOPE", 0) == 0.0);
}

TEST_CASE("IRQs of an adapter", "[interrupts]") {
  const auto r = rates(read_interrupt_snapshot(fixture("host8", "t0")),
                       read_interrupt_snapshot(fixture("host8", "t1")), 10.0);
  const auto f0 = irqs_of_device(r.irqs, "ens1f0");
  REQUIRE(f0.size() == 5);  // the misc vector and four queues
  CHECK(f0[0].actions[0] == "ens1f0");
  CHECK(f0[4].actions[0] == "ens1f0-TxRx-3");
  double total = 0;
  for (const auto& i : f0)
    total += i.total;
  CHECK(total == 4 * 12000 + 2);
  CHECK(irqs_of_device(r.irqs, "ens1f1").size() == 5);
  // By PCI address, through the chip column.
  CHECK(irqs_of_device(r.irqs, "0000:3b:00.1").size() == 5);
  CHECK(irqs_of_device(r.irqs, "ens1").empty());
  CHECK(irqs_of_device(r.irqs, "eth0").empty());
  // Named rows never belong to an adapter.
  CHECK(irqs_of_device(r.irqs, "Local").empty());

  CHECK(irq_matches_device({"eth0-TxRx-0"}, "", "eth0"));
  CHECK(irq_matches_device({"eth0"}, "", "eth0"));
  CHECK_FALSE(irq_matches_device({"eth01-TxRx-0"}, "", "eth0"));
  CHECK_FALSE(irq_matches_device({"veth0"}, "", "eth0"));
  CHECK(irq_matches_device({"virtio2-input.0"}, "PCI-MSIX-0000:00:03.0", "virtio2"));
  CHECK(irq_matches_device({"virtio2-input.0"}, "PCI-MSIX-0000:00:03.0", "0000:00:03.0"));
  CHECK(irq_matches_device({"mlx5_comp3@pci:0000:3b:00.0"}, "IR-PCI-MSI", "0000:3b:00.0"));
  CHECK_FALSE(irq_matches_device({"virtio2-input.0"}, "PCI-MSIX-0000:00:03.0", ""));
}

TEST_CASE("this VM's recorded interrupts", "[interrupts]") {
  const auto t0 = read_interrupt_snapshot(fixture("vm2", "t0"));
  const auto t1 = read_interrupt_snapshot(fixture("vm2", "t1"));
  const auto& in = row(t0, "38");
  CHECK(in.chip == "PCI-MSIX-0000:00:03.0");
  CHECK(in.hwirq == "1-edge");
  CHECK(in.actions == std::vector<std::string>{"virtio2-input.0"});
  CHECK(row(t0, "MIS").per_cpu.empty());
  const auto r = rates(t0, t1, 1.0);
  REQUIRE(r.cpu_ids == std::vector<int>{0, 1});
  // virtio1-req.0 +2 and virtio3-tx +2 on CPU1; LOC +40/+17, RES +0/+2, CAL +5/+1.
  CHECK(r.per_cpu_device == std::vector<double>{0, 4});
  CHECK(r.per_cpu_all == std::vector<double>{45, 24});
  CHECK(r.softirq_rate("TIMER", 0) == 12);
  CHECK(r.softirq_rate("TIMER", 1) == 9);
  CHECK(r.softirq_rate("SCHED", 1) == 17);
  CHECK(r.softirq_rate("RCU", 1) == 13);
  CHECK(r.softirq_rate("NET_RX", 0) == 0);
  CHECK(irqs_of_device(r.irqs, "virtio2").size() == 3);
}

TEST_CASE("CPUs that differ between snapshots are matched by id", "[interrupts]") {
  InterruptSnapshot before, after;
  parse_interrupts("      CPU0  CPU1  CPU2\n 30:  10  20  30  PCI-MSI 0-edge eth0\n", "b", before);
  parse_interrupts("      CPU0  CPU2  CPU3\n 30:  15  50  7  PCI-MSI 0-edge eth0\n", "a", after);
  parse_softirqs("  CPU0 CPU1 CPU2\nNET_RX: 1 2 3\n", "b", before);
  parse_softirqs("  CPU0 CPU2 CPU3\nNET_RX: 11 33 4\n", "a", after);
  const auto r = rates(before, after, 2.0);
  CHECK(r.cpu_ids == std::vector<int>{0, 2});
  CHECK(r.per_cpu_device == std::vector<double>{2.5, 10.0});
  CHECK(r.softirq_rate("NET_RX", 2) == 15.0);
  CHECK(r.softirq_rate("NET_RX", 3) == 0.0);
  CHECK_THROWS_AS(rates(before, after, 0.0), std::invalid_argument);
}

TEST_CASE("ARM-style rows and malformed input", "[interrupts]") {
  InterruptSnapshot s;
  parse_interrupts(
      "           CPU0       CPU1\n"
      " 11:     123456     234567     GICv3  27 Level     arch_timer\n"
      " 60:         10          0  ITS-MSI 524288 Edge      eth0-rx-0\n"
      "IPI0:      1000       2000       Rescheduling interrupts\n",
      "arm", s);
  REQUIRE(s.irqs.size() == 3);
  CHECK(s.irqs[0].chip == "GICv3");
  CHECK(s.irqs[0].hwirq == "27 Level");
  CHECK(s.irqs[0].actions == std::vector<std::string>{"arch_timer"});
  CHECK(s.irqs[1].actions == std::vector<std::string>{"eth0-rx-0"});
  CHECK(s.irqs[2].name == "IPI0");
  CHECK(s.irqs[2].description == "Rescheduling interrupts");
  CHECK_THROWS_WITH(parse_interrupts("  CPU0 CPU1\n 5:  1  PCI 0-edge x\n", "/proc/interrupts", s),
                    Catch::Contains("/proc/interrupts:2") && Catch::Contains("expected 2"));
  CHECK_THROWS_WITH(parse_interrupts("  CPU0 XYZ\n", "f", s), Catch::Contains("f:1"));
  CHECK_THROWS_WITH(parse_softirqs("  CPU0 CPU1\nNET_RX: 1 zz\n", "sq", s),
                    Catch::Contains("sq:2") && Catch::Contains("'zz'"));
  CHECK_THROWS_WITH(read_interrupt_snapshot("/nonexistent-root"),
                    Catch::Contains("/nonexistent-root/proc/interrupts"));
}

TEST_CASE("the live files parse", "[interrupts]") {
  const auto s = read_interrupt_snapshot();
  CHECK(!s.cpu_ids.empty());
  CHECK(!s.irqs.empty());
  CHECK(!s.softirqs.empty());
}

TEST_CASE("an adapter's interrupt rate sums its IRQs per CPU", "[interrupts][adapters]") {
  InterruptSnapshot before, after;
  const std::string head = "           CPU0       CPU1\n";
  parse_interrupts(
      head +
          " 24:        100        200   PCI-MSIX-0000:00:03.0   1-edge   virtio2-input.0\n"
          " 25:         10         20   PCI-MSIX-0000:00:03.0   2-edge   virtio2-output.0\n"
          " 26:          5          5   PCI-MSIX-0000:00:04.0   1-edge   virtio3-input.0\n"
          "LOC:       1000       1000   Local timer interrupts\n",
      "before", before);
  parse_interrupts(
      head +
          " 24:        300        200   PCI-MSIX-0000:00:03.0   1-edge   virtio2-input.0\n"
          " 25:         10        420   PCI-MSIX-0000:00:03.0   2-edge   virtio2-output.0\n"
          " 26:          5          9   PCI-MSIX-0000:00:04.0   1-edge   virtio3-input.0\n"
          "LOC:       3000       3000   Local timer interrupts\n",
      "after", after);
  InterruptRates r = rates(before, after, 2.0);
  add_adapter_rates(r, {{"eth0", {24, 25}}, {"veth0", {}}, {"eth1", {26, 99}}});
  REQUIRE(r.adapters.size() == 2);  // veth0 has no IRQs: left out
  CHECK(r.adapters[0].adapter == "eth0");
  CHECK(r.adapters[0].total == Approx(300.0));  // (200 + 400) / 2 s
  REQUIRE(r.adapters[0].per_cpu.size() == 2);
  CHECK(r.adapters[0].per_cpu[0] == Approx(100.0));
  CHECK(r.adapters[0].per_cpu[1] == Approx(200.0));
  CHECK(r.adapters[1].adapter == "eth1");
  CHECK(r.adapters[1].total == Approx(2.0));  // IRQ 99 is not in the file: contributes nothing
}
