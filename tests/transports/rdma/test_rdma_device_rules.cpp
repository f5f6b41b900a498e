// What the rdma transport decides from a device's attributes and a peer's parameters, driven by
// fixtures of devices that behave as real NICs do (no RDMA device needed).
#include <catch2/catch.hpp>

#include <vector>

#include "verbs/device_rules.hpp"
#include "verbs/flow_math.hpp"
#include "verbs/layout.hpp"
#include "verbs/settings.hpp"

using namespace mtperf;
using namespace mtperf::rdma;

TEST_CASE("read depths: the connecting side offers its device's, at most 16") {
  CHECK(local_read_depths(16, 16) == ReadDepths{16, 16});
  CHECK(local_read_depths(128, 64) == ReadDepths{16, 16});  // an mlx5: more than we use
  CHECK(local_read_depths(4, 8) == ReadDepths{4, 8});
  CHECK(local_read_depths(0, 0) == ReadDepths{1, 1});
}

TEST_CASE("read depths: the event shows a request from the accepting side's point of view") {
  ReadDepths client = local_read_depths(4, 8);  // answers 4 READs, issues 8
  ReadDepths seen = request_as_seen(client);
  CHECK(seen.responder_resources == 8);  // the READs the server will have to answer
  CHECK(seen.initiator_depth == 4);      // the READs the server may issue
}

TEST_CASE("read depths: the accepting side answers within what the request offered") {
  // A server allowing 16 READs each way, a client whose device answers 4 and issues 8: the
  // server may issue no more than the client answers, and answers no more than it issues.
  ReadDepths server = local_read_depths(16, 16);
  ReadDepths client = local_read_depths(4, 8);
  ReadDepths answer = accept_read_depths(server, request_as_seen(client));
  CHECK(answer.responder_resources == 8);  // the client's READs towards us
  CHECK(answer.initiator_depth == 4);      // ours towards the client, within what it answers
  // The client's queue pair moves to RTS with max_rd_atomic = our responder_resources and to
  // RTR with max_dest_rd_atomic = our initiator_depth: both within its device's.
  CHECK(answer.responder_resources <= client.initiator_depth);
  CHECK(answer.initiator_depth <= client.responder_resources);
  // The other way round: a small server keeps its own limits.
  ReadDepths small = local_read_depths(2, 1);
  CHECK(accept_read_depths(small, request_as_seen(server)) == ReadDepths{2, 1});
  // A client that issues no READs asks none to be answered.
  CHECK(accept_read_depths(server, request_as_seen(ReadDepths{16, 0})).responder_resources == 0);
}

namespace {

// A device's answer to creating a queue pair asking `ask` bytes inline.
struct FakeDevice {
  uint32_t refuses_above = UINT32_MAX;  // EINVAL beyond this (rxe, and most providers)
  int32_t reports_delta = 0;            // granted = ask + delta (hns: less; mlx5: more)
  uint32_t reports_cap = UINT32_MAX;    // granted never above this
  std::vector<uint32_t> asked;

  bool operator()(uint32_t ask, uint32_t& reported) {
    asked.push_back(ask);
    if (ask > refuses_above) return false;
    int64_t g = int64_t(ask) + reports_delta;
    reported = uint32_t(std::clamp<int64_t>(g, 0, reports_cap));
    return true;
  }
};

int64_t settle(uint32_t wanted, FakeDevice& d) {
  return settle_inline(wanted, [&](uint32_t a, uint32_t& r) { return d(a, r); });
}

}  // namespace

TEST_CASE("inline: the default is a few hundred bytes, as perftest's") {
  CHECK(parse_rdma_settings({}).inline_cap == kInlineAuto);
  CHECK(inline_wanted(kInlineAuto, Verb::send) == 236);
  CHECK(inline_wanted(kInlineAuto, Verb::write) == 220);
  CHECK(inline_wanted(kInlineAuto, Verb::write_imm) == 220);
  CHECK(inline_wanted(kInlineDevice, Verb::send) == 1024);
  CHECK(inline_wanted(64, Verb::send) == 64);
  CHECK(inline_wanted(0, Verb::send) == 0);
}

