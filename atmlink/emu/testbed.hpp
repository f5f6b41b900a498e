#pragma once
// An emulated ATM testbed: two hosts (named network namespaces) joined by N emulated adapter
// pairs, one logical IP subnet (CLIP) or emulated LAN (LANE) each, every adapter pair driven by
// its own emulator thread pinned to the adapter's interrupt CPU and tagged with an emulated PCI
// controller (emu<i>).
//
//   near ns  mtperf-<pid>-<tag>-near                 far ns  mtperf-<pid>-<tag>-far
//            (`atm up`: mtperf-atm-<tag>-near)                   (mtperf-atm-<tag>-far)
//     CLIP: TUN atm<i>n 10.232.<i>.1/24                  TUN atm<i>f 10.232.<i>.2/24
//     LANE: TAP lec<i>n 10.233.<i>.1/24, 02:6d:74:<i>:01:01   TAP lec<i>f 10.233.<i>.2/24, ..:02
//           └──────── emulator thread i: cells at the line rate ─────────┘
//   ATMARP server (CLIP) 10.232.<i>.254, or LECS, LES and BUS of ELAN "elan<i>" (LANE): inside
//   the emulator.
//
// 10.232.0.0/16 and 10.233.0.0/16 are used only inside the namespaces this class creates.
// Destroying the testbed stops the threads, closes the devices and deletes the namespaces: nothing
// is left behind. Needs root and /dev/net/tun. Thread-safety: stats_json() may be called from any
// thread.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "atmlink/capture.hpp"
#include "atmlink/encap.hpp"
#include "atmlink/faults.hpp"
#include "atmlink/line.hpp"
#include "atmlink/link.hpp"
#include "atmlink/pdu_faults.hpp"
#include "platform/netns.hpp"

namespace mtperf {
class NetnsPair;
class TunDevice;
namespace atm {

inline constexpr int kMaxAtmAdapters = 8 * 32;  // HP's report went to 8; the /16 allows 256

struct AtmTestbedOptions {
  LinkMode mode = LinkMode::kClip;
  int adapters = 1;
  LineRate rate = kOc12c;
  std::uint32_t bucket_cells = 4096;
  // IP MTU; 0: 9180 for CLIP, for LANE the maximum frame's (1500 with the default 1516 frame)
  int mtu = 0;
  std::vector<int> cpus;          // adapter i's CPU is cpus[i % size]; empty: online CPUs in turn
  Encap encap = Encap::kLlcSnap;  // CLIP data VCs
  bool inatmarp_pvc = false;
  // LANE maximum frame, 1516/4544/9234/18190; 0: the smallest that carries the MTU
  // (lane_frame_for_mtu), 1516 when the MTU is not given either.
  std::size_t lane_max_frame = 0;
  // LANE: MACs the far host's LEC represents besides its own, as a proxy LEC (a bridge) does;
  // it answers the LE_ARP requests the LES floods for them (at most 16).
  std::vector<Mac> lane_proxy_macs;
  FaultConfig faults;
  PduFaultConfig pdu_faults;  // after reassembly (corrupt, duplicate, reorder), seeded by faults
  std::uint64_t propagation_ns = 0;
  std::string tag;       // part of the namespace names; "" = a sequence number
  bool lasting = false;  // outlives its command (`atm up`): mtperf-atm-<tag>-near/-far, no pid
  // A pcapng file of what crossed the lines (capture.hpp), one interface per adapter; no path:
  // none. Closed when the testbed goes, which then prints its summary line on stderr.
  CaptureOptions capture;
};

// What the devices of a link of this mode are, as the topology names an adapter's kind: "tun"
// (CLIP, IP packets) or "tap" (LANE, Ethernet frames).
const char* device_kind(LinkMode mode);

// The options as a JSON object, for the state file.
nlohmann::json options_to_json(const AtmTestbedOptions& options);

// `mtperf atm up` files: <dir>/atm-<name>.json (the state, with the TestHosts fields, so
// hosts_from_state() reads it) and <dir>/atm-<name>.stats.json (counters, rewritten each second).
std::string atm_state_path(const std::string& name, const std::string& dir = kTestbedStateDir);
std::string atm_stats_path(const std::string& name, const std::string& dir = kTestbedStateDir);

class AtmTestbed {
 public:
  // Builds everything and waits until every host has registered or joined; on any failure
  // removes what it made and throws std::runtime_error naming the step.
  explicit AtmTestbed(const AtmTestbedOptions& options);
  ~AtmTestbed();
  AtmTestbed(const AtmTestbed&) = delete;
  AtmTestbed& operator=(const AtmTestbed&) = delete;

  TestHosts hosts() const;
  // As Testbed::state(), plus kind, mode, rate and the options; the caller adds its own fields.
  nlohmann::json state() const;
  // Counters of every adapter, lines, VCs and hosts, read while running.
  nlohmann::json stats_json() const;
  const AtmTestbedOptions& options() const { return options_; }
  // Stops every emulator thread (the lines go quiet; the hosts' packets stay in their devices)
  // and hands the captured records to the file: stats_json() then no longer moves, so a test can
  // compare it with the capture. The testbed can only be destroyed after this.
  void stop_lines() noexcept;
  // The capture's summary so far ("" without a capture): records, bytes, whether it filled.
  std::string capture_summary() const;

 private:
  struct Adapter;
  void build();
  void teardown() noexcept;

  AtmTestbedOptions options_;
  std::unique_ptr<CaptureFile> capture_;  // outlives the adapters' taps
  std::unique_ptr<NetnsPair> hosts_;
  std::vector<std::unique_ptr<Adapter>> adapters_;
  std::vector<TestbedLink> links_;
};

}  // namespace atm
}  // namespace mtperf
