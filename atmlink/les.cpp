// The LE server model (LANE v1 section 5): LECID assignment, MAC registration, LE_ARP.
#include <stdexcept>

#include "atmlink/encap.hpp"
#include "atmlink/lane_ctrl.hpp"

namespace mtperf::atm {
namespace {

bool is_zero(const AtmAddress& a) {
  for (auto b : a) {
    if (b != 0) return false;
  }
  return true;
}

}  // namespace

Les::Les(const LesConfig& config)
    : config_(config), max_frame_code_(lane_max_frame_code(config.max_frame_bytes)) {
  if (config.elan_name.size() > kElanNameMaxBytes) {
    throw std::invalid_argument("ELAN name '" + config.elan_name + "' exceeds 32 bytes");
  }
}

std::optional<std::uint16_t> Les::next_lecid() {
  for (unsigned tries = 0; tries < kMaxLecid; ++tries) {
    last_lecid_ =
        last_lecid_ >= kMaxLecid ? kMinLecid : static_cast<std::uint16_t>(last_lecid_ + 1);
    if (!clients_.contains(last_lecid_)) return last_lecid_;
  }
  return std::nullopt;
}

LaneStatus Les::add_registration(const Mac& mac, const AtmAddress& atm, std::uint16_t lecid,
                                 std::uint64_t now_ns) {
  const auto it = registrations_.find(mac);
  const bool live =
      it != registrations_.end() && (it->second.expires_ns == 0 || it->second.expires_ns > now_ns);
  if (live && it->second.lecid != lecid) return LaneStatus::kDuplicateLanDestination;
  const std::uint64_t lifetime = config_.registration_lifetime_ns;
  registrations_[mac] = Registration{atm, lecid, lifetime == 0 ? 0 : now_ns + lifetime};
  ++stats_.registrations;
  return LaneStatus::kSuccess;
}

LaneControlFrame Les::join(const LaneControlFrame& request, std::uint64_t now_ns) {
  LaneControlFrame r = request;
  r.op = LaneOp::kJoinResponse;
  r.lan_type = config_.lan_type;
  r.max_frame_code = max_frame_code_;
  r.elan_name = config_.elan_name;
  r.status = LaneStatus::kSuccess;
  if (is_zero(request.source_atm)) r.status = LaneStatus::kInvalidAtmAddress;
  for (const auto& [lecid, atm] : clients_) {
    if (atm == request.source_atm) r.status = LaneStatus::kDuplicateAtmAddress;
  }
  if (request.max_frame_code != 0 && request.max_frame_code < max_frame_code_) {
    r.status = LaneStatus::kInvalidRequestParameters;  // client cannot take our frames
  }
  const std::uint16_t previous_lecid = last_lecid_;
  std::optional<std::uint16_t> lecid;
  if (r.status == LaneStatus::kSuccess) lecid = next_lecid();
  if (r.status == LaneStatus::kSuccess && !lecid) r.status = LaneStatus::kInsufficientResources;
  if (r.status == LaneStatus::kSuccess && request.source_lan.tag == 1) {
    r.status = add_registration(request.source_lan.mac, request.source_atm, *lecid, now_ns);
  }
  if (r.status != LaneStatus::kSuccess) {
    ++stats_.join_rejects;
    last_lecid_ = previous_lecid;  // a refused join does not use up a LECID
    r.requester_lecid = 0;
    return r;
  }
  clients_[*lecid] = request.source_atm;
  r.requester_lecid = *lecid;
  ++stats_.joins;
  return r;
}

LaneControlFrame Les::register_mac(const LaneControlFrame& request, std::uint64_t now_ns) {
  LaneControlFrame r = request;
  r.op = LaneOp::kRegisterResponse;
  if (!clients_.contains(request.requester_lecid)) {
    r.status = LaneStatus::kInvalidRequesterId;
  } else if (request.source_lan.tag != 1) {
    r.status = LaneStatus::kInvalidRequestParameters;
  } else {
    r.status = add_registration(request.source_lan.mac, request.source_atm, request.requester_lecid,
                                now_ns);
  }
  return r;
}

std::optional<LaneControlFrame> Les::le_arp(const LaneControlFrame& request, std::uint64_t now_ns) {
  const auto found =
      request.target_lan.tag == 1 ? resolve(request.target_lan.mac, now_ns) : std::nullopt;
  if (!found) {
    ++stats_.arp_unresolved;
    return std::nullopt;
  }
  LaneControlFrame r = request;
  r.op = LaneOp::kArpResponse;
  r.status = LaneStatus::kSuccess;
  r.target_atm = *found;
  ++stats_.arp_resolved;
  return r;
}

std::optional<LaneControlFrame> Les::handle(const LaneControlFrame& request, std::uint64_t now_ns) {
  switch (request.op) {
    case LaneOp::kJoinRequest:
      return join(request, now_ns);
    case LaneOp::kRegisterRequest:
      return register_mac(request, now_ns);
    case LaneOp::kArpRequest:
      return le_arp(request, now_ns);
    default:
      return std::nullopt;  // responses, and flushes (LEC to LEC), are not for the LES
  }
}

std::optional<AtmAddress> Les::resolve(const Mac& mac, std::uint64_t now_ns) const {
  const auto it = registrations_.find(mac);
  if (it == registrations_.end()) return std::nullopt;
  if (it->second.expires_ns != 0 && it->second.expires_ns <= now_ns) return std::nullopt;
  return it->second.atm;
}

std::size_t Les::expire(std::uint64_t now_ns) {
  return std::erase_if(registrations_, [now_ns](const auto& kv) {
    return kv.second.expires_ns != 0 && kv.second.expires_ns <= now_ns;
  });
}

void Les::leave(std::uint16_t lecid) {
  clients_.erase(lecid);
  std::erase_if(registrations_, [lecid](const auto& kv) { return kv.second.lecid == lecid; });
}

}  // namespace mtperf::atm
