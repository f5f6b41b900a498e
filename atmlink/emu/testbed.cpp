#include "atmlink/emu/testbed.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>

#include "atmlink/aal5.hpp"
#include "atmlink/emu/driver.hpp"
#include "atmlink/pcapng.hpp"
#include "platform/affinity.hpp"
#include "platform/clock.hpp"
#include "platform/netns_pair.hpp"
#include "platform/tun.hpp"

namespace mtperf::atm {
namespace {

constexpr auto kReadyTimeout = std::chrono::seconds(5);

// CLIP's logical IP subnets are 10.232.<i>.0/24, LANE's emulated LANs 10.233.<i>.0/24, so a
// route or a capture names the kind of link it belongs to.
Ipv4 subnet_address(LinkMode mode, int adapter, int host) {
  const Ipv4 second = mode == LinkMode::kClip ? 232 : 233;
  return Ipv4{10} << 24 | second << 16 | Ipv4(adapter) << 8 | Ipv4(host);
}

std::string dotted(Ipv4 ip) {
  return fmt::format("{}.{}.{}.{}", ip >> 24, (ip >> 16) & 0xFF, (ip >> 8) & 0xFF, ip & 0xFF);
}

std::string mac_text(const Mac& m) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4],
                     m[5]);
}

// An erf-aal5 record holds a CPCS-PDU of at most 65,515 bytes (ERF's lengths are 16 bits): the
// largest PDU the line's MTU allows must fit, or its trailer and CRC would be cut away.
void check_erf_fits(const AtmTestbedOptions& o) {
  if (o.capture.path.empty() || o.capture.format != CaptureFormat::kErfAal5) return;
  const std::size_t header = o.mode == LinkMode::kLane    ? kLaneFrameOverheadBytes
                             : o.encap == Encap::kLlcSnap ? kLlcSnapHeaderBytes
                                                          : 0;
  const std::size_t pdu = aal5_cell_count(std::size_t(o.mtu) + header) * kCellPayloadBytes;
  if (pdu <= pcapng::kErfMaxAal5PduBytes) return;
  const std::size_t max_mtu = pcapng::kErfMaxAal5PduBytes / kCellPayloadBytes * kCellPayloadBytes -
                              kAal5TrailerBytes - header;
  throw std::runtime_error(fmt::format(
      "ATM testbed: an erf-aal5 capture holds AAL5 PDUs of at most {} bytes (ERF's lengths are "
      "16 bits), and MTU {} makes PDUs of {}: give --mtu {} or less, or --capture-format sunatm "
      "or erf-cells",
      pcapng::kErfMaxAal5PduBytes, o.mtu, pdu, max_mtu));
}

Mac host_mac(int adapter, int host) {
  return {0x02, 0x6d,
          0x74, static_cast<std::uint8_t>(adapter),
          0x01, static_cast<std::uint8_t>(host + 1)};
}

nlohmann::json wire_json(const WireStats& w) {
  return {{"pdus_sent", w.pdus_sent},
          {"cells_sent", w.cells_sent},
          {"cells_delivered", w.cells_delivered},
          {"refused", w.refused},
          {"lost", w.lost},
          {"hec_injected", w.hec_injected},
          {"bit_errors", w.bit_errors},
          {"clp_discarded", w.clp_discarded},
          {"hec_errors", w.hec_errors},
          {"unknown_vc", w.unknown_vc},
          {"pdu_eligible", w.pdu_eligible},
          {"corrupted_after_crc", w.corrupted_after_crc},
          {"corrupted_bytes", w.corrupted_bytes},
          {"duplicated", w.duplicated},
          {"reordered", w.reordered},
          {"reorder_released", w.reorder_released}};
}

nlohmann::json pdu_faults_json(const PduFaultConfig& p) {
  return {{"active", p.active()},
          {"corrupt_after_crc", to_string(p.corrupt)},
          {"duplicate", to_string(p.duplicate)},
          {"reorder", to_string(p.reorder)},
          {"direction", to_string(p.direction)},
          {"proto", to_string(p.proto)},
          {"min_payload", p.min_payload},
          {"hold_ns", p.hold_ns}};
}

