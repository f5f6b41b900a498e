#pragma once
// Two empty named network namespaces, "near" and "far", with loopback up: the hosts of a test
// bed whose links are made by someone else (the emulated ATM link adds TUN/TAP devices). Named
// mtperf-<pid>-<tag>-near/-far like a Testbed, so `ip netns`, remove_testbed() and the state
// files treat both alike. Deleting the namespaces removes every device left inside them.
//
// Needs root. Set-up path: the constructor throws std::runtime_error naming the failed step,
// after removing whatever it had created.
#include <string>
#include <vector>

namespace mtperf {

class NetnsPair {
 public:
  // tag: [a-z0-9_-]{1,32}; "" = a per-process sequence number. lasting: the namespaces of a
  // testbed that outlives its command (`testbed up`, `atm up`), named mtperf-<family><tag>-near
  // and -far without the pid, so `ip netns exec mtperf-default-near ...` can be typed; family
  // ("atm-") keeps a veth testbed and an ATM line of the same name apart, as their state files are.
  explicit NetnsPair(const std::string& tag, bool lasting = false, const std::string& family = "");
  ~NetnsPair();  // deletes both namespaces, unless release() was called
  NetnsPair(const NetnsPair&) = delete;
  NetnsPair& operator=(const NetnsPair&) = delete;

  const std::string& near_ns() const { return near_; }
  const std::string& far_ns() const { return far_; }
  const std::vector<std::string>& created() const { return created_; }
  // Leaves the namespaces in place when this object goes (a testbed that outlives its command).
  void release() { created_.clear(); }

 private:
  void remove_all() noexcept;
  std::string near_, far_;
  std::vector<std::string> created_;
};

}  // namespace mtperf
