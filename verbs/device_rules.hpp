#pragma once
// What the rdma transport decides from what a device offers and what it grants, apart from any
// verbs call so that it is unit-tested on hosts without RDMA (resources.cpp, cm.cpp and setup.cpp
// feed it the device's attributes and the peer's connection parameters):
//   - the RDMA READ depths of a connection, and how the accepting side answers a request;
//   - the inline size asked of a device, and the one used from what it granted;
//   - the completion vector of a worker's completion queue;
//   - whether a device can hold a worker's queues, or the limit that refuses it;
//   - which remote access each registered region needs, per verb;
//   - the receiver-not-ready (RNR) and retry policy.
// No verbs header: plain integers in, plain integers out.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "verbs/layout.hpp"
#include "verbs/settings.hpp"

namespace mtperf::rdma {

// ---- RDMA READ depths ------------------------------------------------------------------------
// responder_resources: READs (and atomics) the peer may have in flight towards us, which our
// device answers; initiator_depth: READs we may have in flight towards the peer. The side that
// connects offers its device's own (at most kReadDepth); the side that accepts answers with no
// more than the request offers in return, since rdma_cm moves the connecting side's queue pair
// to RTR and RTS from the reply as given: a server allowing more READs than the client's device
// can answer would fail the connection (or the client's READs) on unequal devices.
inline constexpr uint32_t kReadDepth = 16;

struct ReadDepths {
  uint8_t responder_resources = 0;
  uint8_t initiator_depth = 0;
  friend constexpr bool operator==(const ReadDepths&, const ReadDepths&) = default;
};

// From the device's max_qp_rd_atom and max_qp_init_rd_atom: 1..kReadDepth each.
constexpr ReadDepths local_read_depths(int max_qp_rd_atom, int max_qp_init_rd_atom) {
  return {uint8_t(std::clamp(max_qp_rd_atom, 1, int(kReadDepth))),
          uint8_t(std::clamp(max_qp_init_rd_atom, 1, int(kReadDepth)))};
}

// How the accepting side sees a request in its CONNECT_REQUEST event: rdma_cm gives the
// parameters from the receiver's point of view (ib_cm swaps the REQ's two fields, iw_cm the
// peer's IRD and ORD), so the event's responder_resources is the requester's initiator_depth
// (the READs we will have to answer) and its initiator_depth the requester's
// responder_resources (the READs we may issue). librdmacm's own defaults read them so.
constexpr ReadDepths request_as_seen(ReadDepths requester) {
  return {requester.initiator_depth, requester.responder_resources};
}

// The accepting side's answer, from its own depths and the event's (request_as_seen): never
// more READs in flight towards the requester than it answers, never more answered than it
// issues. Answering with its own alone fails the connection (or the requester's move to RTS)
// when the requester's device allows fewer.
constexpr ReadDepths accept_read_depths(ReadDepths local, ReadDepths event) {
  return {std::min(local.responder_resources, event.responder_resources),
          std::min(local.initiator_depth, event.initiator_depth)};
}

// ---- inline sends ----------------------------------------------------------------------------
// A send up to the inline size is copied into the work request by the CPU instead of being read
// by the device: cheaper for small messages, dearer for large ones. The default asks for what
// keeps a work request within four 64-byte blocks (a SEND's header is smaller than a WRITE's,
// which also carries the remote address), as perftest's defaults do; `-O inline=device` asks for
// up to kInlineDeviceAsk and takes what the device gives.
inline constexpr uint32_t kInlineSendDefault = 236;
inline constexpr uint32_t kInlineWriteDefault = 220;
inline constexpr uint32_t kInlineDeviceAsk = 1024;

// The inline size asked of the device for `-O inline` = cap (kInlineAuto, kInlineDevice or a
// number of bytes) under verb v.
constexpr uint32_t inline_wanted(uint32_t cap, Verb v) {
  if (cap == kInlineAuto) return v == Verb::send ? kInlineSendDefault : kInlineWriteDefault;
  if (cap == kInlineDevice) return kInlineDeviceAsk;
  return cap;
}

// What a queue pair may carry inline: what the device reported in cap.max_inline_data after
// creating it (some lower what was asked without a word and then refuse larger inline posts;
// some grant more), and never more than was wanted.
constexpr uint32_t granted_inline(uint32_t wanted, uint32_t reported) {
  return std::min(wanted, reported);
}

// Finds the inline size a device takes, at set-up (never on a timed path): try(n, &granted)
// creates a queue pair asking for n bytes inline and says whether the device took it (and what
// it reported); a device that refuses `wanted` is searched for the largest size it takes.
// Returns the usable size (granted_inline), or -1 when the device refuses even 0 bytes.
template <class TryCreate>
int64_t settle_inline(uint32_t wanted, TryCreate&& try_create) {
  uint32_t reported = 0;
  if (try_create(wanted, reported)) return granted_inline(wanted, reported);
  if (wanted == 0) return -1;
  uint32_t lo = 0, hi = wanted - 1;
  bool lo_ok = false;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    uint32_t got = 0;
    if (try_create(mid, got)) {
      lo = mid;
      lo_ok = true;
      reported = got;
    } else {
      hi = mid - 1;
    }
  }
  if (!lo_ok && !try_create(lo, reported)) return -1;
  return granted_inline(wanted, reported);
}