// The device's own drop counters come from the kernel: a TUN/TAP queue that overflows while
// the line drains it at the cell rate drops there, before this code sees the packet.
nlohmann::json host_json(const HostStats& h, const TunDevice& dev) {
  DeviceDrops drops;
  try {
    drops = device_drops(dev.netns(), dev.name());
  } catch (const std::exception&) {
    // Counters only; a failed read shows as zero rather than stopping the stats.
  }
  return {{"ready", h.ready},
          {"device_tx_dropped", drops.tx_dropped},
          {"device_rx_dropped", drops.rx_dropped},
          {"lecid", h.lecid},
          {"from_host", h.from_host},
          {"to_host", h.to_host},
          {"bytes_from_host", h.bytes_from_host},
          {"bytes_to_host", h.bytes_to_host},
          {"drops",
           {{"not_ip", h.drop_not_ip},
            {"no_route", h.drop_no_route},
            {"unresolved", h.drop_unresolved},
            {"too_large", h.drop_too_large},
            {"line_full", h.drop_line_full},
            {"bad_pdu", h.drop_bad_pdu}}},
          {"arp_requests", h.arp_requests},
          {"arp_replies", h.arp_replies},
          {"naks", h.naks},
          {"inarp", h.inarp},
          {"flushes", h.flushes},
          {"bus_frames", h.bus_frames},
          {"bus_unknown", h.bus_unknown},
          {"direct_frames", h.direct_frames},
          {"rx_bus", h.rx_bus},
          {"flush_timeouts", h.flush_timeouts}};
}

nlohmann::json elan_json(const ElanStats& e) {
  return {{"configures", e.configures},
          {"joins", e.joins},
          {"join_rejects", e.join_rejects},
          {"le_arp_resolved", e.arp_resolved},
          {"le_arp_unresolved", e.arp_unresolved},
          {"le_arp_flooded", e.arp_flooded},
          {"le_arp_relayed", e.arp_relayed},
          {"flushes_relayed", e.flushes_relayed},
          {"bus_forwarded", e.bus_forwarded},
          {"bus_drops", e.bus_drops},
          {"bad_frames", e.bad_frames}};
}

nlohmann::json vc_json(const VcStats& v, LinkMode mode) {
  static const char* kClipNames[] = {"near", "far", "server", "-"};
  static const char* kLaneNames[] = {"near", "far", "les", "bus"};
  const char* const* names = mode == LinkMode::kClip ? kClipNames : kLaneNames;
  const VcCountersSnapshot& r = v.rx;
  return {{"from", names[v.from]},
          {"to", names[v.to]},
          {"vpi", v.vc.vpi},
          {"vci", v.vc.vci},
          {"tx_pdus", v.tx_pdus},
          {"tx_cells", v.tx_cells},
          {"rx_cells", r.cells},
          {"rx_pdus", r.pdus},
          {"hec_errors", r.hec_errors},
          {"crc_errors", r.crc_errors},
          {"length_errors", r.length_errors},
          {"oversize", r.oversize},
          {"timeouts", r.timeouts},
          {"drops", r.drops}};
}

}  // namespace

struct AtmTestbed::Adapter {
  TunDevice near_dev, far_dev;
  std::unique_ptr<CaptureTap> tap;  // used by the driver's thread: goes after it
  std::unique_ptr<LinkDriver> driver;
};

static nlohmann::json proxy_json(const std::vector<Mac>& macs) {
  nlohmann::json out = nlohmann::json::array();
  for (const Mac& m : macs)
    out.push_back(mac_text(m));
  return out;
}

nlohmann::json options_to_json(const AtmTestbedOptions& o) {
  return {{"mode", to_string(o.mode)},
          {"adapters", o.adapters},
          {"rate_cells_per_s", o.rate.cells_per_s()},
          {"rate_num", o.rate.num},
          {"rate_den", o.rate.den},
          {"bucket_cells", o.bucket_cells},
          {"mtu", o.mtu},
          {"cpus", o.cpus},
          {"encap", to_string(o.encap)},
          {"inatmarp_pvc", o.inatmarp_pvc},
          {"lane_max_frame", o.lane_max_frame},
          {"lane_proxy_macs", proxy_json(o.lane_proxy_macs)},
          {"propagation_ns", o.propagation_ns},
          {"faults",
           {{"cell_loss_rate", o.faults.cell_loss_rate},
            {"hec_error_rate", o.faults.hec_error_rate},
            {"payload_ber", o.faults.payload_ber},
            {"discard_clp1", o.faults.discard_clp1},
            {"seed", o.faults.seed}}},
          {"pdu_faults", pdu_faults_json(o.pdu_faults)}};
}

