// The LANE v1 LE client of a host, over the link's VCs (see lane_stations.hpp).
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "atmlink/lane_stations.hpp"

namespace mtperf::atm {
namespace {

constexpr std::uint64_t kSecondNs = 1'000'000'000;
constexpr std::uint64_t kRetryNs = kSecondNs;  // unanswered control requests are sent again
constexpr int kMaxRetries = 5;
constexpr std::uint64_t kAgingNs = 300 * kSecondNs;       // LANE v1 C17 Aging Time
constexpr std::uint64_t kUnknownFrameTimeNs = kSecondNs;  // C11 Maximum Unknown Frame Time
constexpr unsigned kMaxUnknownFrames = 1;                 // C10 Maximum Unknown Frame Count
constexpr std::size_t kTableSize = 16;

bool is_group(const std::uint8_t* mac) {
  return (mac[0] & 1) != 0;
}

Mac mac_at(const std::uint8_t* p) {
  Mac m;
  std::copy_n(p, m.size(), m.begin());
  return m;
}

bool is_control(std::span<const std::uint8_t> sdu) {
  return sdu.size() >= 2 && sdu[0] == (kLaneControlMarker >> 8) &&
         sdu[1] == (kLaneControlMarker & 0xFF);
}

class LaneClient final : public Station {
 public:
  LaneClient(const LinkConfig& c, int self, HostCounters& counters)
      : self_(self),
        side_(self == kNearHost ? Side::kNear : Side::kFar),
        own_mac_(self == kNearHost ? c.near_mac : c.far_mac),
        proxied_(c.lane_proxy_macs[self == kNearHost ? 0 : 1]),
        own_atm_(station_atm_address(c.adapter, self)),
        max_frame_(c.lane_max_frame),
        counters_(counters) {
    pending_.resize(c.max_pending);
    for (Pending& p : pending_)
      p.bytes.resize(max_frame_ - kLecidBytes);
  }

  void start(std::uint64_t now_ns, LinkPort& port) override { request_phase(now_ns, port); }
  bool ready() const override { return phase_ == Phase::kOperational; }
  std::uint16_t lecid() const override { return lecid_; }
  bool can_take() const override { return pending_count_ < pending_.size(); }

  void from_host(std::span<const std::uint8_t> frame, std::uint64_t now_ns,
                 LinkPort& port) override {
    counters_.from_host.add();
    counters_.bytes_from_host.add(frame.size());
    if (frame.size() < kEthernetHeaderBytes) return counters_.drop_not_ip.add();
    if (frame.size() + kLecidBytes > max_frame_) return counters_.drop_too_large.add();
    if (!ready()) return counters_.drop_unresolved.add();
    if (is_group(frame.data())) {
      counters_.bus_frames.add();
      return send_frame(bus_, frame, port);
    }
    const Mac dst = mac_at(frame.data());
    Entry* e = find(dst);
    if (!e) {
      e = allocate(dst, now_ns);
      resolve(*e, now_ns, port);
    } else if (e->state == State::kFailed && now_ns - e->since_ns >= kRetryNs) {
      resolve(*e, now_ns, port);
    }
    const bool held_before = holding(dst);
    switch (e->state) {
      case State::kDirect:
        if (!held_before) {
          counters_.direct_frames.add();
          return send_frame(e->station, frame, port);
        }
        break;
      case State::kResolving:
      case State::kFailed:
        // Unknown unicast goes through the BUS, a bounded number of frames per second, and
        // never past frames already held for the same MAC.
        if (!held_before && unknown_allowed(*e, now_ns)) {
          counters_.bus_frames.add();
          counters_.bus_unknown.add();
          return send_frame(bus_, frame, port);
        }
        if (e->state == State::kFailed) return counters_.drop_unresolved.add();
        break;
      case State::kFlushing:
      case State::kFree:
        break;
    }
    if (!hold(dst, frame)) counters_.drop_unresolved.add();
    release_pending(port);
  }

  void on_pdu(int from, std::span<const std::uint8_t> sdu, std::uint64_t now_ns,
              LinkPort& port) override {
    if (is_control(sdu)) return on_control(from, sdu, now_ns, port);
    if (from == kServer) return counters_.drop_bad_pdu.add();  // control VCs carry control frames
    const Decapsulated d = decapsulate(EncapParams{Encap::kLane, 0, kMinLecid, max_frame_}, sdu);
    if (d.status != EncapStatus::kOk) return counters_.drop_bad_pdu.add();
    // A LEC discards its own frames coming back from the BUS, and unicast frames for others.
    const bool mine = is_group(d.payload.data()) || represents(mac_at(d.payload.data()));
    if ((lecid_ != 0 && d.lecid == lecid_) || !mine) return counters_.drop_no_route.add();
    if (from == kBus) counters_.rx_bus.add();
    counters_.to_host.add();
    counters_.bytes_to_host.add(d.payload.size());
    port.deliver(side_, d.payload);
  }

