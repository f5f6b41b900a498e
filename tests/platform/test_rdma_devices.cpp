// RDMA devices, ports, GIDs, netdev mapping and port counters read from the fixture trees of
// tests/fixtures/rdma (make_rdma.sh says what each one is).
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "platform/rdma_devices.hpp"

namespace fs = std::filesystem;
using mtperf::RdmaPortRef;
using mtperf::RdmaPortState;

namespace {

std::string fixture(const std::string& name) {
  return std::string(MTPERF_FIXTURES) + "/rdma/" + name;
}

// A scratch root directory, removed at the end of the test.
struct TempRoot {
  fs::path path = fs::temp_directory_path() / ("mtperf-rdma-" + std::to_string(::getpid()));
  TempRoot() { fs::create_directories(path); }
  ~TempRoot() { fs::remove_all(path); }
  void put(const std::string& rel, const std::string& text) const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << text << "\n";
  }
};

}  // namespace

TEST_CASE("a kernel without RDMA and a kernel without a device") {
  auto none = mtperf::read_rdma_devices(fixture("no-rdma"));
  CHECK_FALSE(none.kernel_support);
  CHECK(none.devices.empty());
  CHECK(mtperf::read_rdma_counters(fixture("no-rdma")).empty());

  auto empty = mtperf::read_rdma_devices(fixture("no-device"));
  CHECK(empty.kernel_support);
  CHECK(empty.devices.empty());  // the placeholder that keeps the folder in git is no device
  CHECK(mtperf::read_rdma_counters(fixture("no-device")).empty());
}

TEST_CASE("rxe0 over a netdev whose link is down") {
  auto rd = mtperf::read_rdma_devices(fixture("rxe-down"));
  REQUIRE(rd.devices.size() == 1);
  const auto& rxe = rd.devices[0];
  CHECK(rxe.name == "rxe0");
  CHECK(rxe.parent == "eth0");
  REQUIRE(rxe.ports.size() == 1);
  const auto& p = rxe.ports[0];
  CHECK(p.number == 1);
  CHECK(p.state == RdmaPortState::down);
  CHECK(p.state_text == "DOWN");
  CHECK(p.phys_state == "Disabled");
  CHECK_FALSE(p.active());
  CHECK(p.gids.size() == 2);  // entries 2-5 are unused
  CHECK(p.netdevs == std::vector<std::string>{"eth0"});
}

TEST_CASE("an ACTIVE rxe0 with RoCE v1 and v2 GIDs and rxe's hw_counters") {
  auto rd = mtperf::read_rdma_devices(fixture("rxe-active"));
  REQUIRE(rd.kernel_support);
  const auto* rxe = rd.find("rxe0");
  REQUIRE(rxe != nullptr);
  CHECK(rxe->node_guid == "5054:00ff:fe12:3456");
  CHECK(rxe->node_type == "CA");
  const auto* p = rxe->find_port(1);
  REQUIRE(p != nullptr);
  CHECK(p->active());
  CHECK(p->state_text == "ACTIVE");
  CHECK(p->phys_state == "LinkUp");
  CHECK(p->link_layer == "Ethernet");
  CHECK(p->rate == "2.5 Gb/sec (1X SDR)");
  REQUIRE(p->gids.size() == 4);
  CHECK(p->gids[0].gid == "fe80:0000:0000:0000:5054:00ff:fe12:3456");
  CHECK(p->gids[0].type == "IB/RoCE v1");
  CHECK(p->gids[1].type == "RoCE v2");
  CHECK(p->gids[3].index == 3);
  CHECK(p->gids[3].gid == "0000:0000:0000:0000:0000:ffff:0a0a:0001");
  CHECK(p->gids[3].netdev == "eth0");
  CHECK(p->rocev2());
  CHECK(rxe->find_port(2) == nullptr);

  CHECK(rd.port_of_netdev("eth0") == RdmaPortRef{"rxe0", 1});
  CHECK_FALSE(rd.port_of_netdev("lo"));
  CHECK(rd.netdevs_of({"rxe0", 1}) == std::vector<std::string>{"eth0"});
  CHECK(rd.netdevs_of({"rxe0", 2}).empty());
  CHECK(rd.netdevs_of({"mlx5_0", 1}).empty());

  auto counters = mtperf::read_rdma_counters(fixture("rxe-active"));
  REQUIRE(counters.size() == 1);
  CHECK(counters[0].device == "rxe0");
  CHECK(counters[0].port == 1);
  CHECK(counters[0].counters.size() == 15);
  CHECK(counters[0].counters.at("sent_pkts") == 120000);
  auto t = mtperf::rdma_traffic(counters[0]);
  CHECK_FALSE(t.bytes_sent);  // rxe has no data counters
  CHECK(t.packets_sent == 120000u);
  CHECK(t.packets_received == 60000u);
  REQUIRE(t.errors.size() == 1);
  CHECK(t.errors[0] == std::pair<std::string, uint64_t>{"rcvd_seq_err", 3});
}

