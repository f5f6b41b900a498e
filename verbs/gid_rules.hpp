#pragma once
// Which local GID an out-of-band connection (oob.hpp) uses as its source, as perftest's -x does
// when it is given, and as perftest and rdma_cm choose when it is not: on RoCE, the GID that
// holds the flow's own IP address (IPv4 as ::ffff:a.b.c.d), of RoCE v2 where the port has one
// (routable: UDP/IP), else of RoCE v1; on InfiniBand, index 0 (the port's own GID). Pure.
#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace mtperf::rdma {

enum class GidType : uint8_t { ib, roce_v1, roce_v2 };

struct GidEntry {
  uint32_t index = 0;
  GidType type = GidType::ib;
  std::array<uint8_t, 16> gid{};
};

// The IPv4-mapped form of an IPv4 address (network order bytes), or an IPv6 address as it is.
inline std::array<uint8_t, 16> gid_of_ipv4(const uint8_t (&a)[4]) {
  std::array<uint8_t, 16> g{};
  g[10] = 0xff;
  g[11] = 0xff;
  for (int i = 0; i < 4; ++i)
    g[12 + i] = a[i];
  return g;
}

struct GidChoice {
  int index = -1;   // -1: none; why says so
  std::string why;  // "" when index >= 0
};

// entries: the port's GID table, empty (all-zero) entries left out. `ethernet`: a RoCE port;
// `address`: the flow's local address as a GID (gid_of_ipv4 or the IPv6 bytes); `wanted`: -O
// gid_index, or -1.
inline GidChoice choose_gid(std::span<const GidEntry> entries, bool ethernet,
                            const std::array<uint8_t, 16>& address, int wanted) {
  if (wanted >= 0) {
    for (const GidEntry& e : entries) {
      if (int(e.index) == wanted) return {wanted, ""};
    }
    return {-1, "-O gid_index=" + std::to_string(wanted) + ": the port has no GID at that index (" +
                    std::to_string(entries.size()) + " in its table; `ibv_devinfo -v` lists them)"};
  }
  if (!ethernet) return {0, ""};
  for (GidType t : {GidType::roce_v2, GidType::roce_v1}) {
    for (const GidEntry& e : entries) {
      if (e.type == t && e.gid == address) return {int(e.index), ""};
    }
  }
  return {-1,
          "the RoCE port has no GID for the flow's address: is the address on the RDMA "
          "device's network interface? (or give -O gid_index=N)"};
}

}  // namespace mtperf::rdma
