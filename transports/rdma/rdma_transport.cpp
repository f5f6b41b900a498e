// The rdma transport: registry entry, set-up, the worker's engine, what the report shows.
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "platform/rdma_devices.hpp"
#include "platform/topology.hpp"
#include "transports/api/engine_host.hpp"
#include "transports/rdma/engine.hpp"
#include "transports/rdma/oob.hpp"
#include "transports/rdma/perftest_peer.hpp"
#include "transports/rdma/register.hpp"
#include "transports/rdma/settings.hpp"
#include "transports/rdma/setup.hpp"
#include "verbs/async_events.hpp"
#include "verbs/flow_math.hpp"
#include "verbs/fork_safety.hpp"
#include "verbs/probe.hpp"

namespace mtperf {
namespace rdma {
namespace {

// rdma_cm cannot route a loopback address over a RoCE device (nor can soft-RoCE on an Ethernet
// interface reach it). A loopback address means this host, and so does an address of one of its
// RDMA ports: both ends of a run on one host (no -H, or -H 127.0.0.1) use the first ACTIVE port
// with an address, of the same family where it has one. Unchanged when there is none: rdma_cm
// then says why.
SockAddr over_rdma(const SockAddr& a) {
  if (!a.is_loopback()) return a;
  const InterfaceAddress* pick = nullptr;
  const std::vector<InterfaceAddress> ports =
      rdma_port_addresses(read_rdma_devices("/"), interface_addresses());
  for (const InterfaceAddress& ia : ports) {
    if (ia.family == a.family()) return numeric_address(ia.address, a.port());
    if (pick == nullptr) pick = &ia;
  }
  return pick ? numeric_address(pick->address, a.port()) : a;
}

class RdmaTransport final : public Transport, public EngineHost<RdmaEngine> {
 public:
  // Fork support first: no verbs call of this process may come before it (fork_safety.hpp).
  explicit RdmaTransport(const RdmaSettings& s) : set_(s), fork_error_(ensure_fork_safe()) {}
  ~RdmaTransport() override {
    workers_.clear();  // every PD, CQ and MR before the devices' last reference
    watcher_.reset();  // its events acknowledged, before the contexts go
    if (devices_) {
      rdma_free_devices(devices_);
      // librdmacm keeps a device open until it learns, on a later listing, that the device is
      // gone: list now, so that a device removed during the test is closed now, not when this
      // process (a long-lived mtperf serve) next runs rdma. Until then its removal would wait.
      if (ibv_context** now = rdma_get_devices(nullptr)) rdma_free_devices(now);
    }
  }
  Caps caps() const override { return rdma_caps(set_); }

  std::unique_ptr<FlowListener> listen(const SockAddr& where, const FlowSetup& setup) override {
    check(setup);
    if (set_.connect == ConnectMode::oob)
      return oob_listen(over_rdma(where), setup, resources(setup));
    return rdma_listen(over_rdma(where), setup, resources(setup));
  }
  std::unique_ptr<Endpoint> connect(const SockAddr& server, const SockAddr& source,
                                    const FlowSetup& setup, int64_t deadline_ns) override {
    check(setup);
    if (set_.connect == ConnectMode::oob) {
      return oob_connect(over_rdma(server), source, setup, resources(setup), deadline_ns);
    }
    return rdma_connect(over_rdma(server), source, setup, resources(setup), deadline_ns);
  }

  std::unique_ptr<RdmaEngine> make_engine(const EngineConfig& cfg) override {
    EngineMode mode;
    mode.read_size = cfg.stream_msg_size;
    mode.memory_poll = set_.verb == Verb::write && cfg.request_response;
    std::shared_ptr<WorkerRes> res;
    {
      std::lock_guard lock(mu_);
      if (auto it = workers_.find(cfg.worker); it != workers_.end()) res = it->second;
      memory_poll_ |= mode.memory_poll;
    }
    if (!res) throw std::runtime_error("rdma: no connection was set up for this worker");
    if (cfg.buffers != res->pool().count() || cfg.buffer_size != res->pool().size()) {
      throw std::runtime_error("rdma: the worker's flows differ from those set up for it");
    }
    return std::make_unique<RdmaEngine>(res, mode);
  }

