// Network device counters, the host's TCP counters and their deltas, read from the fixture tree
// tests/fixtures/netdev/host (eth0 in sysfs; lo and vethb0 only in /proc/net/dev), and the
// parsers of /proc/net/snmp, /proc/net/dev and the ethtool string table on their own.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "platform/netdev_stats.hpp"

using mtperf::NetWitness;

namespace {

std::string fixture() {
  return std::string(MTPERF_FIXTURES) + "/netdev/host";
}

}  // namespace

TEST_CASE("sysfs statistics of a device, unreadable counters left out", "[netdev]") {
  NetWitness w = mtperf::read_net_witness({"eth0"}, fixture());
  REQUIRE(w.devices.size() == 1);
  const auto& s = w.devices[0].stats;
  CHECK(w.devices[0].device == "eth0");
  CHECK(s.at("tx_bytes") == 123456789012ULL);
  CHECK(s.at("rx_packets") == 812345);
  CHECK(s.at("rx_crc_errors") == 2);
  CHECK(s.at("rx_missed_errors") == 5);
  CHECK(s.count("rx_fifo_errors") == 0);  // "garbage"
  CHECK(w.devices[0].driver.empty());     // a fixture has no ethtool
}

TEST_CASE("a device sysfs does not show is read from /proc/net/dev", "[netdev]") {
  NetWitness w = mtperf::read_net_witness({"vethb0", "lo", "nosuch"}, fixture());
  REQUIRE(w.devices.size() == 3);
  CHECK(w.devices[0].stats.at("rx_bytes") == 1000200);
  CHECK(w.devices[0].stats.at("tx_bytes") == 2000400);
  CHECK(w.devices[0].stats.at("rx_dropped") == 1);
  CHECK(w.devices[0].stats.at("tx_compressed") == 0);
  CHECK(w.devices[1].stats.at("tx_packets") == 40123);
  CHECK(w.devices[2].stats.empty());
}

TEST_CASE("names that are no interface names are not read", "[netdev]") {
  NetWitness w =
      mtperf::read_net_witness({"", "..", "../eth0", "eth0/x", "a-name-far-too-long"}, fixture());
  CHECK(w.devices.empty());
  std::vector<std::string> many(100, "eth0");
  CHECK(mtperf::read_net_witness(many, fixture()).devices.size() == mtperf::kMaxNetdevs);
}

TEST_CASE("TCP counters from /proc/net/snmp and /proc/net/netstat", "[netdev]") {
  NetWitness w = mtperf::read_net_witness({}, fixture());
  CHECK(w.tcp.at("RetransSegs") == 1234);
  CHECK(w.tcp.at("InErrs") == 3);
  CHECK(w.tcp.at("OutRsts") == 456);
  CHECK(w.tcp.at("InCsumErrors") == 0);
  CHECK(w.tcp.count("MaxConn") == 0);  // -1: no count
  CHECK(w.tcp.count("InDatagrams") == 0);
  CHECK(w.tcp.at("TcpExt.TCPLostRetransmit") == 21);
  CHECK(w.tcp.count("TcpExt.InNoRoutes") == 0);
}

TEST_CASE("snmp sections: a header without values, a short value line", "[netdev]") {
  std::map<std::string, uint64_t> out;
  mtperf::parse_snmp_section("Tcp: A B C\nUdp: 1 2\n", "Tcp:", "", out);
  CHECK(out.empty());
  mtperf::parse_snmp_section("Tcp: A B C\nTcp: 1 x\n", "Tcp:", "", out);
  CHECK(out.size() == 1);
  CHECK(out.at("A") == 1);
  std::string big = "Tcp:";
  for (int i = 0; i < 1000; ++i)
    big += " N" + std::to_string(i);
  big += "\nTcp:" + std::string(1000 * 2, ' ');
  for (int i = 0; i < 1000; ++i)
    big += " 1";
  out.clear();
  mtperf::parse_snmp_section(big, "Tcp:", "", out);
  CHECK(out.size() <= mtperf::kMaxTcpCounters);
}

TEST_CASE("/proc/net/dev: only the device's own line", "[netdev]") {
  std::string text = "  eth10: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n eth1: 5 6\n";
  auto one = mtperf::parse_proc_net_dev(text, "eth1");
  CHECK(one.size() == 2);
  CHECK(one.at("rx_packets") == 6);
  auto ten = mtperf::parse_proc_net_dev(text, "eth10");
  CHECK(ten.size() == 16);
  CHECK(ten.at("tx_compressed") == 16);
  CHECK(mtperf::parse_proc_net_dev(text, "eth").empty());
}

TEST_CASE("ethtool string table: padded names, bad names, bounds", "[netdev]") {
  char table[4 * 32] = {};
  std::strcpy(table, "rx_packets");
  std::memcpy(table + 32, "tx_bytes_exactly_thirty_two_char", 32);  // no NUL
  table[64] = '\x01';                                               // unprintable
  std::strcpy(table + 96, "rx_crc_errors");
  auto names = mtperf::parse_ethtool_strings(table, sizeof table, 4, 32);
  REQUIRE(names.size() == 4);
  CHECK(names[0] == "rx_packets");
  CHECK(names[1] == "tx_bytes_exactly_thirty_two_char");
  CHECK(names[2] == "?2");
  CHECK(names[3] == "rx_crc_errors");
  CHECK(mtperf::parse_ethtool_strings(table, sizeof table, 1000, 32).size() == 4);
  CHECK(mtperf::parse_ethtool_strings(table, sizeof table, 4, 0).empty());
}

TEST_CASE("deltas: counters that went backwards or vanished are left out", "[netdev]") {
  NetWitness before, after;
  before.devices = {{"eth0", {{"tx_bytes", 100}, {"rx_bytes", 500}, {"gone", 1}}, {{"q0", 7}}}};
  after.devices = {{"eth0", {{"tx_bytes", 350}, {"rx_bytes", 20}, {"new", 3}}, {{"q0", 9}}},
                   {"eth1", {{"tx_bytes", 1}}, {}}};
  before.tcp = {{"RetransSegs", 10}};
  after.tcp = {{"RetransSegs", 12}};
  NetWitness d = mtperf::net_witness_delta(before, after);
  REQUIRE(d.devices.size() == 1);
  CHECK(d.devices[0].stats == std::map<std::string, uint64_t>{{"tx_bytes", 250}});
  CHECK(d.devices[0].driver.at("q0") == 2);
  CHECK(d.tcp.at("RetransSegs") == 2);
}

TEST_CASE("fault counters by name", "[netdev]") {
  for (const char* name : {"rx_crc_errors", "rx_missed_errors", "tx_dropped", "rx_fifo_errors",
                           "rx_queue_0_drops", "tx_timeout_count", "collisions"})
    CHECK(mtperf::is_netdev_error_counter(name));
  for (const char* name : {"tx_bytes", "rx_packets", "multicast", "rx_queue_0_bytes"})
    CHECK_FALSE(mtperf::is_netdev_error_counter(name));
}

TEST_CASE("the live host: lo is found and read", "[netdev]") {
  auto devs = mtperf::netdevs_of_addresses({"127.0.0.1", "::ffff:127.0.0.1", "192.0.2.77"});
  REQUIRE(devs == std::vector<std::string>{"lo"});
  NetWitness w = mtperf::read_net_witness(devs);
  REQUIRE(w.devices.size() == 1);
  CHECK(w.devices[0].stats.count("tx_bytes") == 1);
}
