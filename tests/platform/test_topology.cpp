// Topology read from fixture trees: the exact adapters, controllers, IRQ → CPU and NUMA facts of
// a copied VM and a hand-built two-socket server (tests/fixtures/topology/README.md).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "platform/affinity.hpp"
#include "platform/topology.hpp"

namespace fs = std::filesystem;
using mtperf::LinkType;

namespace {

const std::string kVm = std::string(MTPERF_FIXTURES) + "/topology/vm";
const std::string kServer8 = std::string(MTPERF_FIXTURES) + "/topology/server8";

std::vector<std::string> adapter_names(const mtperf::Topology& t) {
  std::vector<std::string> names;
  for (const auto& a : t.adapters)
    names.push_back(a.name);
  return names;
}

// A scratch root directory, removed at the end of the test.
struct TempRoot {
  fs::path path = fs::temp_directory_path() / ("mtperf-topo-" + std::to_string(::getpid()));
  TempRoot() { fs::create_directories(path); }
  ~TempRoot() { fs::remove_all(path); }
  void put(const std::string& rel, const std::string& text) const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << text << "\n";
  }
  void link(const std::string& rel, const std::string& target) const {
    fs::create_directories((path / rel).parent_path());
    fs::create_symlink(target, path / rel);
  }
};

}  // namespace

TEST_CASE("vm fixture: a virtio NIC on pci0000:00 and virtual adapters") {
  auto t = mtperf::read_topology(kVm);
  REQUIRE(adapter_names(t) == std::vector<std::string>{"lo", "ifb0", "ifb1", "eth0"});
  CHECK(t.numa_nodes == 1);
  CHECK(t.online_cpus == std::vector<int>{0, 1});

  const auto& lo = *t.find_adapter("lo");
  CHECK(lo.type == LinkType::loopback);
  CHECK(lo.mtu == 65536);
  CHECK(lo.up);
  CHECK_FALSE(lo.speed_mbps);
  CHECK(lo.irqs.empty());

  const auto& ifb0 = *t.find_adapter("ifb0");
  CHECK(ifb0.type == LinkType::virtual_link);
  CHECK(ifb0.kind == "ifb");
  CHECK_FALSE(ifb0.up);
  CHECK(ifb0.controller.empty());

  const auto& eth0 = *t.find_adapter("eth0");
  CHECK(eth0.ifindex == 4);
  CHECK(eth0.type == LinkType::ethernet);
  CHECK(eth0.kind.empty());
  CHECK(eth0.mtu == 1400);
  CHECK(eth0.up);
  CHECK_FALSE(eth0.speed_mbps);  // virtio reports -1
  CHECK(eth0.driver == "virtio_net");
  CHECK(eth0.bus_device == "virtio2");
  CHECK(eth0.pci_address == "0000:00:03.0");
  CHECK(eth0.controller == "pci0000:00");
  CHECK(eth0.root_port.empty());  // on the root bus, no root port between
  CHECK(eth0.numa_node == -1);
  CHECK(eth0.local_cpus == std::vector<int>{0, 1});
  REQUIRE(eth0.irqs.size() == 3);
  CHECK(eth0.irqs[0].number == 37);
  CHECK(eth0.irqs[0].name == "virtio2-config");
  CHECK_FALSE(eth0.irqs[0].data_queue);
  CHECK(eth0.irqs[0].effective_cpus == std::vector<int>{0});
  CHECK(eth0.irqs[1].number == 38);
  CHECK(eth0.irqs[1].name == "virtio2-input.0");
  CHECK(eth0.irqs[1].data_queue);
  CHECK(eth0.irqs[1].effective_cpus == std::vector<int>{1});
  CHECK(eth0.irqs[2].number == 39);
  CHECK(eth0.irqs[2].name == "virtio2-output.0");
  CHECK(eth0.irqs[2].effective_cpus == std::vector<int>{0});
  CHECK(eth0.irq_cpus() == std::vector<int>{1, 0});  // receive queue first
  CHECK(eth0.rdma_devices.empty());

  REQUIRE(t.controllers.size() == 1);
  CHECK(t.controllers[0].name == "pci0000:00");
  CHECK(t.controllers[0].adapters == std::vector<std::string>{"eth0"});
  CHECK(t.controllers[0].root_ports.empty());
}

