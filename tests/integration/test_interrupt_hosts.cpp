// Ctrl-C during runs that build their own hosts: every namespace (and the emulated ATM line's
// devices and daemons with them) is removed before mtperf exits 130.
#include <filesystem>

#include "tests/integration/interrupt_support.hpp"
#include "tests/support/namespaces.hpp"

using namespace mtperf::test;

MTPERF_TEST_REQUIRES(why_no_namespaces("runs over their own testbeds"));
MTPERF_TEST_REQUIRES(std::filesystem::exists("/dev/net/tun") ? ""
                                                             : "no /dev/net/tun (modprobe tun)");

namespace {

// Namespaces of the child `pid` still present (the testbeds name theirs mtperf-PID-...).
std::vector<std::string> namespaces_of(pid_t pid) {
  std::vector<std::string> left;
  std::string prefix = "mtperf-" + std::to_string(pid) + "-";
  if (!std::filesystem::exists("/run/netns")) return left;
  for (auto& e : std::filesystem::directory_iterator("/run/netns")) {
    std::string name = e.path().filename();
    if (name.rfind(prefix, 0) == 0) left.push_back(name);
  }
  return left;
}

void interrupt_and_check(const std::vector<std::string>& args, double after_s, int signal) {
  Child c = spawn_mtperf(args);
  usleep(useconds_t(after_s * 1e6));
  kill(c.pid, signal);
  int rc = wait_exit(c, 20);
  std::string out = output_of(c);
  INFO(out);
  CHECK(rc == 130);
  CHECK(out.find("INTERRUPTED") != std::string::npos);
  CHECK(namespaces_of(c.pid).empty());
}

}  // namespace

TEST_CASE("SIGINT during a run over a testbed built for it removes the testbed") {
  interrupt_and_check({"run", "--testbed", "intr", "-l", "30", "--warmup", "0.2", "-q"}, 4, SIGINT);
}

TEST_CASE("SIGTERM during -T clip removes the emulated ATM line's namespaces") {
  interrupt_and_check({"run", "-T", "clip", "-l", "30", "--warmup", "0.2", "-q"}, 6, SIGTERM);
}

TEST_CASE("SIGINT during a sweep over its own testbed removes the testbed") {
  Child c =
      spawn_mtperf({"sweep", "--testbed", "--adapters", "1..2", "-l", "10", "--warmup", "0.2"});
  usleep(4'000'000);
  kill(c.pid, SIGINT);
  int rc = wait_exit(c, 30);
  output_of(c);
  CHECK(rc == 130);
  CHECK(namespaces_of(c.pid).empty());
}
