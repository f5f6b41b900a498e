// Fuzz target: ATMARP and InATMARP (RFC 2225) as the emulated CLIP link receives them — the
// packet decoder (decode_atmarp), the LIS's ATMARP server station and a host's ATMARP client,
// fed PDUs in any order and at any time.
//
// Input: byte 0: bit 0 InATMARP on the PVC (no server), bit 1 VC-mux data VCs (server mode);
// then steps, each a byte of kind (bits 0-2) and time step (bits 3-7, in 100 ms) followed by a
// record (a 2-byte length, then its bytes):
//   0, 1: an SDU to the ATMARP server from the near (0) or far (1) host;
//   2, 3: an SDU to the near host from the server (2) or from the far host (3);
//   4:    an IP packet from the near host's device, which it must resolve, hold and send;
//   5:    the lines refuse everything (record length odd) or take PDUs again (even);
//   6, 7: an ATMARP packet that the target puts in LLC/SNAP, to the server from the near host
//         (6) or to the near host from the server (7), so the fuzzer need not keep the header.
// After each step every station's timer runs.
//
// Findings beyond crashes and sanitizer reports: any exception out of a station; a packet that
// decode_atmarp() accepts but that does not encode back to the same bytes; a PDU a station sends
// that is neither a well-formed ATMARP packet in LLC/SNAP nor an IPv4 packet; data from the
// ATMARP server.
#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "atmlink/clip_stations.hpp"
#include "fuzz/atm_port.hpp"
#include "fuzz/fuzz_support.hpp"

namespace mtperf::fuzz {
namespace {

using namespace mtperf::atm;

constexpr Ipv4 kSubnet = 0xC0A80A00;  // 192.168.10.0/24

// decode_atmarp is strict, so what it accepts encodes back to the very same bytes.
void check_atmarp(std::span<const uint8_t> bytes, bool must_decode) {
  AtmArpPacket p;
  try {
    p = decode_atmarp(bytes);
  } catch (const std::invalid_argument& e) {
    if (must_decode) std::fprintf(stderr, "fuzz: %s\n", e.what());
    check(!must_decode, "a station sent an ATMARP packet that does not decode");
    return;
  }
  const std::vector<uint8_t> again = encode_atmarp(p);
  check(std::equal(bytes.begin(), bytes.end(), again.begin(), again.end()),
        "an ATMARP packet that does not encode back to its bytes");
}

void check_sdu_in(std::span<const uint8_t> sdu) {
  const Decapsulated d = decapsulate(EncapParams{Encap::kLlcSnap, kEtherTypeArp}, sdu);
  if (d.status == EncapStatus::kOk && d.ethertype == kEtherTypeArp) check_atmarp(d.payload, false);
}

// What the stations sent: ATMARP in LLC/SNAP to and from the server, and from a host either that
// or an IPv4 packet (in LLC/SNAP, or alone on a VC-mux data VC). A host's IPv4 packets may go to
// the server's own ATM address: an ATMARP reply is free to map an IP address there, and the host
// then opens a data VC to it, with the data VCs' encapsulation. The server sends ATMARP only.
void check_sent(FuzzPort& port, const LinkConfig& config) {
  for (const SentPdu& p : port.sent) {
    const bool data_vc = p.from != kServer && p.to != kServer;
    const bool vcmux = config.clip_encap == Encap::kVcMux && p.from != kServer;
    Decapsulated d = decapsulate(
        EncapParams{data_vc && vcmux ? Encap::kVcMux : Encap::kLlcSnap, kEtherTypeIpv4}, p.sdu);
    if (d.status != EncapStatus::kOk && !data_vc && vcmux)
      d = decapsulate(EncapParams{Encap::kVcMux, kEtherTypeIpv4}, p.sdu);
    if (d.status != EncapStatus::kOk) {
      std::fprintf(stderr, "fuzz: %zu-byte PDU from %d to %d:", p.sdu.size(), p.from, p.to);
      for (size_t i = 0; i < p.sdu.size() && i < 32; ++i)
        std::fprintf(stderr, " %02x", p.sdu[i]);
      std::fprintf(stderr, "\n");
    }
    check(d.status == EncapStatus::kOk, "a station sent a PDU that does not decapsulate");
    if (d.ethertype == kEtherTypeArp) {
      check_atmarp(d.payload, true);
    } else {
      check(p.from != kServer, "the ATMARP server sent data");
      check(d.payload.size() >= 20 && (d.payload[0] >> 4) == 4, "a station sent a non-IPv4 packet");
      check(d.payload.size() <= config.mtu, "a station sent a packet over the MTU");
    }
  }
  port.sent.clear();
}

void run(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  const uint8_t opt = in.u8();
  LinkConfig config;
  config.mode = LinkMode::kClip;
  config.adapter = 7;
  config.inatmarp_pvc = opt & 1;
  config.clip_encap = (opt & 2) && !config.inatmarp_pvc ? Encap::kVcMux : Encap::kLlcSnap;
  config.subnet = kSubnet;
  config.near_ip = kSubnet + 1;
  config.far_ip = kSubnet + 2;
  config.server_ip = kSubnet + 254;
  config.mtu = 1500;
  config.max_pending = 4;
  validate(config);

  FuzzPort port(config);
  HostCounters near_counters;
  auto near = make_clip_host(config, kNearHost, near_counters);
  std::unique_ptr<Station> server;
  if (!config.inatmarp_pvc) server = make_atmarp_server_station(config);
  uint64_t now = 1'000'000'000;
  near->start(now, port);
  if (server) server->start(now, port);
  check_sent(port, config);

  while (!in.empty()) {
    const uint8_t kind = in.u8();
    now += uint64_t(kind >> 3) * 100'000'000;
    const auto rec = in.record();
    std::array<uint8_t, kMaxEncapHeaderBytes> head{};
    SduParts parts;
    std::vector<uint8_t> wrapped;
    if ((kind & 7) >= 6) {
      encapsulate(EncapParams{Encap::kLlcSnap, kEtherTypeArp}, rec, head, parts);
      wrapped.assign(parts.head.begin(), parts.head.end());
      wrapped.insert(wrapped.end(), rec.begin(), rec.end());
    }
    switch (kind & 7) {
      case 0:
      case 1:
        check_sdu_in(rec);
        if (server) server->on_pdu(kind & 1, rec, now, port);
        break;
      case 2:
      case 3:
        check_sdu_in(rec);
        near->on_pdu((kind & 1) ? kFarHost : kServer, rec, now, port);
        break;
      case 4:
        near->from_host(rec, now, port);
        break;
      case 5:
        port.room = rec.size() % 2 == 0;
        break;
      case 6:
        check_atmarp(rec, false);
        if (server) server->on_pdu(kNearHost, wrapped, now, port);
        break;
      case 7:
        check_atmarp(rec, false);
        near->on_pdu(kServer, wrapped, now, port);
        break;
    }
    near->on_timer(now, port);
    if (server) server->on_timer(now, port);
    check_sent(port, config);
  }
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mtperf::fuzz::run(data, size);
  return 0;
}
