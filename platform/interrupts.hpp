#pragma once
// Interrupt and softirq counters from <root>/proc/interrupts and <root>/proc/softirqs, and their
// rates over a measured window. Counts are events since boot; rates are events per second.
//
// /proc/interrupts rows come in two kinds:
//   numbered device IRQs:  " 38:   0   497   PCI-MSIX-0000:00:03.0   1-edge   virtio2-input.0"
//                          (per-CPU counts, the interrupt chip, hwirq-trigger, the action names)
//   named architecture rows: "LOC:  10852  9379   Local timer interrupts"
//                          (per-CPU counts and a description; a few, like ERR and MIS, carry a
//                          single system-wide count instead)
// Only the CPUs online when the file was read have a column; columns are matched by CPU id.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mtperf {

struct IrqRow {
  std::string name;               // "38", "LOC", "NMI"
  bool numbered = false;          // a device IRQ (name is a number)
  std::vector<uint64_t> per_cpu;  // one count per column of cpu_ids; empty for ERR/MIS
  uint64_t total = 0;             // sum of per_cpu, or the single count of ERR/MIS
  std::string chip;               // "PCI-MSIX-0000:00:03.0", "IR-PCI-MSI", "IO-APIC"; numbered only
  std::string hwirq;              // "1-edge", or "27 Level" on ARM; numbered only
  std::vector<std::string> actions;  // "virtio2-input.0"; several when the IRQ is shared
  std::string description;           // "Local timer interrupts"; named rows only
};

struct SoftirqRow {
  std::string kind;  // HI, TIMER, NET_TX, NET_RX, BLOCK, IRQ_POLL, TASKLET, SCHED, HRTIMER, RCU
  std::vector<uint64_t> per_cpu;
};

struct InterruptSnapshot {
  std::vector<int> cpu_ids;  // the columns of /proc/interrupts
  std::vector<IrqRow> irqs;
  std::vector<int> softirq_cpu_ids;  // the columns of /proc/softirqs
  std::vector<SoftirqRow> softirqs;
};

// Reads both files under root. Throws std::runtime_error naming the file, and the line when one
// cannot be parsed.
InterruptSnapshot read_interrupt_snapshot(const std::string& root = "/");

// Parsers of the two files' text; `origin` names the source in error messages. Each fills its
// own half of `out`.
void parse_interrupts(const std::string& text, const std::string& origin, InterruptSnapshot& out);
void parse_softirqs(const std::string& text, const std::string& origin, InterruptSnapshot& out);

struct IrqRate {
  std::string name;  // as IrqRow
  bool numbered = false;
  std::string chip;
  std::vector<std::string> actions;
  std::string description;
  std::vector<double> per_cpu;  // per column of InterruptRates::cpu_ids, events/s
  double total = 0.0;           // events/s over all CPUs
};

struct SoftirqRate {
  std::string kind;
  std::vector<double> per_cpu;  // per column of InterruptRates::softirq_cpu_ids, events/s
  double total = 0.0;
};

// One adapter's interrupts over the window: the sum over its IRQs.
struct AdapterIrqRate {
  std::string adapter;
  std::vector<int> irqs;        // IRQ numbers
  double total = 0.0;           // events/s over all CPUs
  std::vector<double> per_cpu;  // per column of InterruptRates::cpu_ids, events/s
};

struct InterruptRates {
  double elapsed_s = 0.0;
  std::vector<int> cpu_ids;            // CPUs present in both snapshots, ascending
  std::vector<double> per_cpu_device;  // numbered (device) IRQs per second, per CPU
  std::vector<double> per_cpu_all;     // every per-CPU row (device + LOC, RES, CAL, ...) per second
  std::vector<IrqRate> irqs;           // rows present in both snapshots, in file order
  std::vector<int> softirq_cpu_ids;    // CPUs present in both softirq snapshots, ascending
  std::vector<SoftirqRate> softirqs;
  std::vector<AdapterIrqRate> adapters;  // filled by add_adapter_rates()

  // The rate of one softirq kind ("NET_RX") on one CPU; 0 when either is absent.
  double softirq_rate(std::string_view kind, int cpu) const;
};

// Rates between two snapshots elapsed_s apart (> 0, else std::invalid_argument). A counter that
// went backwards (an IRQ freed and requested again) contributes 0.
InterruptRates rates(const InterruptSnapshot& before, const InterruptSnapshot& after,
                     double elapsed_s);

// Adds one AdapterIrqRate per (adapter, IRQ numbers) to r.adapters, summing the numbered rows of
// those IRQs; adapters without IRQs are left out.
void add_adapter_rates(InterruptRates& r,
                       const std::vector<std::pair<std::string, std::vector<int>>>& adapters);

// Whether an IRQ belongs to an adapter. `device` is an interface name ("ens1f0"), a driver
// device name ("virtio2", "mlx5_comp") or a PCI address ("0000:3b:00.0"). It matches when it
// occurs in one of the action names or in the chip name with no letter or digit right before
// or after it: "ens1f0" matches "ens1f0-TxRx-3" and "ens1f0" but not "ens1f01-TxRx-3" or
// "vens1f0"; "0000:00:03.0" matches the chip "PCI-MSIX-0000:00:03.0" and the action
// "mlx5_comp3@pci:0000:00:03.0". virtio_net names its IRQs after the virtio device, not the
// interface, so pass the device (the last part of /sys/class/net/<if>/device) or its PCI address.
bool irq_matches_device(const std::vector<std::string>& actions, std::string_view chip,
                        std::string_view device);

// The numbered IRQs among `all` that belong to `device`, in their original order.
std::vector<IrqRow> irqs_of_device(const std::vector<IrqRow>& all, std::string_view device);
std::vector<IrqRate> irqs_of_device(const std::vector<IrqRate>& all, std::string_view device);

}  // namespace mtperf
