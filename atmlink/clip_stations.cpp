// RFC 2225 clients and server over the link's VCs (see clip_stations.hpp).
#include "atmlink/clip_stations.hpp"

#include <algorithm>
#include <stdexcept>

namespace mtperf::atm {
namespace {

constexpr std::uint64_t kRetryNs = 1'000'000'000;  // RFC 2225 waits at least 1 s to retry
constexpr int kMaxRetries = 5;
constexpr std::size_t kTableSize = 16;

AtmNumber number_of(const AtmAddress& a) {
  return AtmNumber::nsap(a);
}
AtmAddress address_of(const AtmNumber& n) {
  AtmAddress a{};
  std::copy(n.bytes.begin(), n.bytes.begin() + std::min<std::size_t>(n.length, 20), a.begin());
  return a;
}

Ipv4 load_be32(const std::uint8_t* p) {
  return Ipv4{p[0]} << 24 | Ipv4{p[1]} << 16 | Ipv4{p[2]} << 8 | Ipv4{p[3]};
}

// Sends an ATMARP packet in LLC/SNAP (EtherType 0x0806); control path, so it may allocate.
bool send_arp(LinkPort& port, int from, int to, const AtmArpPacket& packet) {
  const std::vector<std::uint8_t> bytes = encode_atmarp(packet);
  EncapParams params{Encap::kLlcSnap, kEtherTypeArp};
  std::array<std::uint8_t, kMaxEncapHeaderBytes> head{};
  SduParts sdu;
  if (encapsulate(params, bytes, head, sdu) != EncapStatus::kOk) return false;
  return port.send(from, to, sdu);
}

class ClipHost final : public Station {
 public:
  ClipHost(const LinkConfig& config, int self, HostCounters& counters)
      : self_(self),
        peer_(self == kNearHost ? kFarHost : kNearHost),
        side_(self == kNearHost ? Side::kNear : Side::kFar),
        own_ip_(self == kNearHost ? config.near_ip : config.far_ip),
        own_atm_(number_of(station_atm_address(config.adapter, self))),
        mask_(config.prefix_length == 0 ? 0 : ~Ipv4{0} << (32 - config.prefix_length)),
        pvc_(config.inatmarp_pvc),
        counters_(counters) {
    pending_.resize(config.max_pending);
    for (auto& p : pending_)
      p.bytes.resize(config.mtu);
  }

  void start(std::uint64_t now_ns, LinkPort& port) override {
    // Server mode: the server's InATMARP request starts registration. PVC mode: ask the peer.
    if (pvc_) send_inarp_request(now_ns, port);
  }

  bool ready() const override { return pvc_ ? peer_learned_ : registered_; }

  void from_host(std::span<const std::uint8_t> packet, std::uint64_t now_ns,
                 LinkPort& port) override {
    counters_.from_host.add();
    counters_.bytes_from_host.add(packet.size());
    if (packet.size() < 20 || (packet[0] >> 4) != 4) return counters_.drop_not_ip.add();
    if (packet.size() > port.config().mtu) return counters_.drop_too_large.add();
    const Ipv4 dst = load_be32(packet.data() + 16);
    if ((dst & mask_) != (own_ip_ & mask_) || (dst | mask_) == ~Ipv4{0} || dst == own_ip_)
      return counters_.drop_no_route.add();
    Entry* e = entry_for(dst, now_ns);
    if (e->state == State::kResolved) return send_data(e->station, packet, port);
    if (e->state == State::kFailed && now_ns - e->since_ns < kRetryNs)
      return counters_.drop_unresolved.add();
    if (!hold(dst, packet)) counters_.drop_unresolved.add();
    if (e->state != State::kResolving) {
      e->state = State::kResolving;
      e->retries = 0;
      request(*e, now_ns, port);
    }
  }

  void on_pdu(int from, std::span<const std::uint8_t> sdu, std::uint64_t now_ns,
              LinkPort& port) override {
    const bool llc = from == kServer || port.config().clip_encap == Encap::kLlcSnap;
    const EncapParams params{llc ? Encap::kLlcSnap : Encap::kVcMux, kEtherTypeIpv4};
    const Decapsulated d = decapsulate(params, sdu);
    if (d.status != EncapStatus::kOk) return counters_.drop_bad_pdu.add();
    if (d.ethertype == kEtherTypeArp) return on_arp(from, d.payload, now_ns, port);
    if (from == kServer) return counters_.drop_bad_pdu.add();  // the server VC carries ATMARP
    counters_.to_host.add();
    counters_.bytes_to_host.add(d.payload.size());
    port.deliver(side_, d.payload);
  }

