// The out-of-band exchange's message (oob_wire.hpp) and the GID choice (gid_rules.hpp): round
// trips, every malformed field refused by name, the MTU and READ depths both sides agree on.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <vector>

#include "verbs/gid_rules.hpp"
#include "verbs/oob_wire.hpp"

using namespace mtperf::rdma;

namespace {

OobHello sample() {
  OobHello h;
  h.qp.qpn = 0x123456;
  h.qp.psn = 0xabcdef;
  h.qp.lid = 0;
  h.qp.link = kLinkEthernet;
  h.qp.mtu = 3;
  h.qp.depths = {16, 8};
  h.qp.gid[10] = 0xff;
  h.qp.gid[11] = 0xff;
  h.qp.gid[12] = 10;
  h.qp.gid[15] = 1;
  h.conn.verb = 1;
  h.conn.flow = 7;
  h.conn.cookie = 0x1122334455667788;
  h.conn.addr = 0x7f0000001000;
  h.conn.rkey = 0x4321;
  h.conn.slot_size = 4096;
  h.conn.slots = 32;
  h.conn.credits = 31;
  h.conn.credit_addr = 0x7f0000000000;
  return h;
}

std::array<uint8_t, kOobBytes> bytes_of(const OobHello& h) {
  std::array<uint8_t, kOobBytes> b{};
  encode_oob(h, b.data());
  return b;
}

}  // namespace

TEST_CASE("oob hello: what is encoded decodes the same") {
  OobHello h = sample();
  auto b = bytes_of(h);
  CHECK(b[0] == 'M');
  CHECK(b[3] == 'B');
  OobHello back;
  REQUIRE(decode_oob(b.data(), b.size(), back) == OobError::ok);
  CHECK(back.qp.qpn == h.qp.qpn);
  CHECK(back.qp.psn == h.qp.psn);
  CHECK(back.qp.mtu == h.qp.mtu);
  CHECK(back.qp.depths == h.qp.depths);
  CHECK(back.qp.gid == h.qp.gid);
  CHECK(back.conn.cookie == h.conn.cookie);
  CHECK(back.conn.rkey == h.conn.rkey);
  CHECK(back.conn.addr == h.conn.addr);
  CHECK(back.conn.flow == h.conn.flow);
}

TEST_CASE("oob hello: each malformed field is refused by name, never read past the end") {
  auto b = bytes_of(sample());
  OobHello out;
  out.qp.qpn = 99;  // untouched on failure
  auto with = [&](size_t at, uint8_t v) {
    auto c = b;
    c[at] = v;
    return decode_oob(c.data(), c.size(), out);
  };
  CHECK(decode_oob(nullptr, 0, out) == OobError::too_short);
  CHECK(decode_oob(b.data(), kOobBytes - 1, out) == OobError::too_short);
  CHECK(with(0, 'X') == OobError::magic);
  CHECK(with(4, 2) == OobError::version);
  CHECK(with(5, 3) == OobError::link_layer);
  CHECK(with(6, 0) == OobError::mtu);
  CHECK(with(6, 6) == OobError::mtu);
  CHECK(with(7, 1) == OobError::reserved);
  CHECK(with(38, 1) == OobError::reserved);
  CHECK(with(8, 1) == OobError::qpn);  // above 24 bits
  {
    auto c = b;
    std::memset(c.data() + 8, 0, 4);
    c[11] = 1;  // QP 1: the special GSI queue pair
    CHECK(decode_oob(c.data(), c.size(), out) == OobError::qpn);
  }
  CHECK(with(12, 1) == OobError::psn);
  CHECK(with(18, 0) == OobError::depths);
  CHECK(with(19, 17) == OobError::depths);
  {
    auto c = b;
    std::memset(c.data() + 20, 0, 16);
    CHECK(decode_oob(c.data(), c.size(), out) == OobError::gid);  // RoCE without a GID
    c[5] = kLinkIb;
    c[17] = 5;  // InfiniBand with a LID: fine
    CHECK(decode_oob(c.data(), c.size(), out) == OobError::ok);
  }
  out.qp.qpn = 99;
  CHECK(with(40, 0) == OobError::conn_info);
  CHECK(out.qp.qpn == 99);
  for (OobError e : {OobError::too_short, OobError::magic, OobError::gid, OobError::conn_info})
    CHECK(!to_string(e).empty());
}

TEST_CASE("oob: both sides agree on the path MTU and on READ depths") {
  CHECK(path_mtu(3, 5) == 3);
  CHECK(path_mtu(5, 1) == 1);
  ReadDepths a{16, 16}, b{4, 2};
  ReadDepths da = oob_read_depths(a, b), db = oob_read_depths(b, a);
  // What one side may have in flight, the other answers: never more.
  CHECK(da.initiator_depth <= db.responder_resources);
  CHECK(db.initiator_depth <= da.responder_resources);
  CHECK(da == ReadDepths{2, 4});
  CHECK(db == ReadDepths{4, 2});
}

TEST_CASE("gid choice: RoCE v2 of the flow's address first, then v1, or the index given") {
  uint8_t v4[4] = {10, 10, 0, 1};
  auto addr = gid_of_ipv4(v4);
  std::array<uint8_t, 16> link{};
  link[0] = 0xfe;
  link[1] = 0x80;
  std::vector<GidEntry> t = {{0, GidType::roce_v1, link},
                             {1, GidType::roce_v2, link},
                             {2, GidType::roce_v1, addr},
                             {3, GidType::roce_v2, addr}};
  CHECK(choose_gid(t, true, addr, -1).index == 3);
  CHECK(choose_gid(std::span(t).first(3), true, addr, -1).index == 2);
  CHECK(choose_gid(t, true, addr, 1).index == 1);
  GidChoice none = choose_gid(t, true, addr, 7);
  CHECK(none.index == -1);
  CHECK(none.why.find("gid_index=7") != std::string::npos);
  uint8_t other[4] = {10, 10, 0, 2};
  GidChoice missing = choose_gid(t, true, gid_of_ipv4(other), -1);
  CHECK(missing.index == -1);
  CHECK(missing.why.find("no GID") != std::string::npos);
  CHECK(choose_gid(t, false, gid_of_ipv4(other), -1).index == 0);  // InfiniBand: the port's own
}
