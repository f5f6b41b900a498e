#include "platform/tun.hpp"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "platform/exec.hpp"
#include "platform/netns.hpp"

namespace mtperf {
namespace {

constexpr const char* kTunPath = "/dev/net/tun";

void ip_in(const std::string& ns, std::vector<std::string> args) {
  args.insert(args.begin(), {"ip", "-n", ns});
  run_checked(args);
}

int open_in_netns(const TunOptions& o) {
  int fd = -1;
  // setns moves only the calling thread; run_in gives the open a thread of its own, so the
  // device is created inside the namespace and the caller's thread stays where it was.
  run_in(o.netns, [&] {
    fd = ::open(kTunPath, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
      throw std::runtime_error(std::string("cannot open ") + kTunPath + ": " +
                               std::strerror(errno));
    ifreq ifr{};
    ifr.ifr_flags = static_cast<short>((o.tap ? IFF_TAP : IFF_TUN) | IFF_NO_PI);
    std::strncpy(ifr.ifr_name, o.name.c_str(), IFNAMSIZ - 1);
    if (::ioctl(fd, TUNSETIFF, &ifr) != 0) {
      int saved = errno;
      ::close(fd);
      fd = -1;
      throw std::runtime_error("TUNSETIFF " + o.name + " in " + o.netns + ": " +
                               std::strerror(saved));
    }
  });
  return fd;
}

}  // namespace

TunDevice::TunDevice(const TunOptions& o) : name_(o.name), netns_(o.netns) {
  if (o.name.empty() || o.name.size() >= IFNAMSIZ)
    throw std::runtime_error("TUN/TAP name '" + o.name + "' must have 1.." +
                             std::to_string(IFNAMSIZ - 1) + " characters");
  if (o.mtu < 68 || o.mtu > 65535)
    throw std::runtime_error("TUN/TAP " + o.name + ": MTU " + std::to_string(o.mtu) +
                             " is outside 68..65535");
  fd_ = open_in_netns(o);
  try {
    ip_in(o.netns, {"link", "set", "dev", o.name, "mtu", std::to_string(o.mtu)});
    if (o.txqueuelen > 0)
      ip_in(o.netns, {"link", "set", "dev", o.name, "txqueuelen", std::to_string(o.txqueuelen)});
    if (o.tap && !o.mac.empty()) ip_in(o.netns, {"link", "set", "dev", o.name, "address", o.mac});
    if (!o.alias.empty()) ip_in(o.netns, {"link", "set", "dev", o.name, "alias", o.alias});
    if (!o.address.empty()) ip_in(o.netns, {"addr", "add", o.address, "dev", o.name});
    ip_in(o.netns, {"link", "set", "dev", o.name, "up"});
  } catch (...) {
    close();  // a non-persistent device vanishes with its descriptor
    throw;
  }
}

TunDevice::~TunDevice() {
  close();
}

TunDevice::TunDevice(TunDevice&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      name_(std::move(other.name_)),
      netns_(std::move(other.netns_)) {}

TunDevice& TunDevice::operator=(TunDevice&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    name_ = std::move(other.name_);
    netns_ = std::move(other.netns_);
  }
  return *this;
}

void TunDevice::close() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

DeviceDrops device_drops(const std::string& netns, const std::string& name) {
  const std::string text =
      run_checked({"ip", "-n", netns, "-s", "-j", "link", "show", "dev", name});
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array() || j.empty() || !j[0].contains("stats64"))
    throw std::runtime_error("ip -s -j link show dev " + name + " in " + netns +
                             ": no statistics in its output");
  const nlohmann::json& st = j[0]["stats64"];
  DeviceDrops d;
  d.tx_dropped = st.value("tx", nlohmann::json::object()).value("dropped", std::uint64_t{0});
  d.rx_dropped = st.value("rx", nlohmann::json::object()).value("dropped", std::uint64_t{0});
  return d;
}

bool can_create_tun(std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (::geteuid() != 0) return fail("TUN/TAP devices need root (effective uid is not 0)");
  int fd = ::open(kTunPath, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return fail(std::string(kTunPath) + " cannot be opened: " + std::strerror(errno) +
                " (load the tun module: modprobe tun)");
  ::close(fd);
  return true;
}

}  // namespace mtperf