  void on_timer(std::uint64_t now_ns, LinkPort& port) override {
    if (pvc_ && !peer_learned_ && now_ns - last_inarp_ns_ >= kRetryNs)
      send_inarp_request(now_ns, port);
    if (!pvc_ && asked_registration_ && !registered_ && now_ns - registration_ns_ >= kRetryNs)
      confirm_registration(now_ns, port);
    for (Entry& e : table_) {
      if (e.state == State::kResolving && now_ns - e.last_request_ns >= kRetryNs) {
        if (++e.retries > kMaxRetries) {
          fail(e, now_ns);
        } else {
          request(e, now_ns, port);
        }
      } else if (e.state == State::kResolved && !pvc_ && now_ns >= e.expires_ns) {
        // Revalidate with the server; the old mapping stays in use meanwhile (RFC 2225 8.7.4).
        e.expires_ns = now_ns + kClientCacheLifetimeNs;
        request(e, now_ns, port);
      }
    }
    flush_pending(port);
  }

 private:
  enum class State : std::uint8_t { kFree, kResolving, kResolved, kFailed };
  struct Entry {
    Ipv4 ip = 0;
    State state = State::kFree;
    int station = -1;
    int retries = 0;
    std::uint64_t since_ns = 0, expires_ns = 0, last_request_ns = 0;
  };
  struct Pending {
    std::vector<std::uint8_t> bytes;  // mtu bytes, allocated once
    std::size_t length = 0;
    Ipv4 dst = 0;
    bool used = false;
  };

  Entry* entry_for(Ipv4 ip, std::uint64_t now_ns) {
    Entry* spare = nullptr;
    for (Entry& e : table_) {
      if (e.state != State::kFree && e.ip == ip) return &e;
      if (!spare && e.state == State::kFree) spare = &e;
    }
    if (!spare) {  // full: reuse the oldest failed entry, else the oldest of all
      spare = &*std::min_element(table_.begin(), table_.end(), [](const Entry& a, const Entry& b) {
        return (a.state != State::kFailed) < (b.state != State::kFailed) ||
               ((a.state != State::kFailed) == (b.state != State::kFailed) &&
                a.since_ns < b.since_ns);
      });
    }
    *spare = Entry{ip, State::kFree, -1, 0, now_ns, 0, 0};
    return spare;
  }

  void send_data(int station, std::span<const std::uint8_t> packet, LinkPort& port) {
    const EncapParams params{port.config().clip_encap, kEtherTypeIpv4};
    std::array<std::uint8_t, kMaxEncapHeaderBytes> head{};
    SduParts sdu;
    if (encapsulate(params, packet, head, sdu) != EncapStatus::kOk)
      return counters_.drop_too_large.add();
    if (!port.send(self_, station, sdu)) counters_.drop_line_full.add();
  }

  bool hold(Ipv4 dst, std::span<const std::uint8_t> packet) {
    for (Pending& p : pending_) {
      if (p.used) continue;
      std::copy(packet.begin(), packet.end(), p.bytes.begin());
      p.length = packet.size();
      p.dst = dst;
      p.used = true;
      ++pending_count_;
      return true;
    }
    return false;
  }

  // Sends the held packets whose address is now resolved, in arrival order per destination,
  // while the line has room; the rest wait for the next timer or reply.
  void flush_pending(LinkPort& port) {
    if (pending_count_ == 0) return;
    for (Pending& p : pending_) {
      if (!p.used) continue;
      const Entry* e = find(p.dst);
      if (!e || e->state != State::kResolved) continue;
      if (!port.line_has_room(self_, e->station)) return;
      send_data(e->station, {p.bytes.data(), p.length}, port);
      p.used = false;
      --pending_count_;
    }
  }

  void drop_pending(Ipv4 dst) {
    for (Pending& p : pending_) {
      if (!p.used || p.dst != dst) continue;
      p.used = false;
      --pending_count_;
      counters_.drop_unresolved.add();
    }
  }

  Entry* find(Ipv4 ip) {
    for (Entry& e : table_)
      if (e.state != State::kFree && e.ip == ip) return &e;
    return nullptr;
  }

  void fail(Entry& e, std::uint64_t now_ns) {
    e.state = State::kFailed;
    e.since_ns = now_ns;
    drop_pending(e.ip);
  }

  void request(Entry& e, std::uint64_t now_ns, LinkPort& port) {
    e.last_request_ns = now_ns;
    if (pvc_) return send_inarp_request(now_ns, port);  // the PVC's peer is the only candidate
    counters_.arp_requests.add();
    send_arp(port, self_, kServer, make_atmarp_request(own_atm_, own_ip_, e.ip));
  }

  void send_inarp_request(std::uint64_t now_ns, LinkPort& port) {
    last_inarp_ns_ = now_ns;
    AtmArpPacket p;
    p.op = AtmArpOp::kInRequest;
    p.source_atm = own_atm_;
    p.source_ip = own_ip_;
    counters_.inarp.add();
    send_arp(port, self_, peer_, p);
  }

