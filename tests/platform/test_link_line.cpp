// The line rate of an adapter: its sysfs speed, the rate of the RDMA port that carries it.
#include <catch2/catch.hpp>

#include "platform/link_line.hpp"

using namespace mtperf;

TEST_CASE("an RDMA port's rate as the kernel writes it", "[platform][link_line]") {
  CHECK(parse_rdma_rate("100 Gb/sec (4X EDR)") == 100e9);
  CHECK(parse_rdma_rate("2.5 Gb/sec (1X SDR)") == 2.5e9);
  CHECK(parse_rdma_rate("400 Gb/sec (4X NDR)\n") == 400e9);
  CHECK_FALSE(parse_rdma_rate(""));
  CHECK_FALSE(parse_rdma_rate("0 Gb/sec (1X SDR)"));
  CHECK_FALSE(parse_rdma_rate("100 Mb/sec"));
  CHECK_FALSE(parse_rdma_rate("fast"));
}

TEST_CASE("an interface's line: sysfs speed, its RDMA port's rate, nothing",
          "[platform][link_line]") {
  Topology t;
  Adapter eth;
  eth.name = "ens1f0";
  eth.speed_mbps = 25000;
  eth.rdma_device = "mlx5_0";
  eth.rdma_port = 1;
  Adapter ib;
  ib.name = "ib0";  // IPoIB: no speed of its own, its port found by the devices' view
  Adapter lo;
  lo.name = "lo";
  t.adapters = {eth, ib, lo};
  RdmaDevices rdma;
  rdma.kernel_support = true;
  RdmaDevice mlx;
  mlx.name = "mlx5_0";
  RdmaPort p1;
  p1.number = 1;
  p1.state = RdmaPortState::active;
  p1.rate = "25 Gb/sec (1X EDR)";
  p1.netdevs = {"ens1f0"};
  mlx.ports = {p1};
  RdmaDevice ibdev;
  ibdev.name = "mlx5_1";
  RdmaPort q1 = p1;
  q1.rate = "100 Gb/sec (4X EDR)";
  q1.netdevs = {"ib0"};
  ibdev.ports = {q1};
  rdma.devices = {mlx, ibdev};

  LinkLine l = link_line(t, rdma, "ens1f0");
  CHECK(l.adapter == "ens1f0");
  CHECK(l.speed_bps == 25e9);
  CHECK(l.rdma_rate_bps == 25e9);
  CHECK(l.rdma_port == "mlx5_0/1");
  l = link_line(t, rdma, "ib0");
  CHECK_FALSE(l.speed_bps);
  CHECK(l.rdma_rate_bps == 100e9);
  CHECK(l.rdma_port == "mlx5_1/1");
  l = link_line(t, rdma, "lo");
  CHECK(l.adapter == "lo");
  CHECK_FALSE(l.speed_bps);
  CHECK_FALSE(l.rdma_rate_bps);
  CHECK(link_line(t, rdma, "nosuch").adapter.empty());
  // A port that is down carries no rate.
  rdma.devices[1].ports[0].state = RdmaPortState::down;
  CHECK_FALSE(link_line(t, rdma, "ib0").rdma_rate_bps);
}

TEST_CASE("the loopback address: lo, no speed; an address no one holds: nothing",
          "[platform][link_line]") {
  const LinkLine l = link_line_of_address("127.0.0.1");
  CHECK(l.adapter == "lo");
  CHECK_FALSE(l.speed_bps);
  CHECK(link_line_of_address("192.0.2.123").adapter.empty());  // TEST-NET-1: held by no one
  CHECK(link_line_of_address("").adapter.empty());
}
