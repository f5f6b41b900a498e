#include "atmlink/atmarp.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace mtperf::atm {
namespace {

constexpr std::uint8_t kTypeE164 = 0x40;
constexpr std::uint8_t kTypeReserved = 0x80;
constexpr std::uint8_t kLengthMask = 0x3F;

std::uint8_t type_and_length(const AtmNumber& n) {
  return static_cast<std::uint8_t>((n.e164 ? kTypeE164 : 0) | (n.length & kLengthMask));
}

void put16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v & 0xFF));
}

void put_ip(std::vector<std::uint8_t>& out, const std::optional<Ipv4>& ip) {
  if (!ip) return;
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<std::uint8_t>(*ip >> shift));
  }
}

void put_number(std::vector<std::uint8_t>& out, const AtmNumber& n) {
  out.insert(out.end(), n.bytes.begin(), n.bytes.begin() + n.length);
}

bool known_op(std::uint16_t op) {
  return op == 1 || op == 2 || op == 8 || op == 9 || op == 10;
}

// Reads the variable part of a packet with bounds checks, naming the field that overruns.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  AtmNumber number(std::uint8_t tl, const char* field) {
    if (tl & kTypeReserved) {
      throw std::invalid_argument(
          fmt::format("ATMARP {}: reserved bit 0x80 set in its type and "
                      "length byte 0x{:02x}",
                      field, tl));
    }
    AtmNumber n;
    n.e164 = (tl & kTypeE164) != 0;
    n.length = tl & kLengthMask;
    if (n.length > kMaxAtmNumberBytes) {
      throw std::invalid_argument(fmt::format(
          "ATMARP {}: length {} exceeds the 20-byte NSAP address size", field, n.length));
    }
    const auto src = take(n.length, field);
    std::copy(src.begin(), src.end(), n.bytes.begin());
    return n;
  }

  std::optional<Ipv4> ip(std::uint8_t length, const char* field) {
    if (length == 0) return std::nullopt;
    if (length != 4) {
      throw std::invalid_argument(
          fmt::format("ATMARP {}: protocol address length {} is not 0 or 4 (IPv4)", field, length));
    }
    const auto b = take(4, field);
    return (Ipv4{b[0]} << 24) | (Ipv4{b[1]} << 16) | (Ipv4{b[2]} << 8) | Ipv4{b[3]};
  }

  std::size_t remaining() const { return bytes_.size() - pos_; }

 private:
  std::span<const std::uint8_t> take(std::size_t n, const char* field) {
    if (remaining() < n) {
      throw std::invalid_argument(fmt::format(
          "ATMARP packet truncated in {}: needs {} bytes, {} left", field, n, remaining()));
    }
    const auto out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = kAtmArpFixedBytes;
};

}  // namespace

const char* to_string(AtmArpOp op) {
  switch (op) {
    case AtmArpOp::kRequest:
      return "ATMARP_Request";
    case AtmArpOp::kReply:
      return "ATMARP_Reply";
    case AtmArpOp::kInRequest:
      return "InATMARP_Request";
    case AtmArpOp::kInReply:
      return "InATMARP_Reply";
    case AtmArpOp::kNak:
      return "ATMARP_NAK";
  }
  return "?";
}

AtmNumber AtmNumber::nsap(const std::array<std::uint8_t, 20>& address) {
  AtmNumber n;
  n.length = 20;
  n.bytes = address;
  return n;
}

std::vector<std::uint8_t> encode_atmarp(const AtmArpPacket& p) {
  std::vector<std::uint8_t> out;
  out.reserve(kAtmArpFixedBytes + 4 * kMaxAtmNumberBytes + 8);
  put16(out, kAtmArpHardwareType);
  put16(out, kAtmArpProtocolIpv4);
  out.push_back(type_and_length(p.source_atm));
  out.push_back(type_and_length(p.source_subaddress));
  put16(out, static_cast<std::uint16_t>(p.op));
  out.push_back(p.source_ip ? 4 : 0);
  out.push_back(type_and_length(p.target_atm));
  out.push_back(type_and_length(p.target_subaddress));
  out.push_back(p.target_ip ? 4 : 0);
  put_number(out, p.source_atm);
  put_number(out, p.source_subaddress);
  put_ip(out, p.source_ip);
  put_number(out, p.target_atm);
  put_number(out, p.target_subaddress);
  put_ip(out, p.target_ip);
  return out;
}

AtmArpPacket decode_atmarp(std::span<const std::uint8_t> b) {
  if (b.size() < kAtmArpFixedBytes) {
    throw std::invalid_argument(
        fmt::format("ATMARP packet of {} bytes is shorter than its 12-byte fixed part", b.size()));
  }
  const auto be16 = [&](std::size_t at) {
    return static_cast<std::uint16_t>(b[at] << 8 | b[at + 1]);
  };
  if (be16(0) != kAtmArpHardwareType) {
    throw std::invalid_argument(
        fmt::format("ATMARP ar$hrd is 0x{:04x}, expected 0x0013 (ATM Forum)", be16(0)));
  }
  if (be16(2) != kAtmArpProtocolIpv4) {
    throw std::invalid_argument(
        fmt::format("ATMARP ar$pro is 0x{:04x}, expected 0x0800 (IPv4)", be16(2)));
  }
  if (!known_op(be16(6))) {
    throw std::invalid_argument(
        fmt::format("ATMARP ar$op {} is not 1, 2, 8, 9 or 10 (RFC 2225)", be16(6)));
  }
  AtmArpPacket p;
  p.op = static_cast<AtmArpOp>(be16(6));
  Reader r(b);
  p.source_atm = r.number(b[4], "ar$sha");
  p.source_subaddress = r.number(b[5], "ar$ssa");
  p.source_ip = r.ip(b[8], "ar$spa");
  p.target_atm = r.number(b[9], "ar$tha");
  p.target_subaddress = r.number(b[10], "ar$tsa");
  p.target_ip = r.ip(b[11], "ar$tpa");
  if (r.remaining() != 0) {
    throw std::invalid_argument(
        fmt::format("ATMARP packet has {} bytes after ar$tpa", r.remaining()));
  }
  return p;
}

AtmArpPacket make_atmarp_request(const AtmNumber& own_atm, Ipv4 own_ip, Ipv4 target_ip) {
  AtmArpPacket p;
  p.op = AtmArpOp::kRequest;
  p.source_atm = own_atm;
  p.source_ip = own_ip;
  p.target_ip = target_ip;
  return p;
}

AtmArpPacket make_inatmarp_reply(const AtmArpPacket& in_request, const AtmNumber& own_atm,
                                 Ipv4 own_ip) {
  AtmArpPacket p;
  p.op = AtmArpOp::kInReply;
  p.source_atm = own_atm;
  p.source_ip = own_ip;
  p.target_atm = in_request.source_atm;
  p.target_subaddress = in_request.source_subaddress;
  p.target_ip = in_request.source_ip;
  return p;
}

AtmArpPacket make_atmarp_nak(const AtmArpPacket& request) {
  AtmArpPacket p = request;
  p.op = AtmArpOp::kNak;
  return p;
}

}  // namespace mtperf::atm
