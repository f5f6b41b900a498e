// perftest's out-of-band exchange (peers/perftest/protocol.hpp) on transcripts: the key message
// text as perftest 4.5 writes it, every malformed field refused by name, the version rule, and
// each program's sequence of steps from the client's side. No perftest needed.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "verbs/perftest_wire.hpp"

using namespace mtperf::perftest;

namespace {

std::vector<uint8_t> bytes(const std::string& s, size_t n) {
  std::vector<uint8_t> b(s.begin(), s.end());
  b.resize(n, 0);
  return b;
}

// A key message as perftest's sprintf(KEY_PRINT_FMT_GID, ...) writes it: a RoCE v2 GID of
// 10.10.0.1, QPN 0x11, PSN 0xabcdef, RKEY 0x1234, VADDR 0x55d0c0a3e000.
const std::string kServerKeys =
    "0000:0000:000011:abcdef:00001234:000055d0c0a3e000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:0a:"
    "00:01:00000000:";

Keys our_keys() {
  Keys k;
  k.out_reads = 16;
  k.qpn = 0x22;
  k.psn = 0x123456;
  k.rkey = 0x99;
  k.vaddr = 0x7f0000001000;
  k.gid[10] = 0xff;
  k.gid[11] = 0xff;
  k.gid[12] = 10;
  k.gid[13] = 10;
  k.gid[15] = 1;
  return k;
}

}  // namespace

TEST_CASE("perftest keys: perftest's text decodes; ours has its exact size and format") {
  REQUIRE(kServerKeys.size() + 1 == kKeyGidBytes);
  Keys k = decode_keys(bytes(kServerKeys, kKeyGidBytes), true);
  CHECK(k.qpn == 0x11);
  CHECK(k.psn == 0xabcdef);
  CHECK(k.rkey == 0x1234);
  CHECK(k.vaddr == 0x55d0c0a3e000);
  CHECK(k.gid[12] == 10);
  CHECK(k.gid[15] == 1);
  CHECK(ipv4_mapped(k.gid));
  std::vector<uint8_t> again = encode_keys(k, true);
  CHECK(again == bytes(kServerKeys, kKeyGidBytes));
  std::vector<uint8_t> plain = encode_keys(our_keys(), false);
  REQUIRE(plain.size() == kKeyBytes);
  CHECK(std::string(reinterpret_cast<const char*>(plain.data())) ==
        "0000:0010:000022:123456:00000099:00007f0000001000:00000000");
  Keys p = decode_keys(plain, false);
  CHECK(p.out_reads == 16);
  CHECK(p.vaddr == 0x7f0000001000);
}

TEST_CASE("perftest keys: each malformed field is named, the text quoted") {
  auto bad = [](size_t at, char c) {
    std::vector<uint8_t> b = bytes(kServerKeys, kKeyGidBytes);
    b[at] = uint8_t(c);
    return b;
  };
  CHECK_THROWS_WITH(decode_keys(bad(0, 'g'), true),
                    Catch::Contains("LID") && Catch::Contains("\""));
  CHECK_THROWS_WITH(decode_keys(bad(4, '-'), true), Catch::Contains("after the LID"));
  CHECK_THROWS_WITH(decode_keys(bad(10, 'z'), true), Catch::Contains("QPN"));
  CHECK_THROWS_WITH(decode_keys(bad(17, ' '), true), Catch::Contains("PSN"));
  CHECK_THROWS_WITH(decode_keys(bad(24, 'x'), true), Catch::Contains("RKEY"));
  CHECK_THROWS_WITH(decode_keys(bad(33, 'x'), true), Catch::Contains("VADDR"));
  CHECK_THROWS_WITH(decode_keys(bad(50, 'x'), true), Catch::Contains("GID"));
  CHECK_THROWS_WITH(decode_keys(bad(98, 'x'), true), Catch::Contains("SRQN"));
  CHECK_THROWS_WITH(decode_keys(bad(107, 'x'), true), Catch::Contains("NUL"));
  CHECK_THROWS_WITH(decode_keys(bytes(kServerKeys, kKeyBytes), true), Catch::Contains("59 bytes"));
  CHECK_THROWS_WITH(
      decode_keys(bytes("0000:0000:000001:000000:00000000:0000000000000000:00000000", kKeyBytes),
                  false),
      Catch::Contains("QPN 1"));
}

TEST_CASE("perftest version: compared as perftest's atof does; older than 5.70 refused") {
  CHECK(parse_version(bytes("6.06", 16)) == 6060);
  CHECK(parse_version(bytes("5.70", 16)) == 5700);
  CHECK(parse_version(bytes("5.4", 16)) == 5400);
  CHECK(parse_version(bytes("10.1", 16)) == 10100);
  CHECK_THROWS_WITH(parse_version(bytes("six", 16)), Catch::Contains("\"six\""));
  CHECK_THROWS_WITH(parse_version(bytes("6.0606", 16)), Catch::Contains("6.06"));
  CHECK_THROWS_WITH(parse_version(bytes("6.", 16)), Catch::Contains("6.06"));
  CHECK_THROWS_WITH(parse_version(std::vector<uint8_t>(16, '7')), Catch::Contains("no NUL"));
  CHECK(encode_version("6.06") == std::array<uint8_t, 16>{'6', '.', '0', '6'});
}