TEST_CASE("a two-port device: RoCE on port 1, InfiniBand with IPoIB on port 2") {
  auto rd = mtperf::read_rdma_devices(fixture("mlx5x2"));
  REQUIRE(rd.devices.size() == 1);
  const auto& d = rd.devices[0];
  CHECK(d.name == "mlx5_0");
  CHECK(d.parent.empty());
  REQUIRE(d.ports.size() == 2);
  CHECK(d.ports[0].link_layer == "Ethernet");
  CHECK(d.ports[0].rocev2());
  CHECK(d.ports[0].netdevs == std::vector<std::string>{"ens2f0"});  // from the GIDs
  CHECK(d.ports[1].link_layer == "InfiniBand");
  CHECK(d.ports[1].rate == "100 Gb/sec (4X EDR)");
  REQUIRE(d.ports[1].gids.size() == 1);
  CHECK(d.ports[1].gids[0].netdev.empty());
  CHECK_FALSE(d.ports[1].rocev2());
  CHECK(d.ports[1].netdevs == std::vector<std::string>{"ib0"});  // dev_port 1 -> port 2
  CHECK(rd.port_of_netdev("ens2f0") == RdmaPortRef{"mlx5_0", 1});
  CHECK(rd.port_of_netdev("ib0") == RdmaPortRef{"mlx5_0", 2});

  auto counters = mtperf::read_rdma_counters(fixture("mlx5x2"));
  REQUIRE(counters.size() == 2);
  CHECK(counters[1].port == 2);
  const auto& c = counters[1].counters;
  CHECK(c.at("port_xmit_data") == 2000000);
  CHECK(c.at("out_of_sequence") == 2);
  CHECK(c.at("rx_write_requests") == 900);
  CHECK(c.count("lifespan") == 0);  // a setting, not a count
  auto t = mtperf::rdma_traffic(counters[1]);
  CHECK(t.bytes_sent == 8000000u);  // 4-byte words
  CHECK(t.bytes_received == 4000000u);
  CHECK(t.packets_sent == 8000u);
  CHECK(t.packets_received == 4000u);
  CHECK(t.errors == std::vector<std::pair<std::string, uint64_t>>{{"out_of_sequence", 2},
                                                                  {"port_rcv_errors", 1}});
}

TEST_CASE("counter deltas over a window") {
  TempRoot root;
  const std::string port = "sys/class/infiniband/dev0/ports/1/";
  root.put(port + "counters/port_xmit_data", "100");
  root.put(port + "counters/link_downed", "0");
  root.put(port + "hw_counters/link_downed", "1");  // a name in both folders
  root.put(port + "hw_counters/rdma_sends", "10");
  root.put(port + "hw_counters/broken", "n/a");
  auto before = mtperf::read_rdma_counters(root.path.string());
  REQUIRE(before.size() == 1);
  CHECK(before[0].counters.size() == 4);
  CHECK(before[0].counters.at("hw_counters/link_downed") == 1);
  CHECK(before[0].counters.count("broken") == 0);

  root.put(port + "counters/port_xmit_data", "350");
  root.put(port + "counters/link_downed", "0");
  root.put(port + "hw_counters/rdma_sends", "4");                              // reset: left out
  root.put("sys/class/infiniband/dev1/ports/1/counters/port_xmit_data", "7");  // new device
  auto after = mtperf::read_rdma_counters(root.path.string());
  REQUIRE(after.size() == 2);
  auto delta = mtperf::rdma_counter_deltas(before, after);
  REQUIRE(delta.size() == 1);
  CHECK(delta[0].device == "dev0");
  CHECK(delta[0].counters == std::map<std::string, uint64_t>{{"port_xmit_data", 250},
                                                             {"link_downed", 0},
                                                             {"hw_counters/link_downed", 0}});
  CHECK(mtperf::rdma_traffic(delta[0]).bytes_sent == 1000u);
}

