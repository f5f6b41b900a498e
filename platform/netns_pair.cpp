#include "platform/netns_pair.hpp"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "platform/exec.hpp"
#include "platform/netns.hpp"

namespace mtperf {

NetnsPair::NetnsPair(const std::string& tag, bool lasting, const std::string& family) {
  static std::atomic<int> sequence{0};
  std::string t = tag;
  if (t.empty()) {
    t = fmt::format("atm{}", sequence.fetch_add(1));
  } else {
    check_testbed_name(t);
  }
  const std::string base = lasting && !tag.empty()
                               ? fmt::format("{}{}{}-", kTestbedPrefix, family, t)
                               : fmt::format("{}{}-{}-", kTestbedPrefix, ::getpid(), t);
  near_ = base + "near";
  far_ = base + "far";
  std::string why;
  if (!can_create_namespaces(&why)) throw std::runtime_error("test hosts: " + why);
  try {
    for (const auto& ns : {near_, far_}) {
      if (std::filesystem::exists("/run/netns/" + ns))
        throw std::runtime_error("namespace " + ns +
                                 " already exists; remove it with `ip netns del " + ns + "`");
      run_checked({"ip", "netns", "add", ns});
      created_.push_back(ns);
      run_checked({"ip", "-n", ns, "link", "set", "dev", "lo", "up"});
    }
  } catch (...) {
    remove_all();
    throw;
  }
}

NetnsPair::~NetnsPair() {
  remove_all();
}

void NetnsPair::remove_all() noexcept {
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    try {
      run_program({"ip", "netns", "del", *it});
    } catch (...) {
      // Never throw from here; a leftover shows in `ip netns list` under the mtperf- prefix.
    }
  }
  created_.clear();
}

}  // namespace mtperf