TEST_CASE("perftest MTU and integers") {
  CHECK(encode_mtu(3) == std::array<uint8_t, 2>{'3', 0});
  CHECK(decode_mtu(bytes("5", 2)) == 5);
  CHECK_THROWS_WITH(decode_mtu(bytes("6", 2)), Catch::Contains("1..5"));
  CHECK_THROWS(decode_mtu(bytes("33", 2)));
  CHECK(decode_int(encode_int(4096)) == 4096);
  CHECK(encode_int(64) == std::array<uint8_t, 4>{0, 0, 0, 64});
}

TEST_CASE("perftest client: send_bw's steps, each with perftest's sizes") {
  ClientExchange::Config c;
  c.program = Program::send_bw;
  c.keys = our_keys();
  c.mtu = 5;
  ClientExchange x(c);
  using S = ClientExchange::Step;
  CHECK(x.step() == S::version);
  CHECK(x.outgoing().size() == 16);
  CHECK(x.outgoing()[0] == '6');
  x.take(bytes("6.06", 16));
  CHECK(x.peer_version_text() == "6.06");
  REQUIRE(x.step() == S::cycle_buffer);
  CHECK(x.outgoing() == std::vector<uint8_t>{0, 0, 0x10, 0});
  x.take(encode_int(8192));
  CHECK(x.cycle_buffer() == 8192);
  x.take(encode_int(64));
  REQUIRE(x.step() == S::mtu);
  CHECK(x.outgoing() == std::vector<uint8_t>{'5', 0});
  x.take(bytes("3", 2));
  CHECK(x.mtu() == 3);
  REQUIRE(x.step() == S::keys);
  CHECK(x.outgoing().size() == kKeyGidBytes);
  x.take(bytes(kServerKeys, kKeyGidBytes));
  CHECK(x.peer_keys().qpn == 0x11);
  REQUIRE(x.step() == S::rts);
  CHECK(x.outgoing().empty());
  CHECK(x.answer_bytes() == 0);
  CHECK_THROWS(x.take(bytes("", 0)));
  x.proceed();
  for (int i = 0; i < 3; ++i) {
    REQUIRE(x.step() == S::barrier);
    x.take(bytes(kServerKeys, kKeyGidBytes));
  }
  REQUIRE(x.step() == S::data);
  x.proceed();
  x.take(bytes(kServerKeys, kKeyGidBytes));
  REQUIRE(x.step() == S::done);
  CHECK(x.outgoing() == std::vector<uint8_t>{'d', 'o', 'n', 'e', 0});
  x.proceed();
  CHECK(x.finished());
}

TEST_CASE("perftest client: write_bw's report comes back; write_lat has no close") {
  ClientExchange::Config c;
  c.program = Program::write_bw;
  c.keys = our_keys();
  c.report.size = 65536;
  c.report.iters = 1000;
  ClientExchange x(c);
  using S = ClientExchange::Step;
  x.take(bytes("6.06", 16));
  x.take(encode_int(4096));
  x.take(encode_int(64));
  x.take(bytes("3", 2));
  x.take(bytes(kServerKeys, kKeyGidBytes));
  x.proceed();
  x.take(bytes(kServerKeys, kKeyGidBytes));
  x.take(bytes(kServerKeys, kKeyGidBytes));
  REQUIRE(x.step() == S::data);
  x.proceed();
  x.take(bytes(kServerKeys, kKeyGidBytes));
  REQUIRE(x.step() == S::report_size);
  CHECK(x.outgoing() == std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 0, 0});
  x.take(std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 0, 0});
  CHECK(x.outgoing() == std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0x03, 0xe8});
  x.take(std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0x03, 0xe8});
  // 2.0 as a byte-swapped double: 0x4000000000000000
  x.take(std::vector<uint8_t>{0x40, 0, 0, 0, 0, 0, 0, 0});
  x.take(std::vector<uint8_t>{0x40, 0, 0, 0, 0, 0, 0, 0});
  x.take(std::vector<uint8_t>{0x3f, 0xf0, 0, 0, 0, 0, 0, 0});
  CHECK(x.peer_report().size == 65536);
  CHECK(x.peer_report().iters == 1000);
  CHECK(x.peer_report().bw_avg == 2.0);
  CHECK(x.peer_report().msg_rate == 1.0);
  x.take(bytes(kServerKeys, kKeyGidBytes));
  REQUIRE(x.step() == S::done);
  x.proceed();
  CHECK(x.finished());

  c.program = Program::write_lat;
  ClientExchange l(c);
  l.take(bytes("6.06", 16));
  l.take(encode_int(4096));
  l.take(encode_int(64));
  l.take(bytes("3", 2));
  l.take(bytes(kServerKeys, kKeyGidBytes));
  REQUIRE(l.step() == S::keys);  // write_lat sends its keys twice before connecting
  l.take(bytes(kServerKeys, kKeyGidBytes));
  l.proceed();
  l.take(bytes(kServerKeys, kKeyGidBytes));
  l.take(bytes(kServerKeys, kKeyGidBytes));
  REQUIRE(l.step() == S::data);
  l.proceed();
  CHECK(l.finished());
}