  void on_timer(std::uint64_t now_ns, LinkPort& port) override {
    if (phase_ != Phase::kOperational) {
      if (now_ns - phase_sent_ns_ >= kRetryNs) request_phase(now_ns, port);
      return;
    }
    for (Entry& e : table_) {
      const bool due = now_ns - e.last_request_ns >= kRetryNs;
      if (e.state == State::kResolving && due) {
        if (++e.retries > kMaxRetries) {
          fail(e, now_ns);
        } else {
          send_le_arp(e, now_ns, port);
        }
      } else if (e.state == State::kFlushing && due) {
        counters_.flush_timeouts.add();
        if (++e.retries > kMaxRetries) {
          fail(e, now_ns);
        } else {
          send_flush(e, now_ns, port);
        }
      } else if (e.state == State::kDirect && now_ns >= e.expires_ns) {
        // Revalidate; the data-direct VC stays in use meanwhile.
        e.expires_ns = now_ns + kAgingNs;
        send_le_arp(e, now_ns, port);
      }
    }
    release_pending(port);
  }

 private:
  enum class Phase : std::uint8_t { kConfigure, kJoin, kBusConnect, kOperational };
  enum class State : std::uint8_t { kFree, kResolving, kFlushing, kDirect, kFailed };
  struct Entry {
    Mac mac{};
    AtmAddress atm{};
    State state = State::kFree;
    int station = -1;
    int retries = 0;
    std::uint32_t tid = 0;  // of the outstanding LE_ARP or flush request
    std::uint64_t since_ns = 0, last_request_ns = 0, expires_ns = 0;
    std::uint64_t unknown_window_ns = 0;
    unsigned unknown_sent = 0;
  };
  struct Pending {
    std::vector<std::uint8_t> bytes;  // max frame bytes, allocated once
    std::size_t length = 0;
    Mac mac{};
    std::uint64_t seq = 0;  // arrival order
    bool used = false;
  };

  // --- joining: configure, join, connect to the BUS ---

  void request_phase(std::uint64_t now_ns, LinkPort& port) {
    phase_tid_ = next_tid_++;
    phase_sent_ns_ = now_ns;
    switch (phase_) {
      case Phase::kConfigure: {
        // The LECS sits beside the LES; the configuration direct VC is the LEC's VC to it.
        LaneControlFrame f;
        f.op = LaneOp::kConfigureRequest;
        f.transaction_id = phase_tid_;
        f.source_lan = LanDestination::of_mac(own_mac_);
        f.source_atm = own_atm_;
        f.lan_type = kLaneTypeEthernet;
        f.max_frame_code = lane_max_frame_code(max_frame_);
        send_lane_control(port, self_, kServer, f);
        return;
      }
      case Phase::kJoin:
        send_lane_control(
            port, self_, les_,
            make_join_request(phase_tid_, own_atm_, own_mac_, elan_name_, max_frame_));
        return;
      case Phase::kBusConnect:
        counters_.arp_requests.add();
        send_lane_control(
            port, self_, les_,
            make_le_arp_request(phase_tid_, lecid_, own_mac_, own_atm_, kBroadcastMac));
        return;
      case Phase::kOperational:
        return;
    }
  }

  void on_configure(const LaneControlFrame& f, std::uint64_t now_ns, LinkPort& port) {
    if (phase_ != Phase::kConfigure || f.transaction_id != phase_tid_) return;
    const int les = port.station_of(f.target_atm);
    if (f.status != LaneStatus::kSuccess || les < 0) return counters_.naks.add();  // retried
    les_ = les;
    elan_name_ = f.elan_name;
    // Take the ELAN's frame size when it is smaller; a larger one the buffers cannot hold.
    const std::size_t elan_frame = lane_max_frame_bytes(f.max_frame_code);
    if (elan_frame != 0 && elan_frame < max_frame_) max_frame_ = elan_frame;
    phase_ = Phase::kJoin;
    request_phase(now_ns, port);
  }

  void on_join(const LaneControlFrame& f, std::uint64_t now_ns, LinkPort& port) {
    if (phase_ != Phase::kJoin || f.transaction_id != phase_tid_) return;
    if (f.status != LaneStatus::kSuccess) return counters_.naks.add();  // retried after 1 s
    lecid_ = f.requester_lecid;
    counters_.lecid.store(lecid_);
    phase_ = Phase::kBusConnect;
    request_phase(now_ns, port);
  }

  // --- LE_ARP and flush ---