TEST_CASE("inline: a device that grants less than asked (hns) is taken at its word") {
  FakeDevice hns;
  hns.reports_cap = 128;  // takes 236, reports 128, then refuses inline posts above 128
  CHECK(settle(236, hns) == 128);
  CHECK(hns.asked.size() == 1);
  // Every later queue pair: what it reports lowers the size, never raises it.
  CHECK(granted_inline(128, 96) == 96);
  CHECK(granted_inline(128, 128) == 128);
}

TEST_CASE("inline: a device that grants more than asked (mlx5) is held to -O inline") {
  FakeDevice mlx5;
  mlx5.reports_delta = 20;  // rounds up to its WQE blocks
  CHECK(settle(220, mlx5) == 220);
  CHECK(settle(64, mlx5) == 64);
  CHECK(granted_inline(64, 256) == 64);
}

TEST_CASE("inline: a device that refuses more than it takes is searched, once, at set-up") {
  FakeDevice rxe;
  rxe.refuses_above = 200;
  CHECK(settle(1024, rxe) == 200);
  CHECK(rxe.asked.size() <= 12);  // a binary search, not a walk
  FakeDevice none;
  none.refuses_above = 0;  // no inline at all
  CHECK(settle(236, none) == 0);
  FakeDevice broken;
  broken.refuses_above = 0;
  CHECK(settle(0, broken) == 0);
}

TEST_CASE("inline: a device that refuses every queue pair is reported, not taken as 0 bytes") {
  auto never = [](uint32_t, uint32_t&) { return false; };
  CHECK(settle_inline(236, never) == -1);
  CHECK(settle_inline(0, never) == -1);
}

TEST_CASE("completion vectors: workers spread over the device's vectors") {
  CHECK(comp_vector(0, 8) == 0);
  CHECK(comp_vector(1, 8) == 1);
  CHECK(comp_vector(9, 8) == 1);
  CHECK(comp_vector(3, 1) == 0);  // soft-RoCE: one vector
  CHECK(comp_vector(3, 0) == 0);
  std::vector<int> used;
  for (uint32_t w = 0; w < 4; ++w)
    used.push_back(comp_vector(w, 4));
  CHECK(used == std::vector<int>{0, 1, 2, 3});
}

namespace {

WorkerShape stream_config(uint32_t flows, uint32_t depth) {
  WorkerShape cfg;
  cfg.max_conns = flows;
  cfg.queue_depth = depth;
  cfg.buffer_size = 65536;
  return cfg;
}

DeviceLimits roomy() {
  return {32768, 4194303, 32768, 30};  // a ConnectX
}

}  // namespace

TEST_CASE("device limits: a device that holds the queues is taken") {
  Layout l = make_layout(stream_config(4, 16), RdmaSettings{});
  CHECK(size_refusal(l, roomy(), "mlx5_0").empty());
}

TEST_CASE("device limits: a 128-deep stream's queues (-O tx_depth, the default)") {
  // engine_config gives a stream of tx_depth 128 a queue depth of 131.
  Layout l = make_layout(stream_config(1, 131), RdmaSettings{});
  CHECK(l.sq_depth == 131 + kSqSpare);
  CHECK(l.depth == 256);
  CHECK(l.recv_per_qp == 256);
  CHECK(l.granted == 255);  // credits for the window and those on their way back
  CHECK(size_refusal(l, roomy(), "mlx5_0").empty());
  RdmaSettings read;
  read.verb = Verb::read;  // one read in flight per landing slot besides
  CHECK(make_layout(stream_config(1, 131), read).sq_depth == 131 + 256 + kSqSpare);
}