TEST_CASE("counter snapshots stay within their bounds") {
  TempRoot root;
  for (int i = 0; i < 200; ++i)
    root.put("sys/class/infiniband/dev0/ports/1/counters/c" + std::to_string(i), "1");
  root.put("sys/class/infiniband/dev0/ports/1/counters/" + std::string(100, 'x'), "1");
  auto c = mtperf::read_rdma_counters(root.path.string());
  REQUIRE(c.size() == 1);
  CHECK(c[0].counters.size() == mtperf::kMaxRdmaCounters);
  for (const auto& [name, value] : c[0].counters)
    CHECK(name.size() <= mtperf::kMaxRdmaCounterName);
}

TEST_CASE("port states and error counters by name") {
  CHECK(mtperf::to_string(RdmaPortState::active) == "ACTIVE");
  CHECK(mtperf::to_string(RdmaPortState::active_defer) == "ACTIVE_DEFER");
  for (const char* name :
       {"symbol_error", "port_xmit_discards", "VL15_dropped", "out_of_buffer", "rnr_nak_retry_err",
        "duplicate_request", "link_downed", "local_ack_timeout_err", "retry_exceeded_err"})
    CHECK(mtperf::is_rdma_error_counter(name));
  for (const char* name : {"port_xmit_data", "port_rcv_packets", "sent_pkts", "rdma_sends",
                           "rx_write_requests", "port_xmit_wait", "ack_deferred"})
    CHECK_FALSE(mtperf::is_rdma_error_counter(name));
}

TEST_CASE("the live host reads without error") {
  auto rd = mtperf::read_rdma_devices();
  for (const auto& d : rd.devices)
    CHECK_FALSE(d.name.empty());
  CHECK(mtperf::read_rdma_counters().size() <= mtperf::kMaxRdmaPorts);
}

TEST_CASE("the addresses of the active ports, and the receive-not-ready counters summed") {
  mtperf::RdmaDevices devs;
  mtperf::RdmaDevice rxe{"rxe0", "", "", "eth0", {}};
  mtperf::RdmaPort up;
  up.number = 1;
  up.state = RdmaPortState::active;
  up.netdevs = {"eth0"};
  rxe.ports.push_back(up);
  mtperf::RdmaDevice down{"rxe1", "", "", "eth1", {}};
  mtperf::RdmaPort off = up;
  off.state = RdmaPortState::down;
  off.netdevs = {"eth1"};
  down.ports.push_back(off);
  devs.devices = {rxe, down};
  const std::vector<mtperf::InterfaceAddress> addrs = {{"lo", AF_INET, "127.0.0.1", 8},
                                                       {"eth0", AF_INET6, "fe80::1", 64},
                                                       {"eth0", AF_INET6, "fd00::1", 64},
                                                       {"eth0", AF_INET, "10.10.0.1", 24},
                                                       {"eth1", AF_INET, "10.20.0.1", 24}};
  const std::vector<mtperf::InterfaceAddress> got = mtperf::rdma_port_addresses(devs, addrs);
  // The active port's own, link-local left out; not the loopback's, not the down port's.
  REQUIRE(got.size() == 2);
  CHECK(got[0].address == "fd00::1");
  CHECK(got[1].address == "10.10.0.1");
  CHECK(mtperf::rdma_port_addresses(mtperf::RdmaDevices{}, addrs).empty());

  mtperf::RdmaPortCounters a{"rxe0", 1, {{"hw_counters/rnr_nak_retry_err", 3}, {"sent_pkts", 90}}};
  mtperf::RdmaPortCounters b{"mlx5_0", 1, {{"hw_counters/rnr_nak_rcv_packets", 4}}};
  CHECK(mtperf::rnr_count({a, b}) == 7);
  CHECK(mtperf::rnr_count({}) == 0);
}