  void on_control(int from, std::span<const std::uint8_t> sdu, std::uint64_t now_ns,
                  LinkPort& port) {
    LaneControlFrame f;
    try {
      f = decode_lane_control(sdu);
    } catch (const std::invalid_argument&) {
      return counters_.drop_bad_pdu.add();
    }
    if (f.op == LaneOp::kFlushRequest) {
      // It came on the BUS path behind every frame its sender sent that way, so they have all
      // arrived: answer on the control direct VC (the LES passes it on).
      if (from == kBus && f.target_atm == own_atm_)
        send_lane_control(port, self_, les_, make_flush_response(f));
      return;
    }
    if (from != les_) return;
    switch (f.op) {
      case LaneOp::kConfigureResponse:
        return on_configure(f, now_ns, port);
      case LaneOp::kJoinResponse:
        return on_join(f, now_ns, port);
      case LaneOp::kArpResponse:
        return on_le_arp_response(f, now_ns, port);
      case LaneOp::kFlushResponse:
        return on_flush_response(f, now_ns, port);
      case LaneOp::kArpRequest:
        return on_flooded_le_arp(f, port);
      default:
        return;  // other requests are for the LES
    }
  }

  bool represents(const Mac& mac) const {
    if (mac == own_mac_) return true;
    for (const Mac& m : proxied_)
      if (m == mac) return true;
    return false;
  }

  // An LE_ARP request the LES could not answer and flooded: the LEC that represents the MAC
  // answers on its control direct VC, with its own ATM address.
  void on_flooded_le_arp(const LaneControlFrame& f, LinkPort& port) {
    if (!ready() || f.requester_lecid == lecid_ || f.target_lan.tag != 1 ||
        !represents(f.target_lan.mac))
      return;
    LaneControlFrame r = f;
    r.op = LaneOp::kArpResponse;
    r.status = LaneStatus::kSuccess;
    r.target_atm = own_atm_;
    send_lane_control(port, self_, les_, r);
  }

  void on_le_arp_response(const LaneControlFrame& f, std::uint64_t now_ns, LinkPort& port) {
    counters_.arp_replies.add();
    const int station = port.station_of(f.target_atm);
    if (phase_ == Phase::kBusConnect && f.transaction_id == phase_tid_ &&
        f.target_lan.mac == kBroadcastMac) {
      if (station < 0) return counters_.naks.add();
      bus_ = station;
      phase_ = Phase::kOperational;
      counters_.ready.store(true);
      return;
    }
    Entry* e = find(f.target_lan.mac);
    if (!e || e->tid != f.transaction_id) return;  // a late answer to an earlier request
    if (station < 0) return fail(*e, now_ns);      // an address the switch cannot reach
    if (e->state == State::kDirect) {
      e->expires_ns = now_ns + kAgingNs;
    } else if (e->state == State::kResolving) {
      // The data-direct VC is known; before frames use it, flush the BUS path.
      e->atm = f.target_atm;
      e->station = station;
      e->retries = 0;
      e->state = State::kFlushing;
      send_flush(*e, now_ns, port);
    }
  }

  void send_flush(Entry& e, std::uint64_t now_ns, LinkPort& port) {
    e.tid = next_tid_++;
    e.last_request_ns = now_ns;
    LaneControlFrame f;
    f.op = LaneOp::kFlushRequest;
    f.transaction_id = e.tid;
    f.requester_lecid = lecid_;
    f.source_lan = LanDestination::of_mac(own_mac_);
    f.target_lan = LanDestination::of_mac(e.mac);
    f.source_atm = own_atm_;
    f.target_atm = e.atm;
    send_lane_control(port, self_, bus_, f);  // the old path: the multicast send VC
  }

  void on_flush_response(const LaneControlFrame& f, std::uint64_t now_ns, LinkPort& port) {
    if (f.requester_lecid != lecid_) return;  // control distribute: another LEC's flush
    for (Entry& e : table_) {
      if (e.state != State::kFlushing || e.tid != f.transaction_id) continue;
      e.state = State::kDirect;
      e.expires_ns = now_ns + kAgingNs;
      counters_.flushes.add();
      release_pending(port);
      return;
    }
  }

  void resolve(Entry& e, std::uint64_t now_ns, LinkPort& port) {
    e.state = State::kResolving;
    e.retries = 0;
    e.since_ns = now_ns;
    send_le_arp(e, now_ns, port);
  }

  void send_le_arp(Entry& e, std::uint64_t now_ns, LinkPort& port) {
    e.tid = next_tid_++;
    e.last_request_ns = now_ns;
    counters_.arp_requests.add();
    send_lane_control(port, self_, les_,
                      make_le_arp_request(e.tid, lecid_, own_mac_, own_atm_, e.mac));
  }

