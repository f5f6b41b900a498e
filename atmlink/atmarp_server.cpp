// The ATMARP server of one logical IP subnet (RFC 2225 section 8.4).
#include <stdexcept>
#include <string>

#include "atmlink/atmarp.hpp"

namespace mtperf::atm {

AtmArpServer::AtmArpServer(const AtmNumber& own_atm, Ipv4 own_ip, const AtmArpServerConfig& config)
    : own_atm_(own_atm), own_ip_(own_ip), config_(config) {
  if (config.prefix_length > 32) {
    throw std::invalid_argument("ATMARP server prefix length " +
                                std::to_string(config.prefix_length) + " exceeds 32");
  }
  mask_ = config.prefix_length == 0 ? 0 : ~Ipv4{0} << (32 - config.prefix_length);
  if (!in_subnet(own_ip)) {
    throw std::invalid_argument(
        "ATMARP server address lies outside its logical IP subnet; "
        "give the server an address inside the LIS");
  }
  if (own_atm.empty()) {
    throw std::invalid_argument("ATMARP server needs its own ATM address");
  }
}

bool AtmArpServer::in_subnet(Ipv4 ip) const {
  return (ip & mask_) == (config_.subnet & mask_);
}

AtmArpPacket AtmArpServer::make_inatmarp_request(const AtmNumber& peer_atm) const {
  AtmArpPacket p;
  p.op = AtmArpOp::kInRequest;
  p.source_atm = own_atm_;
  p.source_ip = own_ip_;
  p.target_atm = peer_atm;
  return p;
}

// Learns (source IP -> source ATM address). A live entry is never taken over by another ATM
// address: that would let a misconfigured client steal a neighbour's address (RFC 2225 8.4).
void AtmArpServer::learn(const AtmArpPacket& in, std::uint64_t now_ns) {
  if (!in.source_ip || in.source_atm.empty() || !in_subnet(*in.source_ip)) return;
  auto it = table_.find(*in.source_ip);
  if (it != table_.end() && it->second.expires_ns > now_ns && !(it->second.atm == in.source_atm)) {
    ++stats_.conflicts;
    return;
  }
  table_[*in.source_ip] = Entry{in.source_atm, now_ns + config_.entry_lifetime_ns};
  ++stats_.registrations;
}

std::optional<AtmNumber> AtmArpServer::resolve(Ipv4 ip, std::uint64_t now_ns) const {
  if (ip == own_ip_) return own_atm_;
  const auto it = table_.find(ip);
  if (it == table_.end() || it->second.expires_ns <= now_ns) return std::nullopt;
  return it->second.atm;
}

std::optional<AtmArpPacket> AtmArpServer::handle(const AtmArpPacket& in, std::uint64_t now_ns) {
  switch (in.op) {
    case AtmArpOp::kInReply:
      learn(in, now_ns);
      return std::nullopt;
    case AtmArpOp::kInRequest:
      ++stats_.replies;
      return make_inatmarp_reply(in, own_atm_, own_ip_);
    case AtmArpOp::kRequest:
      break;
    case AtmArpOp::kReply:
    case AtmArpOp::kNak:
      ++stats_.ignored;
      return std::nullopt;
  }
  learn(in, now_ns);
  const auto found = in.target_ip ? resolve(*in.target_ip, now_ns) : std::nullopt;
  if (!found) {
    ++stats_.naks;
    return make_atmarp_nak(in);
  }
  AtmArpPacket reply;
  reply.op = AtmArpOp::kReply;
  reply.source_atm = *found;
  reply.source_ip = in.target_ip;
  reply.target_atm = in.source_atm;
  reply.target_subaddress = in.source_subaddress;
  reply.target_ip = in.source_ip;
  ++stats_.replies;
  return reply;
}

std::size_t AtmArpServer::expire(std::uint64_t now_ns) {
  std::size_t removed = 0;
  for (auto it = table_.begin(); it != table_.end();) {
    if (it->second.expires_ns <= now_ns) {
      it = table_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

}  // namespace mtperf::atm
