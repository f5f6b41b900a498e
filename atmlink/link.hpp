#pragma once
// One emulated ATM adapter pair: two hosts joined by an emulated full-duplex line, with the
// LIS's ATMARP server (CLIP) or the emulated LAN's LES and BUS (LANE) at the switch between
// them. Pure logic: packets and frames come in through from_host(), go out through a LinkSink,
// and time is passed in, so the whole pipeline runs under a fake clock in tests.
//
//   near host ──(near's line: Wire kToFar)──>  switch  ──> far host, server, BUS
//   near host <──(far's line: Wire kToNear)──  switch  <── far host, server, BUS
//
// Stations: 0 near host, 1 far host, 2 ATMARP server (LANE: the LES, with the LECS beside it),
// 3 BUS (LANE). The switch holds one PVC per ordered pair of stations, VPI 0 and VCI
// 32 + 4 * from + to, so every cell's VC names its sender and receiver (LANE's control direct and
// distribute VCs are host<->LES, its multicast send and forward VCs host<->BUS, and its
// data-direct VCs host<->host; see lane_stations.hpp). A host's cells all cross its own line; the
// server's and the BUS's cells cross the line of the host they go to. Each line is paced at the
// line's cell rate.
//
// A packet from a host is encapsulated (CLIP: LLC/SNAP or VC-mux; LANE: LECID + frame),
// segmented by AAL5 into 53-byte cells, queued, paced, delayed, subjected to faults, and
// reassembled per VC with every check (HEC, VPI/VCI, PTI, CRC, length, size); the reassembled
// packet goes to the other host. Control traffic (ATMARP, LANE control frames) takes the same
// path. Nothing on the per-packet path allocates.
//
// Backpressure: can_take(side) says whether the host's line has room; a driver reads the next
// packet from that host's device only then, so the kernel holds the backlog, not this code.
// Every packet that is dropped anyway is counted under its reason.
//
// Single-threaded; stats() may be called from any thread (counters are relaxed atomics).
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "atmlink/atmarp.hpp"
#include "atmlink/capture.hpp"
#include "atmlink/encap.hpp"
#include "atmlink/faults.hpp"
#include "atmlink/lane_ctrl.hpp"
#include "atmlink/line.hpp"
#include "atmlink/pdu_faults.hpp"
#include "atmlink/wire.hpp"