TEST_CASE("perftest client: refusals quote perftest") {
  ClientExchange::Config c;
  c.keys = our_keys();
  {
    ClientExchange x(c);
    CHECK_THROWS_WITH(x.take(bytes("5.60", 16)),
                      Catch::Contains("version 5.60") && Catch::Contains("5.70"));
  }
  {
    ClientExchange x(c);
    x.take(bytes("6.06", 16));
    CHECK_THROWS_WITH(x.take(encode_int(0)), Catch::Contains("cycle buffer 0"));
  }
  {
    ClientExchange x(c);
    x.take(bytes("6.06", 16));
    x.take(encode_int(4096));
    x.take(encode_int(64));
    x.take(bytes("3", 2));
    std::string v6 = kServerKeys;
    v6.replace(50, 5, "20:01");  // GID 0000:...:2001..: not IPv4-mapped any more
    v6.replace(80, 5, "00:00");
    CHECK_THROWS_WITH(x.take(bytes(v6, kKeyGidBytes)), Catch::Contains("address families"));
    CHECK_THROWS_WITH(x.take(bytes("", 3)), Catch::Contains("3 bytes, not 108"));
  }
  CHECK(parse_program("read_bw") == Program::read_bw);
  CHECK_THROWS_WITH(parse_program("atomic_bw"), Catch::Contains("send_bw, write_bw"));
  CHECK(server_command(Program::write_bw, 1000, 65536, 3, 128) ==
        "ib_write_bw -n 1000 -s 65536 -t 128 -x 3 -F");
  CHECK(server_command(Program::send_lat, 500, 2, -1, 0) == "ib_send_lat -n 500 -s 2 -F");
}

TEST_CASE("perftest client: the bytes of a real ib_send_lat client, byte for byte") {
  // Captured (strace of the exchange socket) from Debian 12's ib_send_lat 4.5+0.17 ("6.06"),
  // client against server in the soft-RoCE guest: `ib_send_lat -d rxe0 -n 5 -s 4096 -F`.
  const std::string client_keys =
      "0000:0001:000028:d798cb:00000000:0000557497e07000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:"
      "0a:00:01:00000000:";
  const std::string server_keys =
      "0000:0001:000027:6f3910:00000000:000055ff52ed5000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:"
      "0a:00:01:00000000:";
  ClientExchange::Config c;
  c.program = Program::send_lat;
  c.keys = decode_keys(bytes(client_keys, kKeyGidBytes), true);
  c.mtu = 3;
  ClientExchange x(c);
  // What the real client wrote, and what the real server answered, in order.
  const std::vector<std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> transcript = {
      {bytes("6.06", 16), bytes("6.06", 16)},
      {{0, 0, 0x10, 0}, {0, 0, 0x10, 0}},
      {{0, 0, 0, 0x40}, {0, 0, 0, 0x40}},
      {{'3', 0}, {'3', 0}},
      {bytes(client_keys, kKeyGidBytes), bytes(server_keys, kKeyGidBytes)},
      {bytes(client_keys, kKeyGidBytes), bytes(server_keys, kKeyGidBytes)},
      {bytes(client_keys, kKeyGidBytes), bytes(server_keys, kKeyGidBytes)},
      {bytes(client_keys, kKeyGidBytes), bytes(server_keys, kKeyGidBytes)},
      {bytes(client_keys, kKeyGidBytes), bytes(server_keys, kKeyGidBytes)},
  };
  for (const auto& [wrote, read] : transcript) {
    while (x.answer_bytes() == 0 && !x.finished())
      x.proceed();  // RTS, the data phase: nothing on the socket
    INFO("step " << to_string(x.step()));
    CHECK(x.outgoing() == wrote);
    x.take(read);
  }
  CHECK(x.peer_keys().qpn == 0x27);
  CHECK(x.peer_keys().psn == 0x6f3910);
  CHECK(x.peer_keys().vaddr == 0x55ff52ed5000);
  REQUIRE(x.step() == ClientExchange::Step::done);
  CHECK(x.outgoing() == std::vector<uint8_t>{'d', 'o', 'n', 'e', 0});
}