  void engine_done(const RdmaEngine& engine) override {
    std::lock_guard lock(mu_);
    const EngineCounters& c = engine.counters();
    ctr_.signalled += c.signalled;
    ctr_.unsignaled += c.unsignaled;
    ctr_.chains += c.chains;
    ctr_.credit_waits += c.credit_waits;
    ctr_.credit_writes += c.credit_writes;
    ctr_.drained += c.drained;
    ctr_.drain_timeouts += c.drain_timeouts;
    Caps ec = engine.caps();
    inline_ = inline_ < 0 ? int64_t(ec.max_inline) : std::min<int64_t>(inline_, ec.max_inline);
  }

  std::map<std::string, std::string> effective_settings() const override;

  uint64_t engine_overhead_bytes(const EngineConfig& cfg) const override {
    Layout l = make_layout(shape_of(cfg, false), set_);
    // What the provider allocates for the queues, per device used: a send-queue entry of up to
    // 256 bytes (inline data, two scatter/gather entries), 64 per receive and completion.
    uint64_t queues = uint64_t(l.conns) * (uint64_t(l.sq_depth) * 256 + l.recv_per_qp * 64) +
                      uint64_t(l.srq_depth) * 64 + cq_entries(l) * 64;
    return l.area_bytes() + RdmaEngine::table_bytes(l, cfg) + queues;
  }

 private:
  // effective_settings' parts, under mu_.
  std::string comp_vectors() const;
  void add_granted(std::map<std::string, std::string>& m) const;
  void add_counts(std::map<std::string, std::string>& m) const;
  void check(const FlowSetup& s) const {
    if (s.proto == Proto::udp) {
      throw std::runtime_error("rdma carries RC connections: -p udp makes no sense; use -p tcp");
    }
    std::string why = verb_refusal(set_.verb, s.request_response, s.per_transaction);
    if (why.empty()) why = connect_refusal(set_.connect, s.per_transaction);
    if (!why.empty()) throw std::runtime_error(why);
  }
  std::shared_ptr<WorkerRes> resources(const FlowSetup& s) {
    std::lock_guard lock(mu_);
    if (!devices_) {
      // Holds librdmacm's device contexts open for as long as our PDs and CQs live on them.
      devices_ = rdma_get_devices(nullptr);
      before_ = read_rdma_counters("/");
      std::vector<ibv_context*> contexts;
      for (ibv_context** c = devices_; c && *c; ++c)
        contexts.push_back(*c);
      if (!contexts.empty()) watcher_ = std::make_unique<AsyncWatcher>(contexts, faults_);
    }
    auto& w = workers_[s.worker];
    if (!w) {
      w = std::make_shared<WorkerRes>(s.engine, set_, s.per_transaction);
      w->set_faults(faults_);
    }
    return w;
  }