namespace mtperf::atm {

enum class LinkMode : std::uint8_t { kClip, kLane };
const char* to_string(LinkMode mode);             // "clip", "lane"
LinkMode parse_link_mode(std::string_view text);  // throws std::invalid_argument

enum class Side : std::uint8_t { kNear = 0, kFar = 1 };

inline constexpr int kNearHost = 0, kFarHost = 1, kServer = 2, kBus = 3, kStations = 4;
constexpr VcAddress vc_between(int from, int to) {
  return {0, static_cast<std::uint16_t>(32 + 4 * from + to)};
}

inline constexpr std::size_t kDefaultClipMtu = 9180;  // RFC 2225
inline constexpr std::size_t kDefaultLaneMtu = 1500;  // 1516-byte frames
// A LANE frame's bytes beyond the IP MTU: the LECID and the 802.3 header (no FCS over ATM).
inline constexpr std::size_t kLaneFrameOverheadBytes = kLecidBytes + kEthernetHeaderBytes;
inline constexpr std::uint64_t kClientCacheLifetimeNs = 15ull * 60 * 1'000'000'000;  // RFC 2225

struct LinkConfig {
  LinkMode mode = LinkMode::kClip;
  int adapter = 0;  // 0..255: part of the ATM addresses and MACs
  PacerConfig pacer;
  std::uint64_t propagation_ns = 0;
  FaultConfig faults;                 // applied on both lines; the far line's seed is seed + 1
  PduFaultConfig pdu_faults;          // after reassembly, before the host (faults.seed as above)
  std::size_t mtu = kDefaultClipMtu;  // the hosts' IP MTU, 68..65,527 (LANE: frame fits max)
  // CLIP
  Encap clip_encap = Encap::kLlcSnap;  // data VCs: llc or vcmux
  bool inatmarp_pvc = false;           // learn the peer by InATMARP on the PVC, no ATMARP server
  Ipv4 subnet = 0;
  unsigned prefix_length = 24;
  Ipv4 near_ip = 0, far_ip = 0, server_ip = 0;
  std::size_t max_pending = 8;  // packets held per host while their address is resolved
  // LANE
  std::size_t lane_max_frame = 1516;  // one of 1516, 4544, 9234, 18190; mtu + 16 must fit
  Mac near_mac{}, far_mac{};          // the hosts' TAP devices: unicast, distinct
  // [host station]: MACs the host's LEC represents besides its own, as a proxy LEC (a bridge)
  // does: it answers the LE_ARP requests the LES floods for them and takes their frames. At
  // most 16 a host, unicast, none a host's own.
  std::array<std::vector<Mac>, 2> lane_proxy_macs{};
  std::string elan_name = "mtperf";  // at most 32 bytes
  std::uint64_t reassembly_timeout_ns = 1'000'000'000;
};

// Throws std::invalid_argument naming the field.
void validate(const LinkConfig& config);
// The smallest LANE maximum frame that carries an IP MTU: 1500 -> 1516, 4528 -> 4544,
// 9218 -> 9234, 18174 -> 18190. Throws std::invalid_argument above 18174.
std::size_t lane_frame_for_mtu(std::size_t mtu);
// The ATM (NSAP) address of a station of an adapter: ICD format, ESI 02:6d:74:<adapter>:00:<st>.
AtmAddress station_atm_address(int adapter, int station);

class LinkSink {
 public:
  virtual ~LinkSink() = default;
  // A packet (CLIP) or frame (LANE) for the host's device; valid only during the call.
  virtual void deliver(Side to, std::span<const std::uint8_t> packet) = 0;
};

// Why a host's packet did not reach the line.
struct alignas(64) HostCounters {
  Counter from_host, to_host;  // packets taken from / delivered to the host's device
  Counter bytes_from_host, bytes_to_host;
  Counter drop_not_ip;      // CLIP: not IPv4 (or too short); LANE: shorter than an 802.3 header
  Counter drop_no_route;    // CLIP: outside the LIS, broadcast or multicast; LANE: frame received
                            // for another MAC, or carrying this LEC's own LECID
  Counter drop_unresolved;  // the pending queue was full, resolution failed/NAKed, not joined
  Counter drop_too_large;   // above the MTU or the LAN's maximum frame
  Counter drop_line_full;   // the line refused it (should not happen with backpressure)
  Counter drop_bad_pdu;     // reassembled SDU that failed decapsulation
  Counter arp_requests, arp_replies, naks, inarp;  // control exchanges (ATMARP or LE_ARP)
  Counter flushes;                                 // LANE: flush exchanges completed
  Counter bus_frames;      // LANE: frames sent through the BUS (broadcast, multicast, unknown)
  Counter bus_unknown;     // LANE: of those, unicast frames to a MAC not yet resolved
  Counter direct_frames;   // LANE: frames sent on a data-direct VC
  Counter rx_bus;          // LANE: frames received from the BUS (the rest came data-direct)
  Counter flush_timeouts;  // LANE: flush requests that went unanswered and were sent again
  std::atomic<bool> ready{false};       // registered with the ATMARP server / joined the ELAN
  std::atomic<std::uint16_t> lecid{0};  // LANE: the LECID the LES assigned
};

struct VcStats {
  int from = 0, to = 0;
  VcAddress vc;
  std::uint64_t tx_pdus = 0, tx_cells = 0;
  VcCountersSnapshot rx;
};

struct WireStats {
  std::uint64_t pdus_sent = 0, cells_sent = 0, cells_delivered = 0, refused = 0;
  std::uint64_t lost = 0, hec_injected = 0, bit_errors = 0, clp_discarded = 0;
  std::uint64_t hec_errors = 0, unknown_vc = 0;  // at the receiving port, outside any VC
  // After reassembly (pdu_faults.hpp): PDUs eligible, corrupted (and bytes changed), duplicated,
  // reordered, and held PDUs released in order.
  std::uint64_t pdu_eligible = 0, corrupted_after_crc = 0, corrupted_bytes = 0, duplicated = 0,
                reordered = 0, reorder_released = 0;
};

struct HostStats {
  std::uint64_t from_host = 0, to_host = 0, bytes_from_host = 0, bytes_to_host = 0;
  std::uint64_t drop_not_ip = 0, drop_no_route = 0, drop_unresolved = 0, drop_too_large = 0,
                drop_line_full = 0, drop_bad_pdu = 0;
  std::uint64_t arp_requests = 0, arp_replies = 0, naks = 0, inarp = 0, flushes = 0, bus_frames = 0;
  std::uint64_t bus_unknown = 0, direct_frames = 0, rx_bus = 0, flush_timeouts = 0;  // LANE
  bool ready = false;
  std::uint16_t lecid = 0;  // LANE
};

// LANE: the emulated LAN's servers (the LECS beside the LES, the LES, the BUS).
struct alignas(64) ElanCounters {
  Counter configures;                    // LE_CONFIGURE requests answered (the LECS)
  Counter joins, join_rejects;           // LE_JOIN requests granted / refused
  Counter arp_resolved, arp_unresolved;  // LE_ARP requests answered / left unanswered
  Counter arp_flooded, arp_relayed;      // unanswered ones sent to the other LECs; their answers
  Counter flushes_relayed;               // LE_FLUSH responses passed on (control distribute)
  Counter bus_forwarded, bus_drops;      // frames the BUS sent on / could not (line full)
  Counter bad_frames;                    // control frames that did not decode
};

struct ElanStats {
  std::uint64_t configures = 0, joins = 0, join_rejects = 0, arp_resolved = 0, arp_unresolved = 0,
                flushes_relayed = 0, bus_forwarded = 0, bus_drops = 0, bad_frames = 0;
  std::uint64_t arp_flooded = 0, arp_relayed = 0;
};

struct LinkStats {
  std::array<WireStats, 2> wires;  // [Side of the sending host]: near's line, far's line
  std::array<HostStats, 2> hosts;
  ElanStats elan;            // LANE only
  std::vector<VcStats> vcs;  // the VCs in use
};

// What a station may do; implemented by AtmLink.
class LinkPort {
 public:
  virtual ~LinkPort() = default;
  // Queues an SDU from station `from` to station `to`; false when the line refused it.
  virtual bool send(int from, int to, const SduParts& sdu) = 0;
  virtual bool line_has_room(int from, int to) const = 0;
  virtual void deliver(Side to, std::span<const std::uint8_t> packet) = 0;
  // The station whose ATM address this is, or -1 (the switch's call routing, without signalling).
  virtual int station_of(const AtmAddress& atm) const = 0;
  virtual const LinkConfig& config() const = 0;
};

class Station {
 public:
  virtual ~Station() = default;
  virtual void start(std::uint64_t now_ns, LinkPort& port) = 0;
  virtual void on_pdu(int from, std::span<const std::uint8_t> sdu, std::uint64_t now_ns,
                      LinkPort& port) = 0;
  virtual void on_timer(std::uint64_t now_ns, LinkPort& port) = 0;
  // Hosts only: a packet or frame from the host's device.
  virtual void from_host(std::span<const std::uint8_t>, std::uint64_t, LinkPort&) {}
  virtual bool ready() const { return true; }
  virtual std::uint16_t lecid() const { return 0; }
  // Hosts only: whether another packet may be taken from the device now (a LANE client holding
  // frames during a flush says no when its queue is full, so the kernel keeps the backlog).
  virtual bool can_take() const { return true; }
};

class AtmLink final : LinkPort {
 public:
  // Throws std::invalid_argument when the config is unusable.
  explicit AtmLink(const LinkConfig& config);
  ~AtmLink() override;
  AtmLink(const AtmLink&) = delete;
  AtmLink& operator=(const AtmLink&) = delete;

