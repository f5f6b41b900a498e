// The rdma engine's arithmetic: credits, selective signalling, landing slots, depths.
#include <catch2/catch.hpp>

#include <array>
#include <vector>

#include "verbs/flow_math.hpp"

using namespace mtperf::rdma;

TEST_CASE("credits: granted minus what is in use, never negative") {
  CHECK(credits_left(31, 0, 0) == 31);
  CHECK(credits_left(31, 31, 0) == 0);
  CHECK(credits_left(31, 40, 9) == 0);
  CHECK(credits_left(31, 40, 20) == 11);
  CHECK(credits_left(31, 50, 9) == 0);  // more in use than granted (cannot happen): none
  CHECK(credits_left(0, 0, 0) == 0);
}

TEST_CASE("credits: the counts wrap around 2^32") {
  uint32_t sent = 5;               // wrapped past 2^32
  uint32_t reposted = 0xfffffff0;  // 21 behind
  CHECK(credits_left(31, sent, reposted) == 10);
  CHECK(later_count(5, 0xfffffff0) == 5);
  CHECK(later_count(0xfffffff0, 5) == 5);
  CHECK(later_count(7, 7) == 7);
  CHECK(later_count(100, 90) == 100);
}

TEST_CASE("credits: the receiver tells in batches, and always before the sender starves") {
  CHECK(credit_batch(31) == 7);
  CHECK(credit_batch(3) == 1);
  CHECK(credit_batch(1) == 1);
  CHECK_FALSE(credit_update_due(6, 0, 31));
  CHECK(credit_update_due(7, 0, 31));
  CHECK(credit_update_due(3, 0xfffffffc, 31));  // 7 across the wrap
  // A sender that used every credit: the receiver has re-posted them all, and owes a word.
  for (uint32_t granted : {1u, 2u, 3u, 7u, 31u, 255u}) {
    uint32_t sent = granted, announced = 0;
    REQUIRE(credits_left(granted, sent, announced) == 0);
    CHECK(credit_update_due(sent, announced, granted));
  }
}

TEST_CASE("signalling: request/response, the last wanted of a batch, every Nth, a full queue") {
  // a wanted send that ends its batch is signalled; one in the middle is not
  CHECK(signal_wr(true, true, 0, 16, 64));
  CHECK_FALSE(signal_wr(true, false, 0, 16, 64));
  CHECK(signal_wr(true, false, 15, 16, 64));
  // an unwanted one (an unsignaled rr send, a credit write) only when it fills the queue
  CHECK_FALSE(signal_wr(false, false, 15, 16, 64));
  CHECK_FALSE(signal_wr(false, false, 62, 16, 1));
  CHECK(signal_wr(false, false, 0, 16, 0));
  // every = 1: each wanted send
  CHECK(signal_wr(true, false, 0, 1, 64));
}

TEST_CASE("signalling: a long request/response batch is signalled once per N and at its end") {
  uint32_t run = 0, signalled = 0;
  const uint32_t n = 40, every = 16;
  std::array<bool, n> sig{};
  for (uint32_t i = 0; i < n; ++i) {
    sig[i] = signal_wr(true, i == n - 1, run, every, 256);
    run = sig[i] ? 0 : run + 1;
    signalled += sig[i];
  }
  CHECK(signalled == 3);
  CHECK(sig[15]);
  CHECK(sig[31]);
  CHECK(sig[39]);
}

TEST_CASE("signalling: a stream signals every Nth, not the end of each batch") {
  // wanted and last of its batch, yet unsignaled: the stream posts more behind it
  CHECK_FALSE(signal_wr(true, true, 0, 100, 50, true));
  CHECK(signal_wr(true, false, 99, 100, 50, true));
  // a credit write counts in the run as a send does
  CHECK(signal_wr(false, false, 99, 100, 50, true));
  // the one that fills the send queue, whatever the run
  CHECK(signal_wr(true, false, 3, 100, 0, true));
}

