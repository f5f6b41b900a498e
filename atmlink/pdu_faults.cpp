#include "atmlink/pdu_faults.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "atmlink/bytes.hpp"
#include "platform/number.hpp"

namespace mtperf::atm {
namespace {

constexpr std::uint64_t kMaxEvery = 1'000'000'000;
constexpr std::uint8_t kProtoTcp = 6, kProtoUdp = 17;
constexpr std::size_t kMaxMinPayload = 65535;
// Mixed into the seed so that the PDU faults do not repeat the cell faults' stream.
constexpr std::uint64_t kSeedSalt = 0x5044'5546'4155'4c54ull;  // "PDUFAULT"

void check_trigger(const FaultTrigger& t, const char* name) {
  if (!(t.rate >= 0.0 && t.rate <= 1.0))
    throw std::invalid_argument(std::string(name) + " rate " + std::to_string(t.rate) +
                                " must lie in [0, 1]");
  if (t.every > kMaxEvery)
    throw std::invalid_argument(std::string(name) + ": every N takes N in 1..1000000000");
}

}  // namespace

FaultTrigger parse_fault_trigger(std::string_view text) {
  const std::string s(text);
  FaultTrigger t;
  if (s.starts_with("every:")) {
    if (const auto every = parse_whole(text.substr(6), 1, kMaxEvery)) {
      t.every = *every;
      return t;
    }
  } else if (const auto rate = parse_scaled(text, {}); rate && *rate <= 1.0) {
    t.rate = *rate;
    return t;
  }
  throw std::invalid_argument("'" + s +
                              "' is neither a probability in 0..1 nor every:N with N in "
                              "1..1000000000");
}

std::string to_string(const FaultTrigger& t) {
  if (t.every > 0) return "every:" + std::to_string(t.every);
  if (t.rate > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", t.rate);
    return buf;
  }
  return "off";
}

const char* to_string(FaultDirection d) {
  switch (d) {
    case FaultDirection::kBoth:
      return "both";
    case FaultDirection::kNearToFar:
      return "near-to-far";
    case FaultDirection::kFarToNear:
      return "far-to-near";
  }
  return "?";
}

FaultDirection parse_fault_direction(std::string_view text) {
  for (auto d : {FaultDirection::kBoth, FaultDirection::kNearToFar, FaultDirection::kFarToNear})
    if (text == to_string(d)) return d;
  throw std::invalid_argument("'" + std::string(text) +
                              "': use both, near-to-far (client to server) or far-to-near");
}

const char* to_string(FaultProto p) {
  switch (p) {
    case FaultProto::kAny:
      return "any";
    case FaultProto::kTcp:
      return "tcp";
    case FaultProto::kUdp:
      return "udp";
  }
  return "?";
}

FaultProto parse_fault_proto(std::string_view text) {
  for (auto p : {FaultProto::kAny, FaultProto::kTcp, FaultProto::kUdp})
    if (text == to_string(p)) return p;
  throw std::invalid_argument("'" + std::string(text) + "': use any, tcp or udp");
}

bool PduFaultConfig::applies_to_line(int line) const {
  switch (direction) {
    case FaultDirection::kBoth:
      return true;
    case FaultDirection::kNearToFar:
      return line == 0;
    case FaultDirection::kFarToNear:
      return line == 1;
  }
  return false;
}

void validate(const PduFaultConfig& c) {
  check_trigger(c.corrupt, "corruption after the CRC");
  check_trigger(c.duplicate, "duplication");
  check_trigger(c.reorder, "reordering");
  if (c.min_payload > kMaxMinPayload)
    throw std::invalid_argument("minimum payload of a faulted PDU " +
                                std::to_string(c.min_payload) + " exceeds 65535 bytes");
  if (c.hold_ns < 1000 || c.hold_ns > 1'000'000'000)
    throw std::invalid_argument("reorder hold time must be 1 us..1 s");
}

std::uint16_t checksum_adjust(std::uint16_t check, std::span<const std::uint8_t> segment,
                              std::size_t from, std::span<const std::uint8_t> old_bytes) {
  const std::size_t to = from + old_bytes.size();
  auto byte = [&](std::size_t k, bool old) -> std::uint32_t {
    if (old && k >= from && k < to) return old_bytes[k - from];
    return k < segment.size() ? segment[k] : 0;  // an odd segment is padded with a zero byte
  };
  std::uint32_t sum = ~check & 0xFFFFu;
  for (std::size_t i = from & ~std::size_t{1}; i < to; i += 2) {
    const std::uint32_t before = byte(i, true) << 8 | byte(i + 1, true);
    const std::uint32_t after = byte(i, false) << 8 | byte(i + 1, false);
    sum += (~before & 0xFFFFu) + after;  // HC' = ~(~HC + ~m + m')
  }
  while (sum >> 16)
    sum = (sum & 0xFFFFu) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum & 0xFFFFu);
}

PduFaultInjector::PduFaultInjector(const PduFaultConfig& config, std::size_t l3_offset,
                                   std::size_t max_packet, std::uint64_t seed)
    : config_(config), l3_offset_(l3_offset), rng_(seed ^ kSeedSalt) {
  validate(config_);
  corrupt_.config = config_.corrupt;
  duplicate_.config = config_.duplicate;
  reorder_.config = config_.reorder;
  for (Trigger* t : {&corrupt_, &duplicate_, &reorder_})
    rearm(*t);
  scratch_.assign(max_packet, 0);
  hold_.assign(max_packet, 0);
}

void PduFaultInjector::rearm(Trigger& t) {
  if (t.config.every > 0) {
    t.left = t.config.every - 1;
  } else {
    t.left = geometric_gap(rng_, t.config.rate);
  }
}

bool PduFaultInjector::fire(Trigger& t) {
  if (!t.config.active()) return false;
  if (t.left == 0) {
    rearm(t);
    return true;
  }
  if (t.left != kNever) --t.left;
  return false;
}

bool PduFaultInjector::classify(std::span<const std::uint8_t> packet, L4& l4) const {
  if (packet.size() > scratch_.size() || packet.size() < l3_offset_ + 20) return false;
  const std::uint8_t* p = packet.data();
  if (l3_offset_ >= 14 && load_be16(p + 12) != 0x0800) return false;  // LANE: not IPv4
  const std::uint8_t* ip = p + l3_offset_;
  const std::size_t ihl = std::size_t(ip[0] & 0x0F) * 4;
  const std::size_t total = load_be16(ip + 2);
  if ((ip[0] >> 4) != 4 || ihl < 20 || total < ihl || l3_offset_ + total > packet.size())
    return false;
  if ((load_be16(ip + 6) & 0x3FFF) != 0) return false;  // a fragment: its checksum spans others
  const std::uint8_t proto = ip[9];
  if (proto == kProtoTcp && config_.proto == FaultProto::kUdp) return false;
  if (proto == kProtoUdp && config_.proto == FaultProto::kTcp) return false;
  l4.start = l3_offset_ + ihl;
  l4.length = total - ihl;
  const std::uint8_t* seg = p + l4.start;
  if (proto == kProtoTcp && l4.length >= 20) {
    l4.payload = std::size_t(seg[12] >> 4) * 4;
    l4.udp = false;
    if (l4.payload < 20 || l4.payload > l4.length) return false;
  } else if (proto == kProtoUdp && l4.length >= 8 && load_be16(seg + 4) == l4.length) {
    l4.payload = 8;
    l4.udp = true;
  } else {
    return false;
  }
  const std::size_t payload = l4.length - l4.payload;
  return payload > kCorruptSkipBytes && payload >= config_.min_payload;
}

std::span<const std::uint8_t> PduFaultInjector::corrupt(std::span<const std::uint8_t> packet,
                                                        const L4& l4) {
  std::memcpy(scratch_.data(), packet.data(), packet.size());
  const std::span<std::uint8_t> seg(scratch_.data() + l4.start, l4.length);
  const std::size_t avail = l4.length - l4.payload - kCorruptSkipBytes;
  const std::size_t run = 1 + rng_.below(std::min(kMaxCorruptRun, avail));
  const std::size_t at = l4.payload + kCorruptSkipBytes + rng_.below(avail - run + 1);
  std::array<std::uint8_t, kMaxCorruptRun> old{};
  std::copy_n(seg.begin() + std::ptrdiff_t(at), run, old.begin());
  for (std::size_t i = 0; i < run; ++i)
    seg[at + i] ^= static_cast<std::uint8_t>(1 + rng_.below(255));  // never 0: the byte changes
  const std::size_t field = l4.udp ? 6 : 16;
  const std::uint16_t check = load_be16(&seg[field]);
  if (!l4.udp || check != 0) {  // a UDP checksum of 0 means none
    std::uint16_t fixed = checksum_adjust(check, seg, at, {old.data(), run});
    if (l4.udp && fixed == 0) fixed = 0xFFFF;
    seg[field] = static_cast<std::uint8_t>(fixed >> 8);
    seg[field + 1] = static_cast<std::uint8_t>(fixed);
  }
  counters_.corrupted.add();
  counters_.corrupted_bytes.add(run);
  return {scratch_.data(), packet.size()};
}

PduDeliveries PduFaultInjector::apply(std::span<const std::uint8_t> packet, std::uint64_t now_ns) {
  PduDeliveries out;
  const std::span<const std::uint8_t> held(hold_.data(), held_bytes_);
  L4 l4;
  if (!classify(packet, l4)) {
    if (holding_) {  // the held PDU stays ahead of what is not eligible
      holding_ = false;
      counters_.released.add();
      out.add(held);
    }
    out.add(packet);
    return out;
  }
  counters_.eligible.add();
  // Every trigger draws on every eligible PDU, so each keeps its own count.
  const bool corrupt_it = fire(corrupt_);
  const bool duplicate_it = fire(duplicate_);
  const bool reorder_it = fire(reorder_);
  if (corrupt_it) {
    out.add(corrupt(packet, l4));
  } else if (duplicate_it) {
    out.add(packet);
    out.add(packet);
    counters_.duplicated.add();
  } else if (reorder_it && !holding_) {
    std::memcpy(hold_.data(), packet.data(), packet.size());
    held_bytes_ = packet.size();
    holding_ = true;
    deadline_ns_ = now_ns + config_.hold_ns;
    return out;
  } else {
    out.add(packet);
  }
  if (holding_) {
    holding_ = false;
    counters_.reordered.add();
    out.add(held);
  }
  return out;
}

std::span<const std::uint8_t> PduFaultInjector::expire(std::uint64_t now_ns) {
  if (!holding_ || now_ns < deadline_ns_) return {};
  holding_ = false;
  counters_.released.add();
  return {hold_.data(), held_bytes_};
}

}  // namespace mtperf::atm