TEST_CASE("server8 fixture: 8 NICs on 4 PCI controllers over 2 NUMA nodes") {
  auto t = mtperf::read_topology(kServer8);
  REQUIRE(adapter_names(t) == std::vector<std::string>{"lo", "ens1f0", "ens1f1", "ens2f0", "ens2f1",
                                                       "ens3f0", "ens3f1", "ens4f0", "ens4f1",
                                                       "docker0"});
  CHECK(t.numa_nodes == 2);
  REQUIRE(t.node_cpus.size() == 2);
  CHECK(mtperf::format_cpu_list(t.node_cpus[0]) == "0-15");
  CHECK(mtperf::format_cpu_list(t.node_cpus[1]) == "16-31");

  struct Expect {
    const char* name;
    const char* driver;
    const char* pci;
    const char* controller;
    const char* root_port;
    int node;
    const char* irqs;
    const char* irq_cpus;
    int64_t speed;
  };
  const Expect expected[] = {
      {"ens1f0", "ixgbe", "0000:01:00.0", "pci0000:00", "0000:00:03.0", 0, "100-104", "0-3", 10000},
      {"ens1f1", "ixgbe", "0000:01:00.1", "pci0000:00", "0000:00:03.0", 0, "105-109", "4-7", 10000},
      {"ens2f0", "mlx5_core", "0000:41:00.0", "pci0000:40", "0000:40:01.1", 0, "110-114", "8-11",
       25000},
      {"ens2f1", "mlx5_core", "0000:41:00.1", "pci0000:40", "0000:40:01.1", 0, "115-119", "12-15",
       25000},
      {"ens3f0", "ixgbe", "0000:81:00.0", "pci0000:80", "0000:80:03.0", 1, "120-124", "16-19",
       10000},
      {"ens3f1", "ixgbe", "0000:81:00.1", "pci0000:80", "0000:80:03.0", 1, "125-129", "20-23",
       10000},
      {"ens4f0", "mlx5_core", "0000:c1:00.0", "pci0000:c0", "0000:c0:01.1", 1, "130-134", "24-27",
       25000},
      {"ens4f1", "mlx5_core", "0000:c1:00.1", "pci0000:c0", "0000:c0:01.1", 1, "135-139", "28-31",
       -1},
  };
  for (const auto& e : expected) {
    INFO(e.name);
    const auto* a = t.find_adapter(e.name);
    REQUIRE(a != nullptr);
    CHECK(a->type == LinkType::ethernet);
    CHECK(a->driver == e.driver);
    CHECK(a->pci_address == e.pci);
    CHECK(a->controller == e.controller);
    CHECK(a->root_port == e.root_port);
    CHECK(a->numa_node == e.node);
    CHECK(mtperf::format_cpu_list(a->local_cpus) == (e.node == 0 ? "0-15" : "16-31"));
    std::vector<int> numbers;
    for (const auto& irq : a->irqs)
      numbers.push_back(irq.number);
    CHECK(mtperf::format_cpu_list(numbers) == e.irqs);
    CHECK(mtperf::format_cpu_list(a->irq_cpus()) == e.irq_cpus);
    CHECK(a->speed_mbps.value_or(-1) == e.speed);
  }
  // The ixgbe link vector and the mlx5 async vector sit on CPU 0 but carry no packets.
  const auto& ens3f0 = *t.find_adapter("ens3f0");
  CHECK(ens3f0.irqs[4].name == "ens3f0");
  CHECK(ens3f0.irqs[4].effective_cpus == std::vector<int>{0});
  CHECK_FALSE(ens3f0.irqs[4].data_queue);
  const auto& ens4f0 = *t.find_adapter("ens4f0");
  CHECK(ens4f0.irqs[0].name == "mlx5_async0@pci:0000:c1:00.0");
  CHECK_FALSE(ens4f0.irqs[0].data_queue);
  CHECK(ens4f0.irqs[1].name == "mlx5_comp0@pci:0000:c1:00.0");
  CHECK(ens4f0.irqs[1].effective_cpus == std::vector<int>{24});

  CHECK(t.find_adapter("ens2f0")->rdma_devices == std::vector<std::string>{"mlx5_0"});
  CHECK(t.find_adapter("ens2f1")->rdma_devices.empty());
  CHECK_FALSE(t.find_adapter("ens4f1")->up);
  const auto& docker0 = *t.find_adapter("docker0");
  CHECK(docker0.type == LinkType::virtual_link);
  CHECK(docker0.kind == "bridge");

  REQUIRE(t.controllers.size() == 4);
  const char* names[] = {"pci0000:00", "pci0000:40", "pci0000:80", "pci0000:c0"};
  for (size_t i = 0; i < 4; ++i) {
    const auto& c = t.controllers[i];
    CHECK(c.name == names[i]);
    CHECK(c.numa_node == (i < 2 ? 0 : 1));
    CHECK(c.adapters.size() == 2);
    CHECK(c.root_ports.size() == 1);
  }
  CHECK(t.controllers[1].adapters == std::vector<std::string>{"ens2f0", "ens2f1"});
  CHECK(mtperf::format_cpu_list(t.controllers[3].local_cpus) == "16-31");
}