TEST_CASE("signalling: a stream's interval is -O signal within 1..window - 1") {
  CHECK(signal_interval(100, 128) == 100);  // perftest's defaults: tx depth 128, cq-mod 100
  CHECK(signal_interval(100, 64) == 63);    // never a window without a signalled request
  CHECK(signal_interval(16, 128) == 16);
  CHECK(signal_interval(1, 128) == 1);
  CHECK(signal_interval(100, 2) == 1);
  CHECK(signal_interval(100, 1) == 1);
  CHECK(signal_interval(100, 0) == 1);
}

namespace {

// A stream over one queue pair as the engine drives it: the workload keeps `window` sends out
// (refilling in one batch whenever completions come back); the send queue holds `cap` entries;
// the device completes a signalled request, and with it every earlier one, a step after it is
// posted. At `stop` the workload posts no more and the engine, idle, flushes a stopped stream's
// tail. Returns the sends signalled, or UINT32_MAX when the stream stalled.
struct StreamRun {
  uint32_t sends = 0, signalled = 0, flushes = 0, max_run = 0;
  bool stalled = false, full_unsignaled = false;
};

StreamRun run_stream(uint32_t window, uint32_t cap, uint32_t asked_signal, uint32_t stop) {
  StreamRun r;
  uint32_t every = signal_interval(asked_signal, stream_window(window, cap));
  std::vector<bool> sig;  // per sequence number
  uint32_t head = 0, tail = 0, run = 0, want_end = 0, sig_end = 0, out = 0;
  for (int step = 0; step < 100000; ++step) {
    // The workload refills its window (the engine posts within the send queue's room).
    uint32_t posted = 0;
    while (r.sends < stop && out < window && tail - head < cap) {
      bool s = signal_wr(true, false, run, every, cap - (tail - head + 1), true);
      sig.push_back(s);
      run = s ? 0 : run + 1;
      r.max_run = std::max(r.max_run, run);
      if (s) sig_end = tail + 1;
      want_end = tail + 1;
      ++tail;
      ++out;
      ++r.sends;
      ++posted;
      r.signalled += s;
    }
    if (tail - head == cap && !sig[tail - 1]) r.full_unsignaled = true;
    // The device: the oldest signalled request in flight completes, retiring all before it.
    uint32_t done = head;
    while (done != tail && !sig[done])
      ++done;
    if (done != tail) {
      out -= done + 1 - head;
      head = done + 1;
      continue;
    }
    if (head == tail && r.sends == stop) return r;  // everything completed
    // Idle: nothing in flight is signalled.
    if (posted == 0 && tail_needs_flush(head, want_end, sig_end)) {
      sig.push_back(true);  // the flush: a signalled credit write
      sig_end = ++tail;
      ++r.flushes;
      continue;
    }
    if (posted == 0) {
      r.stalled = true;
      return r;
    }
  }
  r.stalled = true;
  return r;
}

}  // namespace

TEST_CASE("signalling: a 128-deep stream signals one send in 100, as perftest") {
  StreamRun r = run_stream(128, 136, 100, 100028);
  CHECK_FALSE(r.stalled);
  CHECK_FALSE(r.full_unsignaled);
  CHECK(r.sends == 100028);
  CHECK(r.signalled == 1000);
  CHECK(r.max_run == 99);
  CHECK(r.flushes == 1);  // the stream's end: its last 28 sends
}

TEST_CASE("signalling: a send queue smaller than the window never fills unsignaled") {
  // A device that grants 40 entries to a stream that wants 128 in flight, signal 100.
  StreamRun r = run_stream(128, 40, 100, 10000);
  CHECK_FALSE(r.stalled);
  CHECK_FALSE(r.full_unsignaled);
  CHECK(r.max_run < 40);
  // and with the queue exactly the window: the request that fills it is signalled
  StreamRun f = run_stream(64, 64, 1024, 5000);
  CHECK_FALSE(f.stalled);
  CHECK_FALSE(f.full_unsignaled);
}

TEST_CASE("signalling: a stream that ends between two signalled sends is completed") {
  for (uint32_t stop : {1u, 99u, 100u, 101u, 150u, 1000u, 1001u}) {
    StreamRun r = run_stream(128, 136, 100, stop);
    INFO("stop " << stop);
    CHECK_FALSE(r.stalled);
    CHECK(r.flushes == (stop % 100 == 0 ? 0u : 1u));
  }
}

