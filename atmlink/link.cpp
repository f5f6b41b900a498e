// The adapter pair's pipeline: stations, PVCs and the two lines (see link.hpp).
#include "atmlink/link.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "atmlink/clip_stations.hpp"
#include "atmlink/lane_stations.hpp"
#include "atmlink/pcapng.hpp"

namespace mtperf::atm {
namespace {

constexpr std::uint64_t kTimerNs = 50'000'000;  // control-plane retries, ageing, reassembly timer
constexpr std::size_t kReadAheadPdus = 2;       // host PDUs queued on a line beyond those sent

void add_pdu_fault_stats(const PduFaultCounters& p, WireStats& o) {
  o.pdu_eligible = p.eligible.load();
  o.corrupted_after_crc = p.corrupted.load();
  o.corrupted_bytes = p.corrupted_bytes.load();
  o.duplicated = p.duplicated.load();
  o.reordered = p.reordered.load();
  o.reorder_released = p.released.load();
}

}  // namespace

const char* to_string(LinkMode mode) {
  switch (mode) {
    case LinkMode::kClip:
      return "clip";
    case LinkMode::kLane:
      return "lane";
  }
  return "?";
}

LinkMode parse_link_mode(std::string_view text) {
  if (text == "clip") return LinkMode::kClip;
  if (text == "lane") return LinkMode::kLane;
  throw std::invalid_argument("mode '" + std::string(text) +
                              "': use clip (Classical IP, RFC 2225) or lane (LAN Emulation)");
}

void validate(const LinkConfig& c) {
  validate(c.pdu_faults);
  if (c.adapter < 0 || c.adapter > 255)
    throw std::invalid_argument("adapter index " + std::to_string(c.adapter) +
                                " is outside 0..255");
  if (c.mtu < 68 || c.mtu > kAal5MaxSduBytes - kMaxEncapHeaderBytes)
    throw std::invalid_argument("MTU " + std::to_string(c.mtu) + " is outside 68..65527");
  if (c.max_pending < 1 || c.max_pending > 256)
    throw std::invalid_argument("pending packets per host must be 1..256");
  if (c.mode == LinkMode::kClip) {
    if (c.clip_encap == Encap::kLane)
      throw std::invalid_argument("CLIP data VCs use llc or vcmux, not lane");
    if (c.inatmarp_pvc && c.clip_encap != Encap::kLlcSnap)
      throw std::invalid_argument(
          "InATMARP needs LLC/SNAP on the PVC: a VC-multiplexed VC carries only IP");
    if (c.prefix_length < 1 || c.prefix_length > 30)
      throw std::invalid_argument("LIS prefix length must be 1..30");
    const Ipv4 mask = ~Ipv4{0} << (32 - c.prefix_length);
    for (const Ipv4 ip : {c.near_ip, c.far_ip, c.server_ip})
      if ((ip & mask) != (c.subnet & mask) || ip == c.subnet || (ip | mask) == ~Ipv4{0})
        throw std::invalid_argument("an address of the LIS lies outside its subnet");
  } else {
    lane_max_frame_code(c.lane_max_frame);  // throws naming the allowed sizes
    if (lane_frame_for_mtu(c.mtu) > c.lane_max_frame)
      throw std::invalid_argument("MTU " + std::to_string(c.mtu) + " needs " +
                                  std::to_string(c.mtu + kLaneFrameOverheadBytes) +
                                  "-byte LANE frames; the emulated LAN's maximum frame is " +
                                  std::to_string(c.lane_max_frame));
    const Mac zero{};
    for (const Mac& m : {c.near_mac, c.far_mac})
      if (m == zero || (m[0] & 1) != 0)
        throw std::invalid_argument("a LANE host's MAC address must be a non-zero unicast address");
    if (c.near_mac == c.far_mac)
      throw std::invalid_argument("the two LANE hosts need different MAC addresses");
    for (const auto& macs : c.lane_proxy_macs) {
      if (macs.size() > 16) throw std::invalid_argument("a proxy LEC represents at most 16 MACs");
      for (const Mac& m : macs)
        if (m == zero || (m[0] & 1) != 0 || m == c.near_mac || m == c.far_mac)
          throw std::invalid_argument(
              "a proxied MAC address must be a non-zero unicast address that no host has");
    }
    if (c.elan_name.size() > kElanNameMaxBytes)
      throw std::invalid_argument("ELAN name '" + c.elan_name + "' exceeds 32 bytes");
  }
}

std::size_t lane_frame_for_mtu(std::size_t mtu) {
  for (const std::size_t frame : kLaneMaxFrameSizes)
    if (mtu + kLaneFrameOverheadBytes <= frame) return frame;
  throw std::invalid_argument("MTU " + std::to_string(mtu) +
                              " does not fit LANE's largest frame (18190 bytes = LECID 2 + "
                              "802.3 header 14 + MTU 18174)");
}

AtmAddress station_atm_address(int adapter, int station) {
  // ICD-format private NSAP (AFI 0x47): IDP and HO-DSP fixed, ESI locally administered, SEL 0.
  return {0x47,
          0x00,
          0x05,
          0x80,
          0xFF,
          0xE1,
          0x00,
          0x00,
          0x00,
          0xF2,
          0x1A,
          0x2B,
          0x3C,
          0x02,
          0x6D,
          0x74,
          static_cast<std::uint8_t>(adapter),
          0x00,
          static_cast<std::uint8_t>(station),
          0x00};
}

AtmLink::AtmLink(const LinkConfig& config) : config_(config) {
  validate(config_);
  for (int s = 0; s < kStations; ++s)
    atm_[s] = station_atm_address(config_.adapter, s);
  // The largest SDU a host sends: an encapsulated MTU-size packet, or a full LANE frame.
  const std::size_t max_sdu = config_.mode == LinkMode::kClip
                                  ? config_.mtu + kMaxEncapHeaderBytes
                                  : std::max(config_.lane_max_frame, kLaneControlFrameBytes);
  max_host_cells_ = aal5_cell_count(max_sdu);
  for (int line = 0; line < 2; ++line) {
    WireConfig w;
    w.pacer = config_.pacer;
    w.faults = config_.faults;
    w.faults.seed = config_.faults.seed + line;
    w.propagation_ns = config_.propagation_ns;
    w.max_pdu_cells = std::max(max_host_cells_, aal5_cell_count(kLaneControlFrameBytes + 8));
    w.queue_pdus = kReadAheadPdus + config_.max_pending + 8;  // + held packets + control
    wires_[line] = std::make_unique<Wire>(w);
    if (config_.pdu_faults.active() && config_.pdu_faults.applies_to_line(line)) {
      const std::size_t l3 = config_.mode == LinkMode::kLane ? kEthernetHeaderBytes : 0;
      pdu_faults_[line] = std::make_unique<PduFaultInjector>(
          config_.pdu_faults, l3, kAal5MaxSduBytes, config_.faults.seed + line);
    }
  }
  if (config_.mode == LinkMode::kClip) {
    stations_[kNearHost] = make_clip_host(config_, kNearHost, host_counters_[0]);
    stations_[kFarHost] = make_clip_host(config_, kFarHost, host_counters_[1]);
    add_vc(kNearHost, kFarHost);
    add_vc(kFarHost, kNearHost);
    if (!config_.inatmarp_pvc) {
      stations_[kServer] = make_atmarp_server_station(config_);
      for (int h : {kNearHost, kFarHost}) {
        add_vc(h, kServer);
        add_vc(kServer, h);
      }
    }
  } else {
    stations_[kNearHost] = make_lane_client(config_, kNearHost, host_counters_[0]);
    stations_[kFarHost] = make_lane_client(config_, kFarHost, host_counters_[1]);
    stations_[kServer] = make_les_station(config_, elan_counters_);
    stations_[kBus] = make_bus_station(elan_counters_);
    for (int h : {kNearHost, kFarHost}) {
      add_vc(h, h == kNearHost ? kFarHost : kNearHost);  // data-direct
      for (int server : {kServer, kBus}) {  // control direct/distribute, multicast send/forward
        add_vc(h, server);
        add_vc(server, h);
      }
    }
  }
}

AtmLink::~AtmLink() = default;

void AtmLink::add_vc(int from, int to) {
  ReassemblerConfig rc;
  rc.timeout_ns = config_.reassembly_timeout_ns;
  rc.max_sdu_bytes = kAal5MaxSduBytes;
  vcs_[from][to].reassembler = std::make_unique<Reassembler>(vc_between(from, to), rc);
}

void AtmLink::start(std::uint64_t now_ns) {
  for (auto& s : stations_)
    if (s) s->start(now_ns, *this);
  next_timer_ns_ = now_ns + kTimerNs;
}

bool AtmLink::ready() const {
  return stations_[kNearHost]->ready() && stations_[kFarHost]->ready();
}

bool AtmLink::can_take(Side side) const {
  const Wire& w = *wires_[int(side)];
  return w.queued() < kReadAheadPdus && w.has_room(max_host_cells_) &&
         stations_[int(side)]->can_take();
}

void AtmLink::from_host(Side side, std::span<const std::uint8_t> packet, std::uint64_t now_ns) {
  now_ns_ = now_ns;
  stations_[int(side)]->from_host(packet, now_ns, *this);
}

bool AtmLink::send(int from, int to, const SduParts& sdu) {
  RxVc& vc = vcs_[from][to];
  if (!vc.reassembler) return false;  // no PVC between these stations
  SegmentParams params;
  params.vc = vc_between(from, to);
  if (wires_[line_of(from, to)]->enqueue(sdu, params) != Wire::Enqueue::kOk) return false;
  vc.tx_pdus.add();
  vc.tx_cells.add(aal5_cell_count(sdu.size()));
  ++sends_;
  return true;
}

bool AtmLink::line_has_room(int from, int to) const {
  return wires_[line_of(from, to)]->has_room(max_host_cells_);
}

void AtmLink::deliver(Side to, std::span<const std::uint8_t> packet) {
  if (!sink_) return;
  const auto& faults = pdu_faults_[to == Side::kFar ? 0 : 1];  // the line that carried it
  if (!faults) return sink_->deliver(to, packet);
  const PduDeliveries out = faults->apply(packet, now_ns_);
  for (std::size_t i = 0; i < out.count; ++i)
    sink_->deliver(to, out.packets[i]);
}

int AtmLink::station_of(const AtmAddress& atm) const {
  for (int s = 0; s < kStations; ++s)
    if (stations_[s] && atm_[s] == atm) return s;
  return -1;
}

void AtmLink::on_cell(int line, std::span<const std::uint8_t, kCellBytes> cell,
                      std::uint64_t now_ns) {
  if (capture_ && capture_->format() == CaptureFormat::kErfCells) [[unlikely]]
    capture_->cell(
        line == 0, cell,
        std::uint64_t(std::int64_t(wires_[line]->arriving_sent_ns()) + capture_offset_ns_));
  const VcAddress vc = header_vc(cell.first<5>(), HeaderFormat::kUni);
  const int index = int(vc.vci) - 32;
  if (vc.vpi == 0 && index >= 0 && index < kStations * kStations) {
    const int from = index / 4, to = index % 4;
    RxVc& rx = vcs_[from][to];
    if (rx.reassembler && line_of(from, to) == line) {
      const CellStatus status = rx.reassembler->push(cell, now_ns);
      if (capture_) [[unlikely]]
        capture_pdu(line, from, to, status);
      if (status == CellStatus::kPduComplete)
        stations_[to]->on_pdu(from, rx.reassembler->pdu().sdu, now_ns, *this);
      return;
    }
  }
  // No VC here: a corrupted header, or a cell for a VC the switch does not have.
  std::array<std::uint8_t, 5> header;
  std::copy_n(cell.begin(), 5, header.begin());
  if (check_hec(header, false) != HecStatus::kOk) {
    port_hec_errors_[line].add();
  } else {
    port_unknown_vc_[line].add();
  }
}

void AtmLink::capture_pdu(int line, int from, int to, CellStatus status) {
  const bool good = status == CellStatus::kPduComplete;
  if (!good && status != CellStatus::kCrcError && status != CellStatus::kLengthError) return;
  std::uint8_t traffic = pcapng::kSunAtmLane;
  if (config_.mode == LinkMode::kClip) {
    const bool llc = from == kServer || to == kServer || config_.clip_encap == Encap::kLlcSnap;
    traffic = llc ? pcapng::kSunAtmLlc : pcapng::kSunAtmRaw;
  }
  const Reassembler& r = *vcs_[from][to].reassembler;
  const std::uint64_t ts =
      std::uint64_t(std::int64_t(wires_[line]->arriving_sent_ns()) + capture_offset_ns_);
  capture_->pdu(line == 0, r.vc(), traffic, r.last_cpcs(), good ? r.pdu().sdu.size() : 0, good, ts);
}

std::uint64_t AtmLink::advance(std::uint64_t now_ns, LinkSink& sink) {
  sink_ = &sink;
  now_ns_ = now_ns;
  for (int line = 0; line < 2; ++line)  // a reordered PDU held too long goes out in order
    if (pdu_faults_[line]) {
      const auto held = pdu_faults_[line]->expire(now_ns);
      if (!held.empty()) sink.deliver(line == 0 ? Side::kFar : Side::kNear, held);
    }
  if (now_ns >= next_timer_ns_) {
    for (auto& s : stations_)
      if (s) s->on_timer(now_ns, *this);
    for (auto& row : vcs_)
      for (auto& rx : row)
        if (rx.reassembler) rx.reassembler->poll(now_ns);
    next_timer_ns_ = now_ns + kTimerNs;
  }
  // A cell delivered on one line may queue an answer on either line; run both until a round
  // has nothing due now and queues nothing new.
  std::uint64_t next = next_timer_ns_;
  for (int round = 0; round < 16; ++round) {
    const std::uint64_t sends_before = sends_;
    next = next_timer_ns_;
    for (int line = 0; line < 2; ++line) {
      next = std::min(
          next, wires_[line]->advance(now_ns, [&](std::span<const std::uint8_t, kCellBytes> c) {
            on_cell(line, c, now_ns);
          }));
    }
    if (next > now_ns && sends_ == sends_before) break;
  }
  for (const auto& faults : pdu_faults_)
    if (faults) next = std::min(next, faults->next_deadline());
  sink_ = nullptr;
  return next;
}

LinkStats AtmLink::stats() const {
  LinkStats s;
  for (int line = 0; line < 2; ++line) {
    const WireCounters& w = wires_[line]->counters();
    const FaultCounters& f = wires_[line]->fault_counters();
    s.wires[line] = WireStats{w.pdus_sent.load(),
                              w.cells_sent.load(),
                              w.cells_delivered.load(),
                              w.refused.load(),
                              f.lost.load(),
                              f.hec_errors.load(),
                              f.payload_bit_errors.load(),
                              f.clp_discarded.load(),
                              port_hec_errors_[line].load(),
                              port_unknown_vc_[line].load()};
    if (pdu_faults_[line]) add_pdu_fault_stats(pdu_faults_[line]->counters(), s.wires[line]);
    const HostCounters& h = host_counters_[line];
    HostStats& o = s.hosts[line];
    o = HostStats{h.from_host.load(),
                  h.to_host.load(),
                  h.bytes_from_host.load(),
                  h.bytes_to_host.load(),
                  h.drop_not_ip.load(),
                  h.drop_no_route.load(),
                  h.drop_unresolved.load(),
                  h.drop_too_large.load(),
                  h.drop_line_full.load(),
                  h.drop_bad_pdu.load(),
                  h.arp_requests.load(),
                  h.arp_replies.load(),
                  h.naks.load(),
                  h.inarp.load(),
                  h.flushes.load(),
                  h.bus_frames.load(),
                  h.bus_unknown.load(),
                  h.direct_frames.load(),
                  h.rx_bus.load(),
                  h.flush_timeouts.load(),
                  h.ready.load(),
                  h.lecid.load()};
  }
  const ElanCounters& e = elan_counters_;
  s.elan = ElanStats{e.configures.load(),    e.joins.load(),          e.join_rejects.load(),
                     e.arp_resolved.load(),  e.arp_unresolved.load(), e.flushes_relayed.load(),
                     e.bus_forwarded.load(), e.bus_drops.load(),      e.bad_frames.load(),
                     e.arp_flooded.load(),   e.arp_relayed.load()};
  for (int from = 0; from < kStations; ++from)
    for (int to = 0; to < kStations; ++to) {
      const RxVc& rx = vcs_[from][to];
      if (!rx.reassembler) continue;
      s.vcs.push_back(VcStats{from, to, vc_between(from, to), rx.tx_pdus.load(), rx.tx_cells.load(),
                              rx.reassembler->counters().snapshot()});
    }
  return s;
}

}  // namespace mtperf::atm