  // Starts the control plane (registration with the ATMARP server, or the LANE join).
  void start(std::uint64_t now_ns);
  // Every host registered (CLIP) or joined (LANE).
  bool ready() const;

  // Whether from_host(side, ...) may be called now; when false, leave the packet in the device.
  bool can_take(Side side) const;
  void from_host(Side side, std::span<const std::uint8_t> packet, std::uint64_t now_ns);
  // Runs the lines and the stations up to now_ns; returns the time of the next event.
  std::uint64_t advance(std::uint64_t now_ns, LinkSink& sink);

  LinkStats stats() const;
  // Records what each line's receiving end reassembled (or, erf-cells, every cell that arrived)
  // into `tap`, stamped with the line's cell clock plus realtime_offset_ns (CLOCK_REALTIME minus
  // the clock passed in). The tap must outlive the link's use; nullptr: no capture (the
  // default, which costs one predictable branch per cell). Call before start().
  void set_capture(CaptureTap* tap, std::int64_t realtime_offset_ns) {
    capture_ = tap;
    capture_offset_ns_ = realtime_offset_ns;
  }
  const LinkConfig& config() const override { return config_; }
  const HostCounters& host_counters(Side side) const { return host_counters_[int(side)]; }
  const WireCounters& wire_counters(Side side) const { return wires_[int(side)]->counters(); }

 private:
  struct RxVc {
    std::unique_ptr<Reassembler> reassembler;
    Counter tx_pdus, tx_cells;
  };
  bool send(int from, int to, const SduParts& sdu) override;
  bool line_has_room(int from, int to) const override;
  void deliver(Side to, std::span<const std::uint8_t> packet) override;
  int station_of(const AtmAddress& atm) const override;
  static int line_of(int from, int to) { return from == kNearHost || to == kFarHost ? 0 : 1; }
  void on_cell(int line, std::span<const std::uint8_t, kCellBytes> cell, std::uint64_t now_ns);
  void add_vc(int from, int to);
  void capture_pdu(int line, int from, int to, CellStatus status);

  LinkConfig config_;
  std::array<std::unique_ptr<Wire>, 2> wires_;
  std::array<std::unique_ptr<PduFaultInjector>, 2> pdu_faults_;  // [line]; null: none there
  std::uint64_t now_ns_ = 0;  // the time of the current advance() or from_host()
  std::array<std::unique_ptr<Station>, kStations> stations_;
  std::array<std::array<RxVc, kStations>, kStations> vcs_;  // [from][to]
  std::array<AtmAddress, kStations> atm_{};
  std::array<Counter, 2> port_hec_errors_, port_unknown_vc_;
  std::array<HostCounters, 2> host_counters_;
  ElanCounters elan_counters_;
  std::size_t max_host_cells_ = 0;
  std::uint64_t next_timer_ns_ = 0;
  std::uint64_t sends_ = 0;  // PDUs queued so far, to see whether a round queued more
  LinkSink* sink_ = nullptr;
  CaptureTap* capture_ = nullptr;
  std::int64_t capture_offset_ns_ = 0;
};

}  // namespace mtperf::atm
