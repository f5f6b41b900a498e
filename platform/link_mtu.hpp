#pragma once
// The MTU of network interfaces inside a named namespace (`ip -n NS link`), and a guard that
// sets it on several interfaces for a while and puts back what each had; a link's state (up,
// down) there. `mtperf sweep --mtu`
// sets a testbed's links for each column with it.
//
// Needs CAP_NET_ADMIN in the namespace (root) and iproute2. Thread-safety: one thread per guard.
#include <string>
#include <vector>

namespace mtperf {

// Bytes, 68..65535 (IPv4's minimum; a veth's maximum).
inline constexpr int kMinLinkMtu = 68, kMaxLinkMtu = 65535;

// The "mtu N" of one line of `ip -o link show`; throws std::runtime_error quoting the text when
// it has none.
int parse_ip_link_mtu(const std::string& text);

// The interface's MTU in bytes; throws std::runtime_error when ip fails or prints no MTU.
int link_mtu(const std::string& ns, const std::string& ifname);

// Sets the interface's MTU; throws std::runtime_error naming the command and quoting ip's
// stderr (an MTU the device refuses).
void set_link_mtu(const std::string& ns, const std::string& ifname, int mtu);

// Sets the interface administratively up or down (`ip -n NS link set dev IF up|down`): a link
// event in the middle of a test. Throws std::runtime_error as set_link_mtu.
void set_link_up(const std::string& ns, const std::string& ifname, bool up);

struct NamespacedLink {
  std::string ns, ifname;
};

// Reads every link's MTU when made (throws as link_mtu); set() changes them all; the destructor
// puts every link back to the MTU it had, also after set() failed halfway, and reports a link it
// cannot restore on stderr (a destructor does not throw).
class LinkMtuOverride {
 public:
  explicit LinkMtuOverride(std::vector<NamespacedLink> links);
  ~LinkMtuOverride();
  LinkMtuOverride(const LinkMtuOverride&) = delete;
  LinkMtuOverride& operator=(const LinkMtuOverride&) = delete;

  // Throws std::invalid_argument outside kMinLinkMtu..kMaxLinkMtu, std::runtime_error as
  // set_link_mtu.
  void set(int mtu);
  // The MTUs read when the guard was made, in the order of the links.
  const std::vector<int>& original() const { return original_; }

 private:
  std::vector<NamespacedLink> links_;
  std::vector<int> original_;
  bool changed_ = false;
};

}  // namespace mtperf