std::string atm_state_path(const std::string& name, const std::string& dir) {
  check_testbed_name(name);
  return dir + "/atm-" + name + ".json";
}

std::string atm_stats_path(const std::string& name, const std::string& dir) {
  check_testbed_name(name);
  return dir + "/atm-" + name + ".stats.json";
}

AtmTestbed::AtmTestbed(const AtmTestbedOptions& options) : options_(options) {
  if (options_.adapters < 1 || options_.adapters > kMaxAtmAdapters)
    throw std::runtime_error(fmt::format("ATM testbed: adapters must be 1..{}, got {}",
                                         kMaxAtmAdapters, options_.adapters));
  if (options_.mode == LinkMode::kLane) {
    try {
      if (options_.lane_max_frame == 0)
        options_.lane_max_frame = options_.mtu == 0 ? lane_frame_for_mtu(kDefaultLaneMtu)
                                                    : lane_frame_for_mtu(std::size_t(options_.mtu));
      if (options_.mtu == 0) options_.mtu = int(options_.lane_max_frame - kLaneFrameOverheadBytes);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(std::string("ATM testbed: ") + e.what());
    }
  }
  if (options_.mtu == 0) options_.mtu = int(kDefaultClipMtu);
  check_erf_fits(options_);
  if (options_.cpus.empty()) options_.cpus = online_cpus();
  std::string why;
  if (!can_create_tun(&why)) throw std::runtime_error("ATM testbed: " + why);
  try {
    build();
  } catch (...) {
    teardown();
    throw;
  }
}

AtmTestbed::~AtmTestbed() {
  teardown();
}

void AtmTestbed::build() {
  if (!options_.capture.path.empty()) {
    try {
      capture_ = std::make_unique<CaptureFile>(options_.capture, options_.adapters);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(std::string("ATM testbed: ") + e.what());
    }
  }
  hosts_ = std::make_unique<NetnsPair>(options_.tag, options_.lasting, "atm-");
  const bool lane = options_.mode == LinkMode::kLane;
  for (int i = 0; i < options_.adapters; ++i) {
    const int cpu = options_.cpus[std::size_t(i) % options_.cpus.size()];
    LinkConfig c;
    c.mode = options_.mode;
    c.adapter = i;
    c.pacer = PacerConfig{options_.rate, options_.bucket_cells};
    c.propagation_ns = options_.propagation_ns;
    c.faults = options_.faults;
    c.faults.seed = options_.faults.seed + 2 * std::uint64_t(i);
    c.pdu_faults = options_.pdu_faults;
    c.mtu = std::size_t(options_.mtu);
    c.clip_encap = options_.encap;
    c.inatmarp_pvc = options_.inatmarp_pvc;
    c.subnet = subnet_address(c.mode, i, 0);
    c.near_ip = subnet_address(c.mode, i, 1);
    c.far_ip = subnet_address(c.mode, i, 2);
    c.server_ip = subnet_address(c.mode, i, 254);
    if (lane) c.lane_max_frame = options_.lane_max_frame;
    c.elan_name = fmt::format("elan{}", i);
    c.near_mac = host_mac(i, 0);
    c.far_mac = host_mac(i, 1);
    c.lane_proxy_macs[1] = options_.lane_proxy_macs;
    std::unique_ptr<AtmLink> link;
    try {
      link = std::make_unique<AtmLink>(c);  // validates before any device exists
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(fmt::format("ATM testbed: adapter {}: {}", i, e.what()));
    }

    TestbedLink l;
    l.index = i;
    l.near_if = fmt::format("{}{}n", lane ? "lec" : "atm", i);
    l.far_if = fmt::format("{}{}f", lane ? "lec" : "atm", i);
    l.near_addr = dotted(c.near_ip);
    l.far_addr = dotted(c.far_ip);
    l.subnet = dotted(c.subnet) + "/24";
    l.controller = fmt::format("emu{}", i);
    l.cpus = {cpu};
    const std::string alias = fmt::format("mtperf-emu controller={} cpus={} kind={}", l.controller,
                                          cpu, to_string(options_.mode));
    auto adapter = std::make_unique<Adapter>();
    TunOptions t;
    t.tap = lane;
    t.mtu = options_.mtu;
    t.alias = alias;
    t.netns = hosts_->near_ns();
    t.name = l.near_if;
    t.address = l.near_addr + "/24";
    t.mac = lane ? mac_text(c.near_mac) : "";
    adapter->near_dev = TunDevice(t);
    t.netns = hosts_->far_ns();
    t.name = l.far_if;
    t.address = l.far_addr + "/24";
    t.mac = lane ? mac_text(c.far_mac) : "";
    adapter->far_dev = TunDevice(t);
    if (capture_) {
      adapter->tap = std::make_unique<CaptureTap>(*capture_, std::uint32_t(i));
      link->set_capture(adapter->tap.get(), realtime_ns() - now_ns());
    }
    adapter->driver = std::make_unique<LinkDriver>(std::move(link), adapter->near_dev.fd(),
                                                   adapter->far_dev.fd(), cpu);
    adapters_.push_back(std::move(adapter));
    links_.push_back(std::move(l));
  }
  for (std::size_t i = 0; i < adapters_.size(); ++i)
    if (!adapters_[i]->driver->wait_ready(kReadyTimeout))
      throw std::runtime_error(fmt::format(
          "ATM testbed: adapter {} did not come up within {} s ({})", i, kReadyTimeout.count(),
          lane ? "LANE join with the LES" : "registration with the ATMARP server"));
}

