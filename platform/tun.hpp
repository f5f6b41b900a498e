#pragma once
// TUN (layer 3, IP packets) and TAP (layer 2, Ethernet frames) devices created inside a named
// network namespace, for the emulated ATM link. The device is not persistent: it exists while
// its file descriptor is open, so closing the TunDevice (or deleting the namespace) removes it.
//
// The descriptor is opened on a thread that entered the namespace, so the device is born there;
// afterwards any thread may read and write it. Reads and writes carry one packet (TUN) or one
// frame (TAP) each, without the packet-information header (IFF_NO_PI). The descriptor is
// non-blocking.
//
// Needs root (CAP_NET_ADMIN) and /dev/net/tun. Set-up path only: functions throw
// std::runtime_error naming the device and the step that failed.
#include <cstdint>
#include <string>

namespace mtperf {

struct TunOptions {
  std::string netns;      // /run/netns/<netns>; must exist
  std::string name;       // interface name, 1..15 characters
  bool tap = false;       // false: TUN (IP packets); true: TAP (Ethernet frames)
  int mtu = 1500;         // bytes, 68..65535
  std::string address;    // "10.232.0.1/24"; "" = none
  std::string mac;        // TAP only: "02:..:..", "" = kernel's choice
  std::string alias;      // ifalias, e.g. "mtperf-emu controller=emu0 cpus=1 kind=clip"
  int txqueuelen = 1000;  // packets the kernel queues for the reader; 0 keeps the default
};

class TunDevice {
 public:
  TunDevice() = default;
  // Creates, configures and brings up the device; on failure nothing is left behind.
  explicit TunDevice(const TunOptions& options);
  ~TunDevice();
  TunDevice(TunDevice&& other) noexcept;
  TunDevice& operator=(TunDevice&& other) noexcept;
  TunDevice(const TunDevice&) = delete;
  TunDevice& operator=(const TunDevice&) = delete;

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }
  const std::string& netns() const { return netns_; }
  // Closes the descriptor, which removes the device.
  void close() noexcept;

 private:
  int fd_ = -1;
  std::string name_, netns_;
};

// The kernel's drop counters of a device in a namespace (from `ip -s -j link`): tx_dropped
// counts packets the device's queue had no room for (a TUN/TAP queue overflowing because its
// reader is slower than the senders), rx_dropped packets the stack refused after a write.
struct DeviceDrops {
  std::uint64_t tx_dropped = 0, rx_dropped = 0;
};
// Throws std::runtime_error when the device cannot be read.
DeviceDrops device_drops(const std::string& netns, const std::string& name);

// Whether this process can create TUN/TAP devices; when not, *why says what is missing.
bool can_create_tun(std::string* why = nullptr);

}  // namespace mtperf
