#include "verbs/oob_wire.hpp"

#include <cstring>

namespace mtperf::rdma {

namespace {

void put16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}
void put32(uint8_t* p, uint32_t v) {
  put16(p, uint16_t(v >> 16));
  put16(p + 2, uint16_t(v));
}
uint16_t get16(const uint8_t* p) {
  return uint16_t(p[0] << 8 | p[1]);
}
uint32_t get32(const uint8_t* p) {
  return uint32_t(get16(p)) << 16 | get16(p + 2);
}

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

}  // namespace

std::string_view to_string(OobError e) {
  switch (e) {
    case OobError::ok:
      return "ok";
    case OobError::too_short:
      return "a short message";
    case OobError::magic:
      return "not an mtperf out-of-band message (bad magic)";
    case OobError::version:
      return "another version of mtperf's out-of-band exchange";
    case OobError::link_layer:
      return "an unknown link layer";
    case OobError::mtu:
      return "an MTU out of range (1..5: 256..4096 bytes)";
    case OobError::qpn:
      return "a QP number out of range (2..0xffffff)";
    case OobError::psn:
      return "a PSN out of range (24 bits)";
    case OobError::depths:
      return "READ depths out of range (1..16)";
    case OobError::gid:
      return "no GID (RoCE needs one) or no LID and no GID (InfiniBand)";
    case OobError::reserved:
      return "reserved bytes that are not zero";
    case OobError::conn_info:
      return "a bad connection record";
  }
  return "?";
}

void encode_oob(const OobHello& h, uint8_t* out) {
  std::memset(out, 0, kOobBytes);
  put32(out, kOobMagic);
  out[4] = kOobVersion;
  out[5] = h.qp.link;
  out[6] = h.qp.mtu;
  put32(out + 8, h.qp.qpn);
  put32(out + 12, h.qp.psn);
  put16(out + 16, h.qp.lid);
  out[18] = h.qp.depths.responder_resources;
  out[19] = h.qp.depths.initiator_depth;
  std::memcpy(out + 20, h.qp.gid.data(), 16);
  encode_conn_info(h.conn, out + 40);
}

OobError decode_oob(const uint8_t* data, size_t len, OobHello& out) {
  if (len < kOobBytes || data == nullptr) return OobError::too_short;
  if (get32(data) != kOobMagic) return OobError::magic;
  if (data[4] != kOobVersion) return OobError::version;
  OobHello h;
  h.qp.link = data[5];
  if (h.qp.link != kLinkIb && h.qp.link != kLinkEthernet) return OobError::link_layer;
  h.qp.mtu = data[6];
  if (h.qp.mtu < 1 || h.qp.mtu > 5) return OobError::mtu;
  if (data[7] != 0 || !all_zero(data + 36, 4)) return OobError::reserved;
  h.qp.qpn = get32(data + 8);
  if (h.qp.qpn < 2 || h.qp.qpn > 0xffffff) return OobError::qpn;
  h.qp.psn = get32(data + 12);
  if (h.qp.psn > 0xffffff) return OobError::psn;
  h.qp.lid = get16(data + 16);
  h.qp.depths = {data[18], data[19]};
  auto ok_depth = [](uint8_t d) { return d >= 1 && d <= kReadDepth; };
  if (!ok_depth(h.qp.depths.responder_resources) || !ok_depth(h.qp.depths.initiator_depth)) {
    return OobError::depths;
  }
  std::memcpy(h.qp.gid.data(), data + 20, 16);
  bool no_gid = all_zero(data + 20, 16);
  if (no_gid && (h.qp.link == kLinkEthernet || h.qp.lid == 0)) return OobError::gid;
  if (decode_conn_info(data + 40, kPdBytes, h.conn) != PdError::ok) return OobError::conn_info;
  out = h;
  return OobError::ok;
}

std::array<uint8_t, 4> encode_ready() {
  return {uint8_t(kOobReady >> 24), uint8_t(kOobReady >> 16), uint8_t(kOobReady >> 8),
          uint8_t(kOobReady)};
}

bool is_ready(const uint8_t* four) {
  return (uint32_t(four[0]) << 24 | uint32_t(four[1]) << 16 | uint32_t(four[2]) << 8 | four[3]) ==
         kOobReady;
}

}  // namespace mtperf::rdma