  // RFC 2225 8.7.1: after answering the server's InATMARP, ask the server for our own address;
  // the reply carrying our own ATM address confirms the registration.
  void confirm_registration(std::uint64_t now_ns, LinkPort& port) {
    asked_registration_ = true;
    registration_ns_ = now_ns;
    counters_.arp_requests.add();
    send_arp(port, self_, kServer, make_atmarp_request(own_atm_, own_ip_, own_ip_));
  }

  void on_arp(int from, std::span<const std::uint8_t> bytes, std::uint64_t now_ns, LinkPort& port) {
    AtmArpPacket in;
    try {
      in = decode_atmarp(bytes);
    } catch (const std::invalid_argument&) {
      return counters_.drop_bad_pdu.add();
    }
    switch (in.op) {
      case AtmArpOp::kInRequest:
        send_arp(port, self_, from, make_inatmarp_reply(in, own_atm_, own_ip_));
        if (from == kServer && !registered_) confirm_registration(now_ns, port);
        return;
      case AtmArpOp::kInReply:
        if (from == kServer || !in.source_ip) return;
        learn(*in.source_ip, from, now_ns, port);
        peer_learned_ = true;
        counters_.ready.store(true);
        return;
      case AtmArpOp::kReply: {
        counters_.arp_replies.add();
        if (!in.source_ip) return;
        const AtmAddress atm = address_of(in.source_atm);
        if (*in.source_ip == own_ip_) {
          registered_ = in.source_atm == own_atm_;
          counters_.ready.store(registered_);
          return;
        }
        const int station = port.station_of(atm);
        if (station < 0) {  // an address the switch cannot route to
          if (Entry* e = find(*in.source_ip)) fail(*e, now_ns);
          return;
        }
        learn(*in.source_ip, station, now_ns, port);
        return;
      }
      case AtmArpOp::kNak:
        counters_.naks.add();
        if (in.target_ip)
          if (Entry* e = find(*in.target_ip)) fail(*e, now_ns);
        return;
      case AtmArpOp::kRequest:
        return;  // only the server answers requests
    }
  }

  void learn(Ipv4 ip, int station, std::uint64_t now_ns, LinkPort& port) {
    Entry* e = entry_for(ip, now_ns);
    e->state = State::kResolved;
    e->station = station;
    e->since_ns = now_ns;
    e->expires_ns = now_ns + kClientCacheLifetimeNs;
    flush_pending(port);
  }

  int self_, peer_;
  Side side_;
  Ipv4 own_ip_;
  AtmNumber own_atm_;
  Ipv4 mask_;
  bool pvc_;
  bool registered_ = false, asked_registration_ = false, peer_learned_ = false;
  std::uint64_t registration_ns_ = 0, last_inarp_ns_ = 0;
  std::array<Entry, kTableSize> table_{};
  std::vector<Pending> pending_;
  std::size_t pending_count_ = 0;
  HostCounters& counters_;
};

class AtmArpServerStation final : public Station {
 public:
  explicit AtmArpServerStation(const LinkConfig& c)
      : adapter_(c.adapter),
        server_(number_of(station_atm_address(c.adapter, kServer)), c.server_ip,
                AtmArpServerConfig{c.subnet, c.prefix_length, kAtmArpServerEntryLifetimeNs}) {}

  // A server sends InATMARP on each new VC from a client (RFC 2225 8.4.1); here the PVCs to
  // both hosts exist from the start.
  void start(std::uint64_t, LinkPort& port) override {
    for (int host : {kNearHost, kFarHost})
      send_arp(port, kServer, host,
               server_.make_inatmarp_request(number_of(station_atm_address(adapter_, host))));
  }

  void on_pdu(int from, std::span<const std::uint8_t> sdu, std::uint64_t now_ns,
              LinkPort& port) override {
    const Decapsulated d = decapsulate(EncapParams{Encap::kLlcSnap, kEtherTypeArp}, sdu);
    if (d.status != EncapStatus::kOk || d.ethertype != kEtherTypeArp) return;
    try {
      if (auto answer = server_.handle(decode_atmarp(d.payload), now_ns))
        send_arp(port, kServer, from, *answer);
    } catch (const std::invalid_argument&) {
      // A malformed packet gets no answer; the client retries.
    }
  }

  void on_timer(std::uint64_t now_ns, LinkPort&) override { server_.expire(now_ns); }

 private:
  int adapter_;
  AtmArpServer server_;
};

}  // namespace

std::unique_ptr<Station> make_clip_host(const LinkConfig& config, int self,
                                        HostCounters& counters) {
  return std::make_unique<ClipHost>(config, self, counters);
}

std::unique_ptr<Station> make_atmarp_server_station(const LinkConfig& config) {
  return std::make_unique<AtmArpServerStation>(config);
}

}  // namespace mtperf::atm