  RdmaSettings set_;
  mutable std::mutex mu_;
  std::map<uint32_t, std::shared_ptr<WorkerRes>> workers_;
  ibv_context** devices_ = nullptr;
  std::shared_ptr<FaultBoard> faults_ = std::make_shared<FaultBoard>();
  std::unique_ptr<AsyncWatcher> watcher_;  // reads devices_' asynchronous events
  std::vector<RdmaPortCounters> before_;
  EngineCounters ctr_;
  int64_t inline_ = -1;
  bool memory_poll_ = false;
  std::string fork_error_;  // "" once fork support is on (fork_safety.hpp)
};

std::map<std::string, std::string> RdmaTransport::effective_settings() const {
  std::lock_guard lock(mu_);
  std::map<std::string, std::string> m;
  m["verb"] = std::string(to_string(set_.verb));
  m["connect"] = std::string(to_string(set_.connect));
  if (set_.gid_index != kUnset) m["gid_index"] = std::to_string(set_.gid_index);
  m["signal"] = std::to_string(set_.signal_every);
  m["tx_depth"] = std::to_string(set_.tx_depth);
  m["inline"] = inline_ >= 0                       ? std::to_string(inline_)
                : set_.inline_cap == kInlineDevice ? "device"
                : set_.inline_cap == kInlineAuto   ? "auto"
                                                   : std::to_string(set_.inline_cap);
  if (!fork_error_.empty()) m["fork_safety"] = fork_error_;
  if (set_.tos != kUnset) m["tos"] = std::to_string(set_.tos);
  if (set_.ack_timeout != kUnset) m["ack_timeout"] = std::to_string(set_.ack_timeout);
  const std::string vectors = comp_vectors();
  if (!vectors.empty()) m["comp_vectors"] = vectors;
  if (!workers_.empty()) add_granted(m);
  if (memory_poll_) m["wait"] = "spin (request/response over RDMA WRITE polls memory)";
  add_counts(m);
  if (devices_) {
    uint64_t rnr = rnr_count(rdma_counter_deltas(before_, read_rdma_counters("/")));
    m["rnr_counters"] = std::to_string(rnr);
  }
  return m;
}

// Each worker's completion vector, per device: beside the IRQ CPUs of --pin irq, which vector's
// interrupt wakes which worker under --wait block.
std::string RdmaTransport::comp_vectors() const {
  std::string vectors;
  for (auto& [worker, res] : workers_) {
    for (const std::string& v : res->vectors_text())
      vectors += (vectors.empty() ? "worker " : ", worker ") + std::to_string(worker) + ": " + v;
  }
  return vectors;
}

// What the devices granted the first worker (every worker's layout is the same).
void RdmaTransport::add_granted(std::map<std::string, std::string>& m) const {
  const WorkerRes& res = *workers_.begin()->second;
  res.add_granted(m, !res.config().request_response);
}

// The engines' counts: signalled requests, credit waits, queue pairs drained.
void RdmaTransport::add_counts(std::map<std::string, std::string>& m) const {
  if (ctr_.chains > 0) {
    m["signalled"] = std::to_string(ctr_.signalled) + " of " +
                     std::to_string(ctr_.signalled + ctr_.unsignaled) + " requests in " +
                     std::to_string(ctr_.chains) + " chains";
  }
  m["credit_waits"] = std::to_string(ctr_.credit_waits);
  if (ctr_.credit_writes) m["credit_writes"] = std::to_string(ctr_.credit_writes);
  if (ctr_.drained) {
    // Queue pairs on the shared receive queue, destroyed after their last receive: how many
    // went without IBV_EVENT_QP_LAST_WQE_REACHED (after a bounded wait).
    m["srq_qps_drained"] = std::to_string(ctr_.drained) + " (" +
                           std::to_string(ctr_.drain_timeouts) +
                           " without IBV_EVENT_QP_LAST_WQE_REACHED)";
  }
}

std::unique_ptr<Transport> rdma_create(const TransportParams& params) {
  return std::make_unique<RdmaTransport>(parse_rdma_settings(params));
}

ProbeResult rdma_probe_entry(const std::string& root) {
  RdmaProbe p = rdma_probe(root);
  return {p.usable, std::move(p.why), std::move(p.features)};
}

}  // namespace
}  // namespace rdma

const TransportEntry& rdma_transport_entry() {
  static const TransportEntry entry{
      .foreign = &rdma::perftest_hook(),
      .caps = rdma::rdma_caps(rdma::RdmaSettings{}),
      .options = rdma::rdma_options,
      .probe = rdma::rdma_probe_entry,
      .create = rdma::rdma_create,
  };
  return entry;
}

}  // namespace mtperf