TEST_CASE("signalling: a stopped stream's tail, and only it, needs a flush") {
  CHECK_FALSE(tail_needs_flush(0, 0, 0));              // nothing sent
  CHECK(tail_needs_flush(100, 128, 100));              // 28 sends after the last signalled one
  CHECK_FALSE(tail_needs_flush(0, 128, 100));          // the signalled one is still in flight
  CHECK_FALSE(tail_needs_flush(128, 128, 100));        // all completed
  CHECK_FALSE(tail_needs_flush(100, 128, 129));        // a credit write behind them is signalled
  CHECK(tail_needs_flush(0xfffffff0, 5, 0xfffffff0));  // across the wrap
}

TEST_CASE("depths: the window a stream gets from the send queue the device grants") {
  // A ConnectX (max_qp_wr 32768) grants what is asked, rounded up: the whole -O tx_depth.
  uint32_t ask = send_queue_ask(128 + 3 + kSqSpare, 32768);
  CHECK(ask == 139);
  CHECK(stream_window(128, send_queue_cap(ask, 256)) == 128);
  // A device with a small max_qp_wr: the queue it has, less the spare entries.
  CHECK(send_queue_ask(139, 64) == 64);
  CHECK(stream_window(128, send_queue_cap(64, 64)) == 56);
  // One that grants fewer than asked (cap.max_send_wr after ibv_create_qp): what it granted.
  CHECK(send_queue_cap(139, 100) == 100);
  CHECK(stream_window(128, 100) == 92);
  CHECK(stream_window(16, 139) == 16);
  CHECK(stream_window(128, 4) == 1);
  CHECK(send_queue_ask(139, 0) == 1);
}

TEST_CASE("landing slots: a stamp per lap, never zero, different from the last lap's") {
  CHECK(slot_of(0, 4) == 0);
  CHECK(slot_of(5, 4) == 1);
  CHECK(slot_stamp(0, 4) == 1);
  CHECK(slot_stamp(3, 4) == 1);
  CHECK(slot_stamp(4, 4) == 2);
  for (uint64_t seq = 0; seq < 4 * 600; ++seq) {
    uint8_t s = slot_stamp(seq, 4);
    REQUIRE(s != 0);
    if (seq >= 4) REQUIRE(s != slot_stamp(seq - 4, 4));
  }
  CHECK(slot_stamp(1, 1) == 2);
  CHECK(slot_stamp(255, 1) == 1);  // wraps past 255, skipping 0
}

TEST_CASE("landing slots: trailer and slot size") {
  std::array<uint8_t, kTrailerBytes> t{};
  encode_trailer(t.data(), 0x00012345, 7);
  CHECK(t[0] == 0);
  CHECK(t[1] == 1);
  CHECK(t[3] == 0x45);
  CHECK(t[7] == 7);
  CHECK(trailer_length(t.data()) == 0x12345);
  CHECK(slot_bytes(64) == 128);
  CHECK(slot_bytes(56) == 64);
  CHECK(slot_bytes(65536) == 65536 + 64);
}

TEST_CASE("depths: twice the queue depth, crr small, the end-of-stream receive kept back") {
  CHECK(recv_depth(11, false, 0) == 32);
  CHECK(recv_depth(3, false, 0) == 8);
  CHECK(recv_depth(1, false, 0) == 4);
  CHECK(recv_depth(131, false, 0) == 256);   // tx_depth 128: 255 credits for 128 in flight
  CHECK(recv_depth(515, false, 0) == 1024);  // a deeper stream: half as much again, at least
  CHECK(recv_depth(1000, false, 0) == 2048);
  for (uint32_t q : {11u, 35u, 131u, 259u, 515u, 4099u}) {
    uint32_t granted = granted_credits(recv_depth(q, false, 0));
    INFO("queue depth " << q);
    CHECK(granted >= q + credit_batch(granted));  // the window, and what is on its way back
  }
  CHECK(recv_depth(11, true, 0) == 4);
  CHECK(recv_depth(11, false, 9) == 9);
  CHECK(granted_credits(32) == 31);
  CHECK(granted_credits(1) == 0);
  CHECK(srq_share(32) == 16);
  CHECK(srq_share(2) == 2);
}