TEST_CASE("device limits: a send queue beyond max_qp_wr shrinks the window; none is refused") {
  RdmaSettings write;
  write.verb = Verb::write;  // two receives per queue pair: the send queue is what is deep
  Layout l = make_layout(stream_config(1, 515), write);
  DeviceLimits small = roomy();
  small.max_qp_wr = 256;
  REQUIRE(l.sq_depth > 256);
  CHECK(size_refusal(l, small, "bnxt_re0").empty());
  CHECK(stream_window(512, send_queue_ask(l.sq_depth, 256)) == 248);
  Layout shallow = make_layout(stream_config(1, 16), write);
  small.max_qp_wr = int(kSqSpare);
  std::string why = size_refusal(shallow, small, "odd0");
  CHECK_THAT(why, Catch::StartsWith("rdma: odd0 takes at most 8 work requests per queue "
                                    "(max_qp_wr); this test needs 9"));
}

TEST_CASE("device limits: a completion queue beyond max_cqe is refused, naming the limit") {
  Layout l = make_layout(stream_config(64, 16), RdmaSettings{});
  DeviceLimits small = roomy();
  small.max_cqe = 1024;
  REQUIRE(cq_entries(l) > 1024);
  std::string why = size_refusal(l, small, "hns_0");
  CHECK_THAT(why, Catch::Contains("at most 1024 completion-queue entries (max_cqe)"));
  CHECK_THAT(why, Catch::Contains("--threads"));
}

TEST_CASE("device limits: a shared receive queue the device cannot hold is refused") {
  RdmaSettings s;
  s.srq = SrqMode::on;
  Layout l = make_layout(stream_config(8, 16), s);
  REQUIRE(l.srq);
  DeviceLimits lim = roomy();
  lim.max_srq_wr = 16;
  CHECK_THAT(size_refusal(l, lim, "rxe0"),
             Catch::Contains("(max_srq_wr)") && Catch::Contains("-O srq=off"));
  lim.max_srq_wr = 0;
  CHECK_THAT(size_refusal(l, lim, "siw0"), Catch::Contains("has no shared receive queue"));
}

TEST_CASE("memory access: the pool is local, the area remote per verb") {
  CHECK(pool_access() == RemoteAccess{false, false});
  CHECK(area_access(Verb::read) == RemoteAccess{false, true});
  CHECK(area_access(Verb::write) == RemoteAccess{true, false});
  CHECK(area_access(Verb::write_imm) == RemoteAccess{true, false});
  CHECK(area_access(Verb::send) == RemoteAccess{true, false});  // the credit words
}

TEST_CASE("memory access: each connection's peer reaches its own part of the area alone") {
  for (Verb v : {Verb::send, Verb::write, Verb::write_imm, Verb::read}) {
    for (SrqMode srq : {SrqMode::off, SrqMode::on}) {
      RdmaSettings s;
      s.verb = v;
      s.srq = srq;
      for (uint32_t size : {64u, 1024u, 65536u}) {
        WorkerShape cfg = stream_config(4, 131);
        cfg.buffer_size = size;
        Layout l = make_layout(cfg, s);
        INFO("verb " << to_string(v) << ", srq " << to_string(srq) << ", " << size << " B");
        RemoteSpan a = remote_span(l, 0), b = remote_span(l, 1);
        // Minimal access: write where the peer writes, read where it reads, never both.
        CHECK(a.access == area_access(v));
        CHECK_FALSE((a.access.read && a.access.write));
        // Connection A's region and connection B's do not meet (so their rkeys differ, and
        // neither reaches the other's slots or credit word), and both lie in the area.
        REQUIRE(a.bytes > 0);
        REQUIRE(b.bytes > 0);
        CHECK((a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset));
        CHECK(b.offset + b.bytes <= l.area_bytes());
        for (uint32_t c = 0; c < l.conns; ++c) {
          RemoteSpan r = remote_span(l, c);
          uint64_t credit = uint64_t(l.ctrl_index(c)) * l.slot_size;
          bool credit_in = credit >= r.offset && credit + 4 <= r.offset + r.bytes;
          // the credit word: written by the peer under send, write_imm (and the flush of a
          // stopped stream under write); never reachable under read
          CHECK(credit_in == (v != Verb::read));
          if (l.slots_per_conn > 0 && v != Verb::send) {
            uint64_t first = uint64_t(l.slot_index(c, 0)) * l.slot_size;
            uint64_t end = uint64_t(l.slot_index(c, l.slots_per_conn - 1) + 1) * l.slot_size;
            CHECK(first >= r.offset);
            CHECK(end <= r.offset + r.bytes);
          }
          if (v == Verb::send) {
            // receive buffers are not the peer's to write: only the control words
            CHECK(r.bytes == uint64_t(l.ctrl_slots) * l.slot_size);
          }
          for (uint32_t i = 0; i < l.slots_per_conn; i += 37) {
            CHECK(l.conn_of_slot(l.slot_index(c, i)) == c);
            CHECK(l.slot_in_conn(l.slot_index(c, i)) == i);
          }
        }
        CHECK(uint64_t(l.ctrl_slots) * l.slot_size >= l.ctrl_stride);
        CHECK(l.slots <= 65536);
      }
    }
  }
}

