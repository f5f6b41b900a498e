#pragma once
// The arithmetic of the rdma engine, apart from any device so that it is unit-tested on hosts
// without RDMA: receive credits, selective signalling, the landing slots a request/response
// over RDMA WRITE is polled in, and how deep each queue is.
#include <algorithm>
#include <bit>
#include <cstdint>

namespace mtperf::rdma {

// ---- credits -------------------------------------------------------------------------------
// A SEND (or a WRITE with immediate) consumes one receive the peer posted; one that finds none
// is NAKed (RNR) and retried, which costs a round trip at best. So a sender never has more of
// them in flight than the peer has receives posted for it: the peer grants `granted` at
// connection time and tells how many it has posted again since, as a cumulative count (in the
// immediate of its own SENDs, or written into our credit word). Counts wrap modulo 2^32.

// Messages the peer can still take: granted - (sent - reposted), never negative.
constexpr uint32_t credits_left(uint32_t granted, uint32_t sent, uint32_t reposted) {
  uint32_t in_use = sent - reposted;
  return in_use >= granted ? 0 : granted - in_use;
}

// The later of two cumulative counts (modulo 2^32, within 2^31 of each other): the peer's
// count arrives by two paths and either may be older.
constexpr uint32_t later_count(uint32_t a, uint32_t b) {
  return int32_t(a - b) > 0 ? a : b;
}

// Receiver: re-posted receives are told to the sender by a write of their count once this many
// have gathered since the last word it was sent (a SEND going that way carries it for free).
// Below `granted`, so the sender always learns of its last credits.
constexpr uint32_t credit_batch(uint32_t granted) {
  return std::max<uint32_t>(1, granted / 4);
}
constexpr bool credit_update_due(uint32_t reposted, uint32_t announced, uint32_t granted) {
  return reposted - announced >= credit_batch(granted);
}

// ---- selective signalling ------------------------------------------------------------------
// Send-queue work requests complete in order, so one signalled completion says every earlier
// one is done too; an unsignaled one holds its send-queue entry until a later signalled one
// completes. A work request is signalled when
//  - it fills the send queue (`room_after` = 0): a full queue always ends in a signalled request,
//    so it can never hold only unsignaled ones, which would never be freed;
//  - request/response: the workload wants its completion and it is the last such of this batch
//    on its queue pair (whoever waits for completions gets one), or the run of unsignaled
//    requests before it has reached `every` - 1;
//  - streams (`stream`): the run of unsignaled requests before it has reached `every` - 1,
//    wanted or not, as perftest's CQ moderation; the end of a batch is not signalled, since
//    the stream posts more behind it (tail_needs_flush covers a stream that stops).
constexpr bool signal_wr(bool wanted, bool last_wanted, uint32_t unsignaled_run, uint32_t every,
                         uint32_t room_after, bool stream = false) {
  if (room_after == 0) return true;
  if (stream) return unsignaled_run + 1 >= every;
  return wanted && (last_wanted || unsignaled_run + 1 >= every);
}

// The signalling interval a stream uses: `-O signal`, within 1..window - 1, so that among any
// `window` requests in flight one is signalled and the stream, once it has its window out,
// always has a completion coming.
constexpr uint32_t signal_interval(uint32_t asked, uint32_t window) {
  return std::clamp<uint32_t>(asked, 1, std::max<uint32_t>(window, 2) - 1);
}

// A stream's sends that the workload waits for (the last of them ends at sequence `want_end`)
// with no signalled request in flight (the last signalled one ended at `sig_end`, and
// everything up to `head` has completed): nothing would ever complete them, since a stream
// that stops posting (its test over, paced, out of buffers) leaves its last ones unsignaled.
// The engine then posts one signalled request behind them (a credit word's write). Sequence
// numbers modulo 2^32.
constexpr bool tail_needs_flush(uint32_t head, uint32_t want_end, uint32_t sig_end) {
  return int32_t(want_end - head) > 0 && int32_t(sig_end - head) <= 0;
}

// ---- landing slots (request/response over RDMA WRITE) -----------------------------------------
// Message n of a connection lands in slot n % slots of the peer's landing area, right-aligned
// against an 8-byte trailer {length (big-endian u32), 3 reserved bytes, stamp} at the slot's end.
// The receiver polls the stamp of the slot it expects next: the stamp changes on every lap and
// is never 0 (fresh memory), so a stamp equal to the lap's says the message is there. Like
// ib_write_lat, this relies on the device placing a write's bytes in order, the last one last.
inline constexpr uint32_t kTrailerBytes = 8;

constexpr uint32_t slot_of(uint64_t seq, uint32_t slots) {
  return uint32_t(seq % slots);
}
constexpr uint8_t slot_stamp(uint64_t seq, uint32_t slots) {
  return uint8_t(1 + (seq / slots) % 255);
}
inline void encode_trailer(uint8_t* t, uint32_t len, uint8_t stamp) {
  t[0] = uint8_t(len >> 24);
  t[1] = uint8_t(len >> 16);
  t[2] = uint8_t(len >> 8);
  t[3] = uint8_t(len);
  t[4] = t[5] = t[6] = 0;
  t[7] = stamp;
}
constexpr uint32_t trailer_length(const uint8_t* t) {
  return uint32_t(t[0]) << 24 | uint32_t(t[1]) << 16 | uint32_t(t[2]) << 8 | t[3];
}

// Bytes per landing slot for buffers of buffer_size bytes: the trailer beside, cache-line aligned.
constexpr uint32_t slot_bytes(uint32_t buffer_size) {
  return (buffer_size + kTrailerBytes + 63) / 64 * 64;
}

// ---- depths ----------------------------------------------------------------------------------
// Receives (and landing slots) per connection: twice the workload's queue depth, so a sender
// that keeps queue_depth messages in flight is never held up by credits that are on their way
// back (at most 256; a deeper stream gets its queue depth and half as much again, the credits
// on their way back being at most a quarter of those granted: credit_batch); crr connections
// carry one transaction each.
constexpr uint32_t recv_depth(uint32_t queue_depth, bool per_transaction, uint32_t asked) {
  if (asked != 0) return asked;
  if (per_transaction) return 4;
  uint32_t q = std::max<uint32_t>(queue_depth, 2);
  uint32_t deep = std::bit_ceil(q + q / 2);
  return std::clamp<uint32_t>(std::bit_ceil(q * 2), 4, std::max<uint32_t>(256, deep));
}

// Send-queue entries a stream's window leaves for the rest: its end-of-stream SEND, a credit
// word's write, the signalled request that completes a stopped stream's last sends.
inline constexpr uint32_t kSqSpare = 8;

// The send-queue entries asked of a device: what the layout wants, within its max_qp_wr.
constexpr uint32_t send_queue_ask(uint32_t wanted, int max_qp_wr) {
  return std::min<uint32_t>(wanted, uint32_t(std::max(max_qp_wr, 1)));
}
// The entries the engine uses: what it asked, or fewer when the device granted fewer
// (ibv_create_qp's cap.max_send_wr; providers round up, never down, but one may).
constexpr uint32_t send_queue_cap(uint32_t asked, uint32_t granted) {
  return std::max<uint32_t>(1, std::min(asked, granted));
}
// Sends a stream keeps in flight: -O tx_depth, within the send queue less its spare entries.
constexpr uint32_t stream_window(uint32_t tx_depth, uint32_t sq_cap) {
  return std::max<uint32_t>(1, std::min(tx_depth, sq_cap > kSqSpare ? sq_cap - kSqSpare : 1));
}

// Receives granted to the peer: all but one, kept for its end-of-stream SEND.
constexpr uint32_t granted_credits(uint32_t depth) {
  return depth > 1 ? depth - 1 : 0;
}
// With a shared receive queue each connection is granted half its own depth (at least 2):
// the queue is sized for all of them, but holds half the buffers separate queues would.
constexpr uint32_t srq_share(uint32_t depth) {
  return std::max<uint32_t>(2, depth / 2);
}

}  // namespace mtperf::rdma