TEST_CASE("json and text renderings carry the facts") {
  auto t = mtperf::read_topology(kServer8);
  auto j = mtperf::to_json(t);
  CHECK(j["numa_nodes"] == 2);
  CHECK(j["adapters"].size() == 10);
  CHECK(j["adapters"][0]["speed_mbps"].is_null());
  CHECK(j["adapters"][3]["rdma_devices"][0] == "mlx5_0");
  CHECK(j["adapters"][3]["irq_cpus"] == nlohmann::json({8, 9, 10, 11}));
  CHECK(j["controllers"][2]["name"] == "pci0000:80");
  std::string text = mtperf::render_text(t);
  CHECK(text.find("ens2f0") != std::string::npos);
  CHECK(text.find("mlx5_0") != std::string::npos);
  CHECK(text.find("pci0000:c0") != std::string::npos);
}

TEST_CASE("adapters carry their RDMA device and port, and ports lead back to adapters") {
  const std::string rdma = std::string(MTPERF_FIXTURES) + "/rdma/";
  // Soft-RoCE over a virtio NIC: the device is not on the NIC's bus, the GID table names it.
  auto vm = mtperf::read_topology(rdma + "rxe-active");
  const auto& eth0 = *vm.find_adapter("eth0");
  CHECK(eth0.rdma_device == "rxe0");
  CHECK(eth0.rdma_port == 1);
  CHECK(eth0.rdma_devices == std::vector<std::string>{"rxe0"});
  CHECK(eth0.irq_cpus() == std::vector<int>{1, 0});  // placement by IRQ CPU, as for sockets
  CHECK(vm.find_adapter("lo")->rdma_device.empty());
  CHECK(vm.find_adapter("lo")->rdma_port == 0);
  CHECK(vm.find_rdma_adapter("rxe0", 1) == &eth0);
  CHECK(vm.find_rdma_adapter("rxe0", 2) == nullptr);

  // Two ports of one PCI function: RoCE on ens2f0, InfiniBand (IPoIB) on ib0.
  auto t = mtperf::read_topology(rdma + "mlx5x2");
  const auto& ens2f0 = *t.find_adapter("ens2f0");
  const auto& ib0 = *t.find_adapter("ib0");
  CHECK(ens2f0.rdma_device == "mlx5_0");
  CHECK(ens2f0.rdma_port == 1);
  CHECK(ib0.type == LinkType::infiniband);
  CHECK(ib0.rdma_device == "mlx5_0");
  CHECK(ib0.rdma_port == 2);
  CHECK(ib0.rdma_devices == std::vector<std::string>{"mlx5_0"});
  CHECK(ens2f0.controller == "pci0000:40");
  CHECK(mtperf::format_cpu_list(ens2f0.irq_cpus()) == "8-11");
  CHECK(t.find_rdma_adapter("mlx5_0", 2) == &ib0);

  auto j = mtperf::to_json(t);
  CHECK(j["adapters"][1]["name"] == "ens2f0");
  CHECK(j["adapters"][1]["rdma_device"] == "mlx5_0");
  CHECK(j["adapters"][1]["rdma_port"] == 1);
  CHECK(j["adapters"][0]["rdma_device"].is_null());
  CHECK(j["adapters"][0]["rdma_port"].is_null());
  std::string text = mtperf::render_text(t);
  CHECK(text.find("mlx5_0/1") != std::string::npos);
  CHECK(text.find("mlx5_0/2") != std::string::npos);

  // A host without RDMA: nothing mapped.
  auto plain = mtperf::read_topology(rdma + "no-rdma");
  CHECK(plain.find_adapter("eth0")->rdma_device.empty());
}

