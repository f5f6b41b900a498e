// The rdma engine's arithmetic: credits, selective signalling, landing slots, depths.
#include <catch2/catch.hpp>

#include <array>

#include "transports/rdma/flow_math.hpp"

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

TEST_CASE("signalling: the last wanted completion of a batch, every Nth, and the queue bound") {
  // a wanted send that ends its batch is signalled; one in the middle is not
  CHECK(signal_wr(true, true, 0, 16, 64));
  CHECK_FALSE(signal_wr(true, false, 0, 16, 64));
  CHECK(signal_wr(true, false, 15, 16, 64));
  // an unwanted one (an unsignaled rr send, a credit write) only at the bound
  CHECK_FALSE(signal_wr(false, false, 15, 16, 64));
  CHECK(signal_wr(false, false, 63, 16, 64));
  // every = 1: each wanted send
  CHECK(signal_wr(true, false, 0, 1, 64));
}

TEST_CASE("signalling: a long batch is signalled once per N and at its end") {
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
  CHECK(recv_depth(1000, false, 0) == 256);
  CHECK(recv_depth(11, true, 0) == 4);
  CHECK(recv_depth(11, false, 9) == 9);
  CHECK(granted_credits(32) == 31);
  CHECK(granted_credits(1) == 0);
  CHECK(srq_share(32) == 16);
  CHECK(srq_share(2) == 2);
}
