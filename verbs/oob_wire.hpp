#pragma once
// What the two ends of a flow tell each other over TCP when the queue pairs are connected out of
// band (-O connect=oob, oob.hpp): per queue pair its number, first packet sequence number, port
// LID, active path MTU, READ depths and GID, and the connection's ConnInfo (private_data.hpp:
// the proof that it is this test's flow, the landing slots and their key, the credits). One
// fixed-size message each way, big-endian, read in full or not at all:
//
//   offset  bytes
//        0      4  magic "MTOB"
//        4      1  version (kOobVersion)
//        5      1  link layer: 1 InfiniBand, 2 Ethernet (RoCE)
//        6      1  active MTU of the port, as ibv_mtu (1: 256 .. 5: 4096)
//        7      1  zero
//        8      4  QP number (24 bits)
//       12      4  PSN (24 bits)
//       16      2  LID (InfiniBand; 0 on RoCE)
//       18      1  responder resources (READs the side answers at once), 1..kReadDepth
//       19      1  initiator depth (READs the side keeps in flight), 1..kReadDepth
//       20     16  GID (RoCE: the source GID; InfiniBand: may be zero)
//       36      4  zero
//       40     48  ConnInfo (private_data.hpp)
//
// After the two messages, the accepting side's QP is in RTS; the connecting side moves its own to
// RTS and sends the 4 bytes "MTRY" (kOobReady), after which the accepting side may send. So no
// side sends before its peer's QP can receive. Pure: no verbs, no sockets (fuzzed, unit-tested).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "verbs/device_rules.hpp"
#include "verbs/private_data.hpp"

namespace mtperf::rdma {

inline constexpr uint32_t kOobMagic = 0x4d544f42;  // "MTOB"
inline constexpr uint8_t kOobVersion = 1;
inline constexpr size_t kOobBytes = 88;
inline constexpr uint32_t kOobReady = 0x4d545259;  // "MTRY"
inline constexpr uint8_t kLinkIb = 1, kLinkEthernet = 2;

struct OobQp {
  uint32_t qpn = 0;  // 2..0xffffff (0 and 1 are the special queue pairs)
  uint32_t psn = 0;  // 0..0xffffff
  uint16_t lid = 0;
  uint8_t link = kLinkEthernet;
  uint8_t mtu = 0;  // ibv_mtu: 1..5
  ReadDepths depths;
  std::array<uint8_t, 16> gid{};
};

struct OobHello {
  OobQp qp;
  ConnInfo conn;
};

enum class OobError : uint8_t {
  ok,
  too_short,
  magic,
  version,
  link_layer,
  mtu,
  qpn,
  psn,
  depths,
  gid,
  reserved,
  conn_info
};
std::string_view to_string(OobError e);

// Writes exactly kOobBytes bytes.
void encode_oob(const OobHello& h, uint8_t* out);
// Reads len bytes (null with len 0 is fine): ok, or the first field that is not as this version
// writes it. A RoCE (Ethernet) hello must carry a GID; an InfiniBand one a LID or a GID.
OobError decode_oob(const uint8_t* data, size_t len, OobHello& out);

// The path MTU of a connection: the smaller of the two ports' active MTUs (ibv_mtu values).
constexpr uint8_t path_mtu(uint8_t mine, uint8_t peers) {
  return mine < peers ? mine : peers;
}
// The READ depths a side sets on its queue pair, from its own and the peer's (as the accepting
// side answers a request on the rdma_cm path: device_rules.hpp's accept_read_depths): never
// more READs in flight than the peer answers at once, nor more answered than it was offered.
constexpr ReadDepths oob_read_depths(ReadDepths mine, ReadDepths peers) {
  return accept_read_depths(mine, request_as_seen(peers));
}

// The connecting side's "ready" (kOobReady), as sent; whether 4 bytes are it.
std::array<uint8_t, 4> encode_ready();
bool is_ready(const uint8_t* four);

}  // namespace mtperf::rdma
