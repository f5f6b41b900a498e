#pragma once
// Faults a buggy driver makes after the AAL5 CRC has passed, which no check on the line can
// catch: a PDU's payload corrupted on its way to the host (as a DMA bug would), a PDU delivered
// twice, two PDUs delivered in the wrong order. They exist to prove that an end-to-end check
// (`mtperf run --verify`, the UDP sequence accounting) catches what the line's CRC cannot, with
// the exact count: every fault injected is counted here.
//
//   reassembled packet ──> eligible? ──no──> (a held PDU first, in order) ──> host
//                             │yes
//                             ├─ corrupt:   1..8 bytes of the L4 payload changed, checksum fixed
//                             ├─ duplicate: delivered twice
//                             └─ reorder:   held back, delivered after the next eligible PDU
//
// Eligible PDUs: unfragmented IPv4 carrying TCP or UDP (as `proto` asks) whose L4 payload is
// longer than kCorruptSkipBytes and at least `min_payload` bytes. The filter keeps a test's
// control traffic (small messages) out of reach, and the first 16 payload bytes are never
// corrupted: they hold mtperf's UDP sequence number and send time, which --verify does not check.
// CLIP packets are IP from byte 0; LANE frames carry an 802.3 header (IPv4: EtherType 0x0800).
//
// The corrupted packet's TCP or UDP checksum is fixed up (RFC 1624, incremental), so that the
// kernel accepts it as it would accept a packet whose checksum a NIC had validated before the
// DMA went wrong. (The TUN/TAP devices are opened without IFF_VNET_HDR, so there is no header to
// mark the checksum valid; a fixed checksum works the same for both.)
//
// One PDU takes at most one fault. Each fault's trigger draws on every eligible PDU, so "every
// Nth" counts eligible PDUs whatever the other faults do; when two fire on one PDU, the first of
// corrupt, duplicate, reorder is injected and the others are not (nor counted). A PDU arriving
// while one is held is never held itself. A held PDU goes out in order (counted as released,
// not reordered) when a PDU that is not eligible comes first or `hold_ns` passes.
//
// Deterministic for a seed: the same seed and the same PDUs give the same faults. Nothing on the
// per-PDU path allocates (the scratch and hold buffers are allocated in the constructor).
// Single-threaded; counters() may be read from any thread.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "atmlink/counters.hpp"
#include "atmlink/faults.hpp"

namespace mtperf::atm {

inline constexpr std::size_t kCorruptSkipBytes = 16;
inline constexpr std::size_t kMaxCorruptRun = 8;

// When a fault strikes: never, with a probability per eligible PDU, or on every Nth one.
struct FaultTrigger {
  double rate = 0;          // probability per eligible PDU, [0, 1]; used when every == 0
  std::uint64_t every = 0;  // > 0: the Nth, 2Nth, 3Nth ... eligible PDU
  bool active() const { return every > 0 || rate > 0; }
};
// "0.01" (a probability) or "every:N" (N in 1..1e9); throws std::invalid_argument.
FaultTrigger parse_fault_trigger(std::string_view text);
std::string to_string(const FaultTrigger& trigger);  // "0.01", "every:50" or "off"

enum class FaultDirection : std::uint8_t { kBoth, kNearToFar, kFarToNear };
const char* to_string(FaultDirection direction);  // "both", "near-to-far", "far-to-near"
FaultDirection parse_fault_direction(std::string_view text);  // throws std::invalid_argument

enum class FaultProto : std::uint8_t { kAny, kTcp, kUdp };
const char* to_string(FaultProto proto);              // "any", "tcp", "udp"
FaultProto parse_fault_proto(std::string_view text);  // throws std::invalid_argument

struct PduFaultConfig {
  FaultTrigger corrupt, duplicate, reorder;
  FaultDirection direction = FaultDirection::kBoth;  // which lines the faults apply to
  FaultProto proto = FaultProto::kAny;
  std::size_t min_payload = 0;         // bytes of L4 payload an eligible PDU has at least
  std::uint64_t hold_ns = 10'000'000;  // longest a reordered PDU is held, 1 us..1 s
  bool active() const { return corrupt.active() || duplicate.active() || reorder.active(); }
  // Whether the faults apply to the line whose sender is the near host (line 0) or far (1).
  bool applies_to_line(int line) const;
};

// Throws std::invalid_argument naming the field.
void validate(const PduFaultConfig& config);

struct alignas(64) PduFaultCounters {
  Counter eligible;                    // PDUs that matched the filter
  Counter corrupted, corrupted_bytes;  // PDUs corrupted after the CRC, and bytes changed in them
  Counter duplicated;                  // PDUs delivered twice
  Counter reordered;                   // PDUs delivered after the next eligible PDU
  Counter released;                    // held PDUs that went out in order after all
};

// Up to three packets to hand to the host, in order. Valid until the next call.
struct PduDeliveries {
  std::array<std::span<const std::uint8_t>, 3> packets{};
  std::size_t count = 0;
  void add(std::span<const std::uint8_t> p) { packets[count++] = p; }
};

class PduFaultInjector {
 public:
  // l3_offset: 0 for CLIP's IP packets, 14 for LANE's 802.3 frames. max_packet: the largest
  // packet apply() is given. Throws std::invalid_argument when the config is out of range.
  PduFaultInjector(const PduFaultConfig& config, std::size_t l3_offset, std::size_t max_packet,
                   std::uint64_t seed);

  // Passes one reassembled packet through the faults; returns what to deliver now.
  PduDeliveries apply(std::span<const std::uint8_t> packet, std::uint64_t now_ns);
  // The held packet when its time is up by now_ns, else an empty span. Valid until the next call.
  std::span<const std::uint8_t> expire(std::uint64_t now_ns);
  // When the held packet is due to go out, or kNever.
  std::uint64_t next_deadline() const { return holding_ ? deadline_ns_ : kNever; }
  const PduFaultCounters& counters() const { return counters_; }

  static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

 private:
  struct Trigger {
    FaultTrigger config;
    std::uint64_t left = 0;  // eligible PDUs to pass before it fires
  };
  struct L4 {
    std::size_t start = 0;    // offset of the TCP/UDP header in the packet
    std::size_t length = 0;   // TCP/UDP header and payload
    std::size_t payload = 0;  // offset of the payload from start
    bool udp = false;
  };
  bool classify(std::span<const std::uint8_t> packet, L4& l4) const;
  bool fire(Trigger& t);
  void rearm(Trigger& t);
  std::span<const std::uint8_t> corrupt(std::span<const std::uint8_t> packet, const L4& l4);

  PduFaultConfig config_;
  std::size_t l3_offset_;
  Xoshiro256 rng_;
  Trigger corrupt_, duplicate_, reorder_;
  std::vector<std::uint8_t> scratch_, hold_;
  std::size_t held_bytes_ = 0;
  bool holding_ = false;
  std::uint64_t deadline_ns_ = 0;
  PduFaultCounters counters_;
};

// RFC 1624: the one's-complement checksum `check` of a segment after its bytes [from, from + n)
// changed from old_bytes to the segment's current ones (offsets relative to the start of the
// checksummed segment, so words are aligned with it). For tests and the injector.
std::uint16_t checksum_adjust(std::uint16_t check, std::span<const std::uint8_t> segment,
                              std::size_t from, std::span<const std::uint8_t> old_bytes);

}  // namespace mtperf::atm
