// Fuzz target: LAN Emulation control frames and data frames as the emulated LANE link receives
// them — the control frame decoder (decode_lane_control), the LE server station (LECS and LES),
// the BUS, and a host's LE client, fed PDUs in any order and at any time.
//
// Input: byte 0: bits 0-1 the emulated LAN's maximum frame (1516, 4544, 9234, 18190); then
// steps, each a byte of kind (bits 0-2) and time step (bits 3-7, in 100 ms) followed by a record
// (a 2-byte length, then its bytes):
//   0, 1: an SDU to the LE server from the near (0) or far (1) host;
//   2, 3: an SDU to the BUS from the near (2) or far (3) host;
//   4, 5, 6: an SDU to the near host's LE client from the LE server (4), the BUS (5) or the far
//         host's data-direct VC (6);
//   7:    a frame from the near host's device; a 1-byte record instead makes the lines refuse
//         everything (odd byte) or take PDUs again (even).
// After each step every station's timer runs.
//
// Findings beyond crashes and sanitizer reports: any exception out of a station; a control frame
// that does not come back the same through encode_lane_control; a PDU the LE client or server
// sends that is neither a control frame that decodes nor a LANE data frame that decapsulates.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "atmlink/lane_stations.hpp"
#include "fuzz/atm_port.hpp"
#include "fuzz/fuzz_support.hpp"

namespace mtperf::fuzz {
namespace {

using namespace mtperf::atm;

bool is_control(std::span<const uint8_t> sdu) {
  return sdu.size() >= 2 && sdu[0] == 0xFF && sdu[1] == 0x00;
}

// What decode_lane_control accepts encodes to a frame that decodes and encodes the same.
void check_control(std::span<const uint8_t> bytes, bool must_decode) {
  LaneControlFrame f;
  try {
    f = decode_lane_control(bytes);
  } catch (const std::invalid_argument& e) {
    if (must_decode) std::fprintf(stderr, "fuzz: %s\n", e.what());
    check(!must_decode, "a station sent a LANE control frame that does not decode");
    return;
  }
  check(f.elan_name.size() <= kElanNameMaxBytes, "an ELAN name over 32 bytes");
  const auto once = encode_lane_control(f);
  check(encode_lane_control(decode_lane_control(once)) == once,
        "a LANE control frame that changed through encode/decode");
  // The fixed part, up to the end of the ELAN name, is exactly what came in.
  const size_t used = 76 + f.elan_name.size();
  check(std::equal(once.begin(), once.begin() + std::ptrdiff_t(used), bytes.begin()),
        "a LANE control frame that does not encode back to its bytes");
}

// Control frames and data frames from the LE client and server (the BUS forwards whatever it
// is given, as a real BUS does).
void check_sent(FuzzPort& port, const LinkConfig& config) {
  for (const SentPdu& p : port.sent) {
    if (p.from == kBus) continue;
    if (is_control(p.sdu)) {
      check_control(p.sdu, true);
      continue;
    }
    check(p.from != kServer, "the LE server sent a data frame");
    const Decapsulated d =
        decapsulate(EncapParams{Encap::kLane, 0, kMinLecid, config.lane_max_frame}, p.sdu);
    check(d.status == EncapStatus::kOk, "the LE client sent a data frame that does not decode");
  }
  port.sent.clear();
}

void run(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  const uint8_t opt = in.u8();
  LinkConfig config;
  config.mode = LinkMode::kLane;
  config.adapter = 3;
  config.lane_max_frame = kLaneMaxFrameSizes[opt & 3];
  config.mtu = config.lane_max_frame - kLaneFrameOverheadBytes;
  config.near_mac = {0x02, 0x00, 0x5e, 0x00, 0x00, 0x01};
  config.far_mac = {0x02, 0x00, 0x5e, 0x00, 0x00, 0x02};
  config.max_pending = 4;
  validate(config);

  FuzzPort port(config);
  HostCounters near_counters;
  ElanCounters elan;
  auto near = make_lane_client(config, kNearHost, near_counters);
  auto les = make_les_station(config, elan);
  auto bus = make_bus_station(elan);
  uint64_t now = 1'000'000'000;
  for (Station* s : {near.get(), les.get(), bus.get()})
    s->start(now, port);
  check_sent(port, config);

  while (!in.empty()) {
    const uint8_t kind = in.u8();
    now += uint64_t(kind >> 3) * 100'000'000;
    const auto rec = in.record();
    if (is_control(rec)) check_control(rec, false);
    switch (kind & 7) {
      case 0:
      case 1:
        les->on_pdu(kind & 1, rec, now, port);
        break;
      case 2:
      case 3:
        bus->on_pdu(kind & 1, rec, now, port);
        break;
      case 4:
        near->on_pdu(kServer, rec, now, port);
        break;
      case 5:
        near->on_pdu(kBus, rec, now, port);
        break;
      case 6:
        near->on_pdu(kFarHost, rec, now, port);
        break;
      case 7:
        if (rec.size() == 1) {
          port.room = rec[0] % 2 == 0;
        } else {
          near->from_host(rec, now, port);
        }
        break;
    }
    for (Station* s : {near.get(), les.get(), bus.get()})
      s->on_timer(now, port);
    check_sent(port, config);
  }
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mtperf::fuzz::run(data, size);
  return 0;
}
