// The rdma transport's probe over the fixture trees of tests/fixtures/rdma: the exact reason
// when RDMA is unusable, the features when it is.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "verbs/probe.hpp"

namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) {
  return std::string(MTPERF_FIXTURES) + "/rdma/" + name;
}

using Features = std::vector<std::string>;

}  // namespace

TEST_CASE("probe: a kernel without RDMA") {
  auto r = mtperf::rdma_probe(fixture("no-rdma"));
  CHECK_FALSE(r.usable);
  CHECK_THAT(r.why,
             Catch::StartsWith("this kernel has no RDMA support (no /sys/class/infiniband); "));
  CHECK_THAT(r.why, Catch::Contains("rdma_rxe"));
  CHECK(r.features.empty());
}

TEST_CASE("probe: RDMA in the kernel but no device names a real interface for soft-RoCE") {
  auto r = mtperf::rdma_probe(fixture("no-device"));
  CHECK_FALSE(r.usable);
  CHECK_THAT(r.why, Catch::StartsWith("no RDMA device"));
  CHECK_THAT(r.why, Catch::Contains("rdma link add rxe0 type rxe netdev eth0`"));
}

TEST_CASE("probe: no device and no Ethernet interface leaves IF to the user") {
  // Only lo, and an empty sys/class/infiniband.
  fs::path root = fs::temp_directory_path() / ("mtperf-probe-" + std::to_string(::getpid()));
  fs::create_directories(root / "sys/class/infiniband");
  fs::create_directories(root / "sys/devices/virtual/net/lo");
  std::ofstream(root / "sys/devices/virtual/net/lo/type") << "772\n";
  fs::create_directories(root / "sys/class/net");
  fs::create_symlink("../../devices/virtual/net/lo", root / "sys/class/net/lo");
  auto r = mtperf::rdma_probe(root.string());
  fs::remove_all(root);
  CHECK_FALSE(r.usable);
  CHECK_THAT(r.why, Catch::Contains("netdev IF` with IF an Ethernet interface of this host"));
}

TEST_CASE("probe: a device without an ACTIVE port names every port's state") {
  auto r = mtperf::rdma_probe(fixture("rxe-down"));
  CHECK_FALSE(r.usable);
  CHECK_THAT(r.why,
             Catch::StartsWith("no ACTIVE RDMA port: rxe0 port 1 DOWN (Disabled, over eth0)"));
  CHECK(r.features.empty());
}

TEST_CASE("probe: an ACTIVE soft-RoCE port with RoCE v2") {
  auto r = mtperf::rdma_probe(fixture("rxe-active"));
  CHECK(r.usable);
  CHECK(r.why.empty());
  CHECK(r.features == Features{"rxe0", "ethernet", "rocev2"});
}

TEST_CASE("probe: a two-port device, RoCE and InfiniBand") {
  auto r = mtperf::rdma_probe(fixture("mlx5x2"));
  CHECK(r.usable);
  CHECK(r.features == Features{"mlx5_0", "ethernet", "infiniband", "rocev2"});
}

namespace {

// A host whose only RDMA devices are `devs` (name, node_type), each with one ACTIVE Ethernet
// port.
using Devs = std::vector<std::pair<std::string, std::string>>;

struct FakeHost {
  fs::path root;
  explicit FakeHost(const Devs& devs) {
    static int n = 0;
    root = fs::temp_directory_path() /
           ("mtperf-probe-kind-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    for (auto& [name, type] : devs) {
      fs::path d = root / "sys/class/infiniband" / name;
      fs::create_directories(d / "ports/1");
      std::ofstream(d / "node_type") << type << "\n";
      std::ofstream(d / "ports/1/state") << "4: ACTIVE\n";
      std::ofstream(d / "ports/1/phys_state") << "5: LinkUp\n";
      std::ofstream(d / "ports/1/link_layer") << "Ethernet\n";
    }
  }
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;
  ~FakeHost() { fs::remove_all(root); }
};

}  // namespace

TEST_CASE("probe: an iWARP device alone is refused, with the reason") {
  FakeHost h(Devs{{"siw0", "4: RNIC"}});
  auto r = mtperf::rdma_probe(h.root.string());
  CHECK_FALSE(r.usable);
  CHECK_THAT(r.why, Catch::StartsWith("no RDMA device this transport can use: siw0 is iWARP "
                                      "(node type RNIC)"));
  CHECK_THAT(r.why, Catch::Contains("immediate data"));
  CHECK(r.features.empty());
}

TEST_CASE("probe: a device without RC or rdma_cm (EFA) is refused, with the reason") {
  FakeHost h(Devs{{"efa_0", "7: unspecified"}});
  auto r = mtperf::rdma_probe(h.root.string());
  CHECK_FALSE(r.usable);
  CHECK_THAT(r.why, Catch::Contains("efa_0 (node type unspecified) has no reliable-connected"));
}

TEST_CASE("probe: beside a RoCE device, an iWARP one is left out of the features") {
  FakeHost h(Devs{{"irdma0", "4: RNIC"}, {"mlx5_0", "1: CA"}});
  auto r = mtperf::rdma_probe(h.root.string());
  CHECK(r.usable);
  CHECK(r.features == Features{"mlx5_0", "ethernet"});
}

TEST_CASE("probe: this host answers, and a reason comes with every refusal") {
  auto r = mtperf::rdma_probe("/");
  if (!r.usable) CHECK_FALSE(r.why.empty());
}