TEST_CASE("RNR: finite retries a little apart, so a missing receive ends in an error") {
  CHECK(kRnrRetry < 7);  // 7 retries without end
  CHECK(kRnrRetry >= 1);
  CHECK(kMinRnrTimer == 12);
  CHECK(rnr_timer_us(kMinRnrTimer) == 640);
  CHECK(rnr_timer_us(0) == 655360);  // rdma_cm's default: 655 ms per retry
  uint32_t worst_us = (kRnrRetry + 1u) * rnr_timer_us(kMinRnrTimer);
  CHECK(worst_us < 10'000);
  CHECK(kTransportRetry <= 7);
}

TEST_CASE("fabric options: tos and ack_timeout, bounded, none by default") {
  RdmaSettings d = parse_rdma_settings({});
  CHECK(d.tos == kUnset);
  CHECK(d.ack_timeout == kUnset);
  CHECK(parse_rdma_settings({{"tos", "106"}}).tos == 106);
  CHECK(parse_rdma_settings({{"tos", "none"}}).tos == kUnset);
  CHECK(parse_rdma_settings({{"ack_timeout", "14"}}).ack_timeout == 14);
  CHECK_THROWS_WITH(parse_rdma_settings({{"tos", "256"}}),
                    Catch::Contains("rdma option tos") && Catch::Contains("0..255"));
  CHECK_THROWS_WITH(parse_rdma_settings({{"ack_timeout", "32"}}),
                    Catch::Contains("rdma option ack_timeout") && Catch::Contains("0..31"));
}

TEST_CASE("device kinds: InfiniBand and RoCE carry every verb") {
  for (Verb v : {Verb::send, Verb::write, Verb::write_imm, Verb::read})
    CHECK(device_refusal(DeviceKind::ib_roce, v, "mlx5_0").empty());
}

TEST_CASE("device kinds: iWARP is refused with the reason, write_imm by name") {
  CHECK_THAT(device_refusal(DeviceKind::iwarp, Verb::send, "irdma0"),
             Catch::Contains("irdma0 is an iWARP device") && Catch::Contains("no immediate data"));
  CHECK_THAT(device_refusal(DeviceKind::iwarp, Verb::write, "siw0"), Catch::Contains("iWARP"));
  CHECK_THAT(device_refusal(DeviceKind::iwarp, Verb::write_imm, "cxgb4_0"),
             Catch::StartsWith("rdma: -O verb=write_imm over cxgb4_0, an iWARP device"));
}

TEST_CASE("device kinds: a device without RC or rdma_cm (EFA) is refused") {
  CHECK_THAT(device_refusal(DeviceKind::other, Verb::send, "efa_0"),
             Catch::Contains("efa_0") && Catch::Contains("reliable-connected"));
}