void AtmTestbed::teardown() noexcept {
  // Threads first (they use the descriptors), then the devices, then the namespaces.
  for (auto& a : adapters_)
    a->driver.reset();
  adapters_.clear();  // the taps hand their last records to the capture file
  if (capture_) {
    capture_->close();
    std::fprintf(stderr, "%s\n", capture_->summary().c_str());
    capture_.reset();
  }
  hosts_.reset();
}

void AtmTestbed::stop_lines() noexcept {
  for (auto& a : adapters_) {
    a->driver->stop_and_join();
    if (a->tap) a->tap->flush();
  }
}

std::string AtmTestbed::capture_summary() const {
  return capture_ ? capture_->summary() : std::string();
}

const char* device_kind(LinkMode mode) {
  return mode == LinkMode::kLane ? "tap" : "tun";
}

TestHosts AtmTestbed::hosts() const {
  return {to_string(options_.mode), device_kind(options_.mode), hosts_->near_ns(), hosts_->far_ns(),
          links_};
}

nlohmann::json AtmTestbed::state() const {
  return {{"version", 1},
          {"kind", to_string(options_.mode)},
          {"near_ns", hosts_->near_ns()},
          {"far_ns", hosts_->far_ns()},
          {"namespaces", hosts_->created()},
          {"mtu", options_.mtu},
          {"rate_cells_per_s", options_.rate.cells_per_s()},
          {"atm", options_to_json(options_)},
          {"links", links_to_json(links_)}};
}

nlohmann::json AtmTestbed::stats_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < adapters_.size(); ++i) {
    const LinkDriver& d = *adapters_[i]->driver;
    const LinkStats s = d.stats();
    nlohmann::json vcs = nlohmann::json::array();
    for (const VcStats& v : s.vcs)
      vcs.push_back(vc_json(v, options_.mode));
    const DriverCounters& dc = d.counters();
    out.push_back(
        {{"adapter", i},
         {"controller", links_[i].controller},
         {"cpu", d.cpu()},
         {"nominal_cells_per_s", options_.rate.cells_per_s()},
         {"lines",
          {{"near_to_far", wire_json(s.wires[0])}, {"far_to_near", wire_json(s.wires[1])}}},
         {"hosts",
          {{"near", host_json(s.hosts[0], adapters_[i]->near_dev)},
           {"far", host_json(s.hosts[1], adapters_[i]->far_dev)}}},
         {"vcs", std::move(vcs)},
         {"elan", options_.mode == LinkMode::kLane ? elan_json(s.elan) : nlohmann::json()},
         {"driver",
          {{"reads", dc.reads.load()},
           {"writes", dc.writes.load()},
           {"write_errors", dc.write_errors.load()},
           {"read_errors", dc.read_errors.load()},
           {"wakeups", dc.wakeups.load()}}}});
  }
  return out;
}

}  // namespace mtperf::atm