  void fail(Entry& e, std::uint64_t now_ns) {
    e.state = State::kFailed;
    e.since_ns = now_ns;
    drop_pending(e.mac);
  }

  // --- the table and the held frames ---

  Entry* find(const Mac& mac) {
    for (Entry& e : table_)
      if (e.state != State::kFree && e.mac == mac) return &e;
    return nullptr;
  }

  Entry* allocate(const Mac& mac, std::uint64_t now_ns) {
    Entry* spare = nullptr;
    for (Entry& e : table_)
      if (e.state == State::kFree) {
        spare = &e;
        break;
      }
    if (!spare) {  // full: reuse the oldest failed entry, else the oldest of all
      spare = &*std::min_element(table_.begin(), table_.end(), [](const Entry& a, const Entry& b) {
        const bool af = a.state == State::kFailed, bf = b.state == State::kFailed;
        return af != bf ? af : a.since_ns < b.since_ns;
      });
      drop_pending(spare->mac);
    }
    *spare = Entry{};
    spare->mac = mac;
    spare->since_ns = now_ns;
    spare->unknown_window_ns = now_ns;
    return spare;
  }

  bool unknown_allowed(Entry& e, std::uint64_t now_ns) {
    if (now_ns - e.unknown_window_ns >= kUnknownFrameTimeNs) {
      e.unknown_window_ns = now_ns;
      e.unknown_sent = 0;
    }
    if (e.unknown_sent >= kMaxUnknownFrames) return false;
    ++e.unknown_sent;
    return true;
  }

  bool holding(const Mac& mac) const {
    if (pending_count_ == 0) return false;
    for (const Pending& p : pending_)
      if (p.used && p.mac == mac) return true;
    return false;
  }

  bool hold(const Mac& mac, std::span<const std::uint8_t> frame) {
    for (Pending& p : pending_) {
      if (p.used) continue;
      std::copy(frame.begin(), frame.end(), p.bytes.begin());
      p.length = frame.size();
      p.mac = mac;
      p.seq = next_seq_++;
      p.used = true;
      ++pending_count_;
      return true;
    }
    return false;
  }

  // Sends held frames whose MAC has a data-direct VC now, oldest first (so each MAC's frames
  // keep their order), while the line has room; the rest wait for the next frame or timer.
  void release_pending(LinkPort& port) {
    while (pending_count_ > 0) {
      Pending* first = nullptr;
      const Entry* entry = nullptr;
      for (Pending& p : pending_) {
        if (!p.used || (first && p.seq > first->seq)) continue;
        const Entry* e = find(p.mac);
        if (e && e->state == State::kDirect) {
          first = &p;
          entry = e;
        }
      }
      if (!first || !port.line_has_room(self_, entry->station)) return;
      counters_.direct_frames.add();
      send_frame(entry->station, {first->bytes.data(), first->length}, port);
      first->used = false;
      --pending_count_;
    }
  }

  void drop_pending(const Mac& mac) {
    for (Pending& p : pending_) {
      if (!p.used || p.mac != mac) continue;
      p.used = false;
      --pending_count_;
      counters_.drop_unresolved.add();
    }
  }

  void send_frame(int to, std::span<const std::uint8_t> frame, LinkPort& port) {
    std::array<std::uint8_t, kMaxEncapHeaderBytes> head{};
    SduParts sdu;
    const EncapParams params{Encap::kLane, 0, lecid_, max_frame_};
    if (encapsulate(params, frame, head, sdu) != EncapStatus::kOk)
      return counters_.drop_too_large.add();
    if (!port.send(self_, to, sdu)) counters_.drop_line_full.add();
  }

  int self_;
  Side side_;
  Mac own_mac_;
  std::vector<Mac> proxied_;  // MACs this LEC represents besides its own (a proxy LEC)
  AtmAddress own_atm_;
  std::size_t max_frame_;
  Phase phase_ = Phase::kConfigure;
  std::uint32_t phase_tid_ = 0, next_tid_ = 1;
  std::uint64_t phase_sent_ns_ = 0;
  std::string elan_name_;
  int les_ = kServer, bus_ = kBus;
  std::uint16_t lecid_ = 0;
  std::array<Entry, kTableSize> table_{};
  std::vector<Pending> pending_;
  std::size_t pending_count_ = 0;
  std::uint64_t next_seq_ = 0;
  HostCounters& counters_;
};

}  // namespace

std::unique_ptr<Station> make_lane_client(const LinkConfig& config, int self,
                                          HostCounters& counters) {
  return std::make_unique<LaneClient>(config, self, counters);
}

}  // namespace mtperf::atm