// ---- completion vectors ----------------------------------------------------------------------
// Each worker's completion queue raises its events on its own vector where the device has
// several (worker mod num_comp_vectors), so that under --wait block the workers' interrupts are
// spread over the vectors' CPUs instead of all landing on vector 0's.
constexpr int comp_vector(uint32_t worker, int num_comp_vectors) {
  return num_comp_vectors > 1 ? int(worker % uint32_t(num_comp_vectors)) : 0;
}

// ---- device limits ---------------------------------------------------------------------------
// The device attributes a worker's queues are sized against (ibv_device_attr's).
struct DeviceLimits {
  int max_qp_wr = 0;   // entries of a send or receive queue
  int max_cqe = 0;     // entries of a completion queue
  int max_srq_wr = 0;  // entries of a shared receive queue
  int max_sge = 0;     // scatter/gather entries of a work request
};

// The receives and completions a layout needs of one device, checked against its limits: ""
// when it can hold them, else why not, naming the device's limit and what lowers the need.
// Clamping instead would leave the engine posting beyond the queue (ENOMEM on a post) or a
// completion queue that overruns. A send queue is the exception: the engine posts within the
// one the device granted (flow_math.hpp's send_queue_ask), so a device with a smaller
// max_qp_wr than wanted gives a stream a smaller window, and only one without room for a send
// is refused.
std::string size_refusal(const Layout& l, const DeviceLimits& lim, std::string_view device);

// ---- memory access ---------------------------------------------------------------------------
// The remote access a registered region needs. The buffer pool is the source of sends and
// never advertised: local access only; so is the receive area as a whole (the lkey of receives,
// READs' targets, credit words and trailers). Each connection's part of the area is registered
// once more for its peer (remote_span): written into under write and write_imm (landing slots)
// and under send and write_imm (credit words); read from under read, and then nothing writes
// into it remotely.
// Relaxed ordering is never asked for the area: request/response over WRITE polls a slot's last
// byte, which is sound only while one WRITE's bytes are placed in order.
struct RemoteAccess {
  bool write = false;
  bool read = false;
  friend constexpr bool operator==(const RemoteAccess&, const RemoteAccess&) = default;
};
constexpr RemoteAccess pool_access() {
  return {};
}
constexpr RemoteAccess area_access(Verb v) {
  return v == Verb::read ? RemoteAccess{false, true} : RemoteAccess{true, false};
}

// The part of the area one connection's peer may reach, registered for that connection alone
// (its own memory region, whose rkey goes in its private data), so that one peer's rkey reaches
// no other connection's slots or credit words: byte offset and length within the area, and the
// access (area_access). Under send, its control words (the credit word it writes); under write
// and write_imm, its control words and landing slots (written into); under read, its landing
// slots alone (read from).
struct RemoteSpan {
  uint64_t offset = 0;  // bytes from the area's start
  uint64_t bytes = 0;
  RemoteAccess access;
  friend constexpr bool operator==(const RemoteSpan&, const RemoteSpan&) = default;
};
constexpr RemoteSpan remote_span(const Layout& l, uint32_t conn) {
  uint64_t block = uint64_t(l.ctrl_index(conn)) * l.slot_size;
  uint64_t ctrl = uint64_t(l.ctrl_slots) * l.slot_size;
  uint64_t own = uint64_t(l.slots_per_conn) * l.slot_size;
  switch (l.verb) {
    case Verb::send:
      return {block, ctrl, area_access(l.verb)};
    case Verb::write:
    case Verb::write_imm:
      return {block, ctrl + own, area_access(l.verb)};
    case Verb::read:
      return {block + ctrl, own, area_access(l.verb)};
  }
  return {};
}

// ---- device kinds ----------------------------------------------------------------------------
// The transport needs RC queue pairs connected by rdma_cm and immediate data (a SEND's carries
// the receiver's credits; the end of stream is a SEND with immediate, whatever the verb):
// InfiniBand and RoCE devices have both. iWARP (irdma in iWARP mode, cxgb4, siw) has RC and
// rdma_cm but no immediate data; EFA, usNIC and other kinds have no RC or no rdma_cm.
enum class DeviceKind : uint8_t { ib_roce, iwarp, other };
// "" when a device of this kind can carry verb v, else why not (naming the device).
std::string device_refusal(DeviceKind k, Verb v, std::string_view device);

// ---- receiver not ready, retries --------------------------------------------------------------
// With credits a SEND never meets a missing receive; if one does (a credit bug, a peer that
// stopped re-posting), the requester retries kRnrRetry times, waiting the peer's min_rnr_timer
// between, and then fails with IBV_WC_RNR_RETRY_EXC_ERR, which names RNR: never 7, which
// retries without end and turns the bug into a silent stall. rdma_cm leaves min_rnr_timer at 0
// (655 ms); each side sets kMinRnrTimer (0.64 ms) once ESTABLISHED.
inline constexpr uint8_t kRnrRetry = 6;
inline constexpr uint8_t kMinRnrTimer = 12;
inline constexpr uint8_t kTransportRetry = 7;  // retransmissions before a retry error

// The IB encoding of min_rnr_timer (0..31) in microseconds (IBA table 45).
constexpr uint32_t rnr_timer_us(uint8_t code) {
  constexpr uint32_t kUs[32] = {655360, 10,    20,    30,     40,     60,     80,     120,
                                160,    240,   320,   480,    640,    960,    1280,   1920,
                                2560,   3840,  5120,  7680,   10240,  15360,  20480,  30720,
                                40960,  61440, 81920, 122880, 163840, 245760, 327680, 491520};
  return kUs[code & 31];
}

}  // namespace mtperf::rdma