TEST_CASE("links resolve inside the root and emulated adapters name their controller") {
  TempRoot root;
  // An absolute link and a ".." past the root must both stay inside the root.
  root.link("sys/class/net/atm0", "/sys/devices/virtual/net/atm0");
  root.link("sys/class/net/up0", "../../../../../../sys/devices/virtual/net/up0");
  root.put("sys/devices/virtual/net/up0/ifindex", "3");
  root.put("sys/devices/virtual/net/up0/type", "1");
  for (const auto& [file, text] :
       std::vector<std::pair<std::string, std::string>>{{"ifindex", "2"},
                                                        {"type", "65534"},
                                                        {"mtu", "9180"},
                                                        {"operstate", "unknown"},
                                                        {"flags", "0x1091"},
                                                        {"tun_flags", "0x1001"},
                                                        {"ifalias",
                                                         "mtperf-emu controller=emu-pci0 "
                                                         "cpus=1 kind=clip"}})
    root.put("sys/devices/virtual/net/atm0/" + file, text);
  auto t = mtperf::read_topology(root.path.string());
  REQUIRE(t.adapters.size() == 2);
  const auto& atm0 = t.adapters[0];
  CHECK(atm0.name == "atm0");
  CHECK(atm0.type == LinkType::virtual_link);
  CHECK(atm0.kind == "clip");
  CHECK(atm0.mtu == 9180);
  CHECK(atm0.up);
  CHECK(atm0.emulated);
  CHECK(atm0.controller == "emu-pci0");
  CHECK(atm0.irq_cpus() == std::vector<int>{1});
  CHECK(t.adapters[1].name == "up0");
  CHECK(t.adapters[1].ifindex == 3);
  REQUIRE(t.controllers.size() == 1);
  CHECK(t.controllers[0].emulated);
  CHECK(t.numa_nodes == 0);
}

TEST_CASE("a root without sys/class/net is an error that names the path") {
  TempRoot root;
  CHECK_THROWS_WITH(mtperf::read_topology(root.path.string()), Catch::Contains("sys/class/net"));
}

TEST_CASE("the live host reads without error and addresses come from getifaddrs") {
  auto t = mtperf::read_topology();
  CHECK(t.find_adapter("lo") != nullptr);
  auto addrs = mtperf::interface_addresses();
  bool loopback = false;
  for (const auto& a : addrs)
    loopback |= a.interface == "lo" && a.address == "127.0.0.1";
  CHECK(loopback);
}
