// test::MemoryTransport: AN IN-MEMORY TRANSPORT FOR TESTS, never in the product. The transport
// interface (transports/api/) over test::MemoryEngine (tests/support/memory_engine.hpp): one
// network of byte pipes for the whole process, shared by the client's and the server's
// transport objects, so a test with the in-process control server runs end to end on it.
//
// Set-up as a network transport does it: the server's listener takes a "port" in a
// process-wide table (1..65535, none reused while it is listening); the client's connect finds
// the listener by the port READY named and proves itself with the test's cookie and the flow id
// (a mismatch is refused and counted in rejected()); the listener's wait_fd (an eventfd) turns
// readable when a connection waits, as a listening socket does. crr: the listener hands the
// client a target to open connections to, and the server the listener itself; its port answers
// until the client has taken the target, even after the server dropped the FlowListener.
//
// Option `refuse`: flow ids whose connects the client's side refuses, as a peer's closed port
// would (the set-up of a test where some flows cannot connect).
//
// Limits: 512 connections alive at once (pipes of 32 KiB each way), 256 crr listeners in the
// life of the process (test::MemoryNetwork does not reuse them); no datagrams (no UDP).
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include "platform/typed_options.hpp"
#include "tests/support/memory_engine.hpp"
#include "tests/transports/memory/register.hpp"
#include "transports/api/endpoint.hpp"
#include "transports/api/engine_host.hpp"

namespace mtperf::test {
namespace {

constexpr uint32_t kLinks = 512;
constexpr uint32_t kListeners = 256;
constexpr uint32_t kPipeBytes = 32 * 1024;

MemoryNetwork& network() {
  static MemoryNetwork net(kLinks, kListeners, kPipeBytes);
  return net;
}

class MemoryListener;

// A crr listener's target that outlived its FlowListener: the server released the listener
// itself as the flow's endpoint (a listening socket stays open the same way), so its port still
// answers until the client has taken the target.
struct ParkedTarget {
  uint32_t flow;
  uint64_t cookie;
  std::unique_ptr<Endpoint> target;
};

// The ports of the listeners alive in this process.
struct PortTable {
  std::mutex mu;
  std::map<uint16_t, MemoryListener*> by_port;
  std::map<uint16_t, ParkedTarget> parked;
  uint16_t next = 1;
};

PortTable& ports() {
  network();  // built first, so destroyed after the targets parked here
  static PortTable t;
  return t;
}

class MemoryListener final : public FlowListener {
 public:
  explicit MemoryListener(const FlowSetup& setup)
      : flow_(setup.flow), cookie_(setup.cookie), per_transaction_(setup.per_transaction) {
    efd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd_ < 0) throw std::runtime_error(std::string("memory: eventfd: ") + strerror(errno));
    if (per_transaction_) {
      auto pair = network().listener_pair();
      target_ = std::move(pair[0]);
      listener_ = std::move(pair[1]);
    }
    PortTable& t = ports();
    std::lock_guard lock(t.mu);
    for (uint32_t tries = 0; tries < 65535; ++tries) {
      uint16_t p = t.next;
      t.next = t.next == 65535 ? 1 : uint16_t(t.next + 1);
      if (!t.parked.count(p) && t.by_port.emplace(p, this).second) {
        port_ = p;
        return;
      }
    }
    ::close(efd_);
    throw std::runtime_error("memory: every port is listening");
  }
  ~MemoryListener() override {
    {
      PortTable& t = ports();
      std::lock_guard lock(t.mu);
      t.by_port.erase(port_);
      if (target_) t.parked.emplace(port_, ParkedTarget{flow_, cookie_, std::move(target_)});
    }
    ::close(efd_);
  }

  uint16_t port() const override { return port_; }
  int wait_fd() const override { return efd_; }

  std::unique_ptr<Endpoint> accept(int64_t) override {
    uint64_t n = 0;
    (void)::read(efd_, &n, sizeof n);
    std::lock_guard lock(ports().mu);
    if (waiting_.empty()) return nullptr;
    std::unique_ptr<Endpoint> ep = std::move(waiting_.front());
    waiting_.pop_front();
    if (!waiting_.empty()) wake();
    return ep;
  }
  std::unique_ptr<Endpoint> release() override { return std::move(listener_); }

