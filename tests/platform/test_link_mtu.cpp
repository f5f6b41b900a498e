// Link MTUs in a namespace: the parser of `ip -o link show`, and the guard `sweep --mtu` uses,
// which sets a testbed's links and puts back what each had. Needs root; skipped (exit 77)
// otherwise.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "platform/link_mtu.hpp"
#include "platform/netns.hpp"
#include "tests/support/namespaces.hpp"

MTPERF_TEST_REQUIRES(mtperf::test::why_no_namespaces("link MTU tests"));

using namespace mtperf;

TEST_CASE("the MTU of one line of ip -o link show") {
  CHECK(parse_ip_link_mtu(
            "2: mtperf0n@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc "
            "noqueue state UP mode DEFAULT group default qlen 1000\\    link/ether") == 1500);
  CHECK(parse_ip_link_mtu("1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue") == 65536);
  CHECK_THROWS_AS(parse_ip_link_mtu("2: eth0: <UP> qdisc noqueue"), std::runtime_error);
  CHECK_THROWS_AS(parse_ip_link_mtu("2: mtu0: <UP> mtux 1500"), std::runtime_error);
}

TEST_CASE("the guard sets every link and puts back each one's own MTU") {
  TestbedOptions options;
  options.adapters = 2;
  options.mtu = 1400;
  Testbed bed(options);
  std::vector<NamespacedLink> links;
  for (const auto& l : bed.links())
    links.push_back({bed.near_ns(), l.near_if});
  links.push_back({bed.far_ns(), bed.links()[0].far_if});
  set_link_mtu(bed.far_ns(), bed.links()[1].far_if, 1300);  // not guarded: left alone
  {
    LinkMtuOverride guard(links);
    CHECK(guard.original() == std::vector<int>{1400, 1400, 1400});
    guard.set(9000);
    for (const auto& l : links)
      CHECK(link_mtu(l.ns, l.ifname) == 9000);
    guard.set(1500);
    CHECK(link_mtu(links[2].ns, links[2].ifname) == 1500);
    CHECK_THROWS_AS(guard.set(67), std::invalid_argument);
    CHECK_THROWS_AS(guard.set(65536), std::invalid_argument);
  }
  for (const auto& l : links)
    CHECK(link_mtu(l.ns, l.ifname) == 1400);
  CHECK(link_mtu(bed.far_ns(), bed.links()[1].far_if) == 1300);
  // An interface that is not there: the guard cannot read it, and says so.
  CHECK_THROWS_AS(LinkMtuOverride({{bed.near_ns(), "nosuch0"}}), std::runtime_error);
}

TEST_CASE("a failed run inside the guard still restores the MTU") {
  Testbed bed(TestbedOptions{});
  const NamespacedLink link{bed.near_ns(), bed.links()[0].near_if};
  try {
    LinkMtuOverride guard({link});
    guard.set(4000);
    throw std::runtime_error("the run failed");
  } catch (const std::runtime_error&) {
  }
  CHECK(link_mtu(link.ns, link.ifname) == 1500);
}

TEST_CASE("parse_ip_link_mtu: the mtu field only as whole words, at most 6 digits") {
  CHECK(parse_ip_link_mtu("3: v0@if2: <UP>\tmtu 9000\tqdisc noqueue") == 9000);
  CHECK(parse_ip_link_mtu("mtu 1500") == 1500);
  CHECK(parse_ip_link_mtu("xmtu 7 mtu 68 qdisc") == 68);
  CHECK_THROWS_AS(parse_ip_link_mtu("2: eth0: <UP> mtu 1234567 qdisc"), std::runtime_error);
  CHECK_THROWS_AS(parse_ip_link_mtu("2: eth0: <UP> mtu 1500x qdisc"), std::runtime_error);
  CHECK_THROWS_AS(parse_ip_link_mtu("2: eth0: <UP> mtu  qdisc"), std::runtime_error);
}
