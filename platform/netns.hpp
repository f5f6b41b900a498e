#pragma once
// Test hosts built from network namespaces: a "near" (client) and a "far" (server) namespace
// joined by N veth pairs, one /24 per pair from 10.231.0.0/16. Those addresses are assigned only
// inside the namespaces this code creates, so test traffic never reaches a real network.
//
//   near ns  mtperf-[<pid>-]<tag>-near      far ns  mtperf-[<pid>-]<tag>-far
//     lo up                                   lo up
//     mtperf<i>n 10.231.<i>.1/24 <──veth──>   mtperf<i>f 10.231.<i>.2/24   (i = 0..N-1)
//
// The veth ends are created directly inside the namespaces, never in the caller's namespace, so
// deleting the two namespaces removes everything a Testbed made. The namespaces are named
// (`ip netns`, /run/netns) so other processes can enter them and `ip -n` can inspect them.
//
// Needs CAP_SYS_ADMIN and CAP_NET_ADMIN (root) and iproute2 (ip, tc). Thread-safety: a Testbed
// is used from one thread at a time; run_in/exec_in may run concurrently from several threads.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "platform/netns_pair.hpp"

namespace mtperf {

inline constexpr int kMaxTestbedAdapters = 64;
inline constexpr const char* kTestbedPrefix = "mtperf-";
inline constexpr const char* kTestbedStateDir = "/run/mtperf";

struct TestbedOptions {
  int adapters = 1;       // veth pairs, 1..kMaxTestbedAdapters
  int mtu = 0;            // bytes, 68..65535; 0 keeps the veth default (1500)
  uint64_t rate_bps = 0;  // tbf shaping on both ends of every pair, bits/s; 0 = unshaped
  std::string tag;        // part of the namespace names; "" = a per-process sequence number
  bool lasting = false;   // outlives its command: namespaces mtperf-<tag>-near/-far, no pid
};

struct TestbedLink {
  int index = 0;
  std::string near_if, far_if;      // interface names inside the namespaces
  std::string near_addr, far_addr;  // IPv4, no prefix length
  int prefix_length = 24;
  std::string subnet;      // "10.231.<i>.0/24"
  std::string controller;  // emulated PCI controller of the adapter; "" for veth
  std::vector<int> cpus;   // its (emulated) interrupt CPUs; empty for veth
};

// Two test hosts and the links between them, whatever built them: a veth Testbed or a line a
// transport brings (transports/api/line.hpp). `mtperf run --testbed` runs the client in near_ns
// and the server in far_ns, flows spread over the links.
struct TestHosts {
  std::string kind = "veth";         // what built them: "veth", or the transport of the line
  std::string device_kind = "veth";  // what the links' devices are (topology's Adapter::kind)
  std::string near_ns, far_ns;
  std::vector<TestbedLink> links;
};
// From a state object as Testbed::state() writes it (and a transport's line, with its "kind");
// throws std::invalid_argument naming the field that is missing or malformed.
TestHosts hosts_from_state(const nlohmann::json& state);
nlohmann::json links_to_json(const std::vector<TestbedLink>& links);

// "1g", "100mbit", "155.52mbit", "622080000" → bits/s. Throws std::invalid_argument naming the
// text; accepts 8 kbit/s .. 400 Gbit/s.
uint64_t parse_rate(const std::string& text);

class Testbed {
 public:
  // Builds everything or, on any failure, removes what it had made and throws
  // std::runtime_error saying which step failed.
  explicit Testbed(const TestbedOptions& options);
  ~Testbed();  // removes exactly what was made, unless release() was called
  Testbed(const Testbed&) = delete;
  Testbed& operator=(const Testbed&) = delete;

  const std::string& near_ns() const { return hosts_->near_ns(); }
  const std::string& far_ns() const { return hosts_->far_ns(); }
  const std::vector<TestbedLink>& links() const { return links_; }
  const TestbedOptions& options() const { return options_; }
  TestHosts hosts() const { return {"veth", "veth", near_ns(), far_ns(), links_}; }

  // Hands ownership of the namespaces to the caller (`mtperf testbed up`): the destructor then
  // leaves them in place, and remove_testbed(state()) removes them later.
  void release() { hosts_->release(); }
  // What this testbed made, as written to the state file.
  nlohmann::json state() const;

 private:
  void build(const std::string& tag);

  TestbedOptions options_;
  std::unique_ptr<NetnsPair> hosts_;  // the two namespaces; deleting them removes the veths
  std::vector<TestbedLink> links_;
};

// Moves the calling thread into /run/netns/<ns>; threads it starts afterwards are born there.
// Only for threads made for that purpose (run_in, a server thread of a testbed run). Throws
// std::runtime_error when the namespace cannot be entered.
void enter_netns(const std::string& ns);

// Runs fn on a new thread that has entered /run/netns/<ns> (setns, CLONE_NEWNET) and waits for
// it; sockets fn creates belong to that namespace and stay usable from any thread afterwards.
// An exception thrown by fn is rethrown here. Throws std::runtime_error if ns cannot be entered.
void run_in(const std::string& ns, const std::function<void()>& fn);

// Runs argv in the namespace as a child process (fork, setns, exec) and returns its exit code;
// its output goes to ours.
int exec_in(const std::string& ns, const std::vector<std::string>& argv);

// Traffic counters of the interfaces of the calling thread's network namespace
// (/proc/thread-self/net/dev), by interface name. Use inside run_in() for a testbed's host.
struct LinkCounters {
  uint64_t rx_bytes = 0, rx_packets = 0, tx_bytes = 0, tx_packets = 0;
};
std::map<std::string, LinkCounters> link_counters();
// The same from the text of a net/dev file; throws std::runtime_error naming the bad line.
std::map<std::string, LinkCounters> parse_net_dev(const std::string& text);

// Whether this process can build a Testbed: effective root, a working unshare(CLONE_NEWNET), and
// the ip command. When it cannot, *why (if given) says what is missing.
bool can_create_namespaces(std::string* why = nullptr);

// Namespaces (from `ip netns list`) whose names start with prefix.
std::vector<std::string> list_namespaces(const std::string& prefix = kTestbedPrefix);

// Removes the namespaces listed in a state() object (only names starting with kTestbedPrefix);
// returns those it removed. Namespaces already gone are not an error.
std::vector<std::string> remove_testbed(const nlohmann::json& state);

// `mtperf testbed up/down/status` persistence: state files <dir>/testbed-<name>.json.
std::string testbed_state_path(const std::string& name, const std::string& dir = kTestbedStateDir);
void write_testbed_state(const std::string& name, const nlohmann::json& state,
                         const std::string& dir = kTestbedStateDir);
nlohmann::json read_testbed_state(const std::string& name,
                                  const std::string& dir = kTestbedStateDir);
std::vector<std::string> list_testbed_states(const std::string& dir = kTestbedStateDir);
// Checks a testbed name: 1-32 of [a-z0-9_-]; throws std::invalid_argument.
void check_testbed_name(const std::string& name);

}  // namespace mtperf