  // With the port table's lock held: a client's connection to this listener.
  std::unique_ptr<Endpoint> connect(const FlowSetup& setup, const std::string& where) {
    if (setup.cookie != cookie_ || setup.flow != flow_) {
      ++rejected_;
      throw std::runtime_error("memory: flow " + std::to_string(setup.flow) + ": " + where +
                               " refused it (not that flow's listener, or another test's)");
    }
    if (per_transaction_) {
      if (!target_) throw std::runtime_error("memory: " + where + " has its client already");
      return std::move(target_);
    }
    auto ends = network().connect_pair();
    waiting_.push_back(std::move(ends[1]));
    wake();
    return std::move(ends[0]);
  }

 private:
  void wake() {
    uint64_t one = 1;
    (void)::write(efd_, &one, sizeof one);
  }

  uint32_t flow_;
  uint64_t cookie_;
  bool per_transaction_;
  int efd_ = -1;
  uint16_t port_ = 0;
  std::deque<std::unique_ptr<Endpoint>> waiting_;
  std::unique_ptr<Endpoint> target_, listener_;  // crr
};

std::vector<OptionInfo> memory_options() {
  OptionInfo refuse;
  refuse.key = "refuse";
  refuse.help =
      "flow ids whose connects fail, comma-separated (tests of flows that cannot connect)";
  return {refuse};
}

std::set<uint32_t> refused_flows(const TransportParams& params) {
  auto opts = memory_options();
  OptionValues v = parse_options("memory", opts, params);
  std::set<uint32_t> out;
  const std::string& list = v.text("refuse");
  for (size_t at = 0; at < list.size();) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    try {
      out.insert(uint32_t(std::stoul(list.substr(at, end - at))));
    } catch (const std::exception&) {
      throw std::invalid_argument("memory option refuse: '" + list + "' is not a list of flow ids");
    }
    at = end + 1;
  }
  return out;
}

class MemoryTransport final : public Transport, public EngineHost<MemoryEngine> {
 public:
  explicit MemoryTransport(std::set<uint32_t> refused) : refused_(std::move(refused)) {}
  Caps caps() const override { return MemoryEngine::memory_caps(); }
  std::unique_ptr<FlowListener> listen(const SockAddr&, const FlowSetup& setup) override {
    if (setup.proto != Proto::tcp) throw std::runtime_error("memory: carries no datagrams (UDP)");
    return std::make_unique<MemoryListener>(setup);
  }
  std::unique_ptr<Endpoint> connect(const SockAddr& server, const SockAddr&, const FlowSetup& setup,
                                    int64_t) override {
    if (refused_.count(setup.flow)) {
      throw std::runtime_error("connect to " + server.to_string() + ": Connection refused");
    }
    PortTable& t = ports();
    std::lock_guard lock(t.mu);
    auto it = t.by_port.find(server.port());
    if (it == t.by_port.end()) {
      auto parked = t.parked.find(server.port());
      if (parked != t.parked.end()) {
        if (setup.cookie != parked->second.cookie || setup.flow != parked->second.flow) {
          throw std::runtime_error("memory: flow " + std::to_string(setup.flow) + ": " +
                                   server.to_string() +
                                   " refused it (not that flow's listener, or another test's)");
        }
        std::unique_ptr<Endpoint> target = std::move(parked->second.target);
        t.parked.erase(parked);
        return target;
      }
      throw std::runtime_error("memory: flow " + std::to_string(setup.flow) +
                               ": nothing listens on " + server.to_string() +
                               " (connection refused)");
    }
    return it->second->connect(setup, server.to_string());
  }
  std::unique_ptr<MemoryEngine> make_engine(const EngineConfig& cfg) override {
    return std::make_unique<MemoryEngine>(network(), cfg);
  }

 private:
  std::set<uint32_t> refused_;
};

}  // namespace

const TransportEntry& memory_transport_entry() {
  static const TransportEntry e = [] {
    TransportEntry t;
    t.caps = MemoryEngine::memory_caps();
    t.probe = [](const std::string&) {
      ProbeResult p;
      p.usable = true;
      return p;
    };
    t.options = memory_options;
    t.create = [](const TransportParams& params) -> std::unique_ptr<Transport> {
      return std::make_unique<MemoryTransport>(refused_flows(params));
    };
    return t;
  }();
  return e;
}

}  // namespace mtperf::test
