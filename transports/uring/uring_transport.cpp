// The io_uring transport: registry entry, options, probe.
#include <liburing.h>

#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include "transports/uring/register.hpp"
#include "transports/uring/uring_engine.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/worker.hpp"

namespace mtperf {
namespace {

const UringSettings kDefaults{};

Caps uring_caps(const UringSettings& s) {
  Caps c;
  c.zero_copy = s.zerocopy;
  c.max_outstanding = 32;  // four sends in flight per stream (engine_config.cpp)
  return c;
}

std::string on_off(bool b) {
  return b ? "on" : "off";
}

class UringTransport final : public Transport {
 public:
  explicit UringTransport(const UringSettings& s) : set_(s) {}
  Caps caps() const override { return uring_caps(set_); }
  void run_worker(WorkerJob& job) override {
    UringEngine engine(engine_config(job, caps()), set_);
    {
      std::lock_guard lock(mu_);
      if (!have_eff_) eff_ = engine.effective();
      have_eff_ = true;
    }
    Worker<UringEngine>(engine, job).run();
  }
  std::map<std::string, std::string> effective_settings() const override {
    std::lock_guard lock(mu_);
    std::map<std::string, std::string> m;
    m["ring_size"] = std::to_string(set_.ring_size);
    m["sqpoll"] = on_off(set_.sqpoll);
    if (!have_eff_) {
      m["single_issuer"] = on_off(set_.single_issuer);
      m["fixed_files"] = on_off(set_.fixed_files);
      m["fixed_buffers"] = on_off(set_.fixed_buffers);
      m["zerocopy"] = on_off(set_.zerocopy);
      return m;
    }
    m["single_issuer"] = on_off(eff_.single_issuer);
    m["fixed_files"] = on_off(eff_.fixed_files);
    m["fixed_buffers"] = on_off(eff_.fixed_buffers);
    m["zerocopy"] = on_off(eff_.zerocopy);
    std::string notes;
    for (auto& n : eff_.notes)
      notes += (notes.empty() ? "" : "; ") + n;
    if (!notes.empty()) m["notes"] = notes;
    return m;
  }

 private:
  UringSettings set_;
  mutable std::mutex mu_;
  bool have_eff_ = false;
  UringEffective eff_;
};

std::vector<OptionInfo> uring_options() {
  auto b = [](bool v) { return std::string(v ? "1" : "0"); };
  return {
      {"ring_size", std::to_string(kDefaults.ring_size),
       "SQ ring entries, a power of two 8..32768"},
      {"single_issuer", b(kDefaults.single_issuer),
       "IORING_SETUP_SINGLE_ISSUER|DEFER_TASKRUN (kernel >= 6.1; falls back with a note)"},
      {"sqpoll", b(kDefaults.sqpoll), "IORING_SETUP_SQPOLL: a kernel thread submits (takes a CPU)"},
      {"fixed_files", b(kDefaults.fixed_files), "registered file table (IOSQE_FIXED_FILE)"},
      {"fixed_buffers", b(kDefaults.fixed_buffers),
       "register the buffer pool; used by zero-copy sends (IORING_RECVSEND_FIXED_BUF)"},
      {"zerocopy", b(kDefaults.zerocopy),
       "send with IORING_OP_SEND_ZC; a send completes at its notification (kernel >= 6.0)"},
  };
}

bool parse_bool(const std::string& key, const std::string& v) {
  if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
  if (v == "0" || v == "off" || v == "false" || v == "no") return false;
  throw std::invalid_argument("uring option " + key + ": expected 0/1/on/off, got '" + v + "'");
}

UringSettings parse_settings(const TransportParams& params) {
  UringSettings s = kDefaults;
  for (auto& [k, v] : params) {
    if (k == "ring_size") {
      unsigned long n = 0;
      size_t used = 0;
      try {
        n = std::stoul(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != v.size() || n < 8 || n > 32768 || (n & (n - 1)) != 0) {
        throw std::invalid_argument(
            "uring option ring_size: expected a power of two in 8..32768, "
            "got '" +
            v + "'");
      }
      s.ring_size = uint32_t(n);
    } else if (k == "single_issuer") {
      s.single_issuer = parse_bool(k, v);
    } else if (k == "sqpoll") {
      s.sqpoll = parse_bool(k, v);
    } else if (k == "fixed_files") {
      s.fixed_files = parse_bool(k, v);
    } else if (k == "fixed_buffers") {
      s.fixed_buffers = parse_bool(k, v);
    } else if (k == "zerocopy") {
      s.zerocopy = parse_bool(k, v);
    } else {
      throw std::invalid_argument("uring has no option '" + k + "'");
    }
  }
  return s;
}

// A ring with `flags` can be set up here: 0, or -errno.
int try_ring(unsigned flags) {
  io_uring ring;
  io_uring_params p{};
  p.flags = flags;
  if (flags & IORING_SETUP_SQPOLL) p.sq_thread_idle = 10;
  int rc = io_uring_queue_init_params(8, &ring, &p);
  if (rc == 0) io_uring_queue_exit(&ring);
  return rc;
}

ProbeResult uring_probe(const std::string& root) {
  ProbeResult r;
  std::ifstream in(root + "/proc/sys/kernel/io_uring_disabled");
  int disabled = 0;
  if (in >> disabled && (disabled == 1 || disabled == 2)) {
    r.why = "io_uring is disabled by the kernel.io_uring_disabled sysctl (= " +
            std::to_string(disabled) + (disabled == 1 ? ": only for privileged processes" : "") +
            "); enable it with `sysctl kernel.io_uring_disabled=0`";
    return r;
  }
  io_uring ring;
  int rc = io_uring_queue_init(8, &ring, 0);
  if (rc == -ENOSYS) {
    r.why =
        "io_uring_setup: ENOSYS: the kernel has no io_uring (CONFIG_IO_URING) or a seccomp "
        "filter hides it";
    return r;
  }
  if (rc == -EPERM) {
    r.why =
        "io_uring_setup: EPERM: io_uring is forbidden here (a seccomp profile such as a "
        "container runtime's default, or kernel.io_uring_disabled); allow io_uring_setup/"
        "io_uring_enter/io_uring_register";
    return r;
  }
  if (rc < 0) {
    r.why = std::string("io_uring_setup: ") + strerror(-rc);
    return r;
  }
  r.usable = true;
  r.features = {"tcp", "udp"};
  io_uring_probe* probe = io_uring_get_probe_ring(&ring);
  bool send_zc = probe && io_uring_opcode_supported(probe, IORING_OP_SEND_ZC);
  if (probe) io_uring_free_probe(probe);
  io_uring_queue_exit(&ring);
  if (try_ring(IORING_SETUP_SINGLE_ISSUER) == 0) r.features.push_back("single_issuer");
  if (try_ring(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN) == 0) {
    r.features.push_back("defer_taskrun");
  }
  if (send_zc) {
    r.features.push_back("send_zc");
    // Multishot receive and provided-buffer rings came with the same kernels (6.0).
    r.features.push_back("multishot_recv");
  }
  if (try_ring(IORING_SETUP_SQPOLL) == 0) r.features.push_back("sqpoll");
  return r;
}

std::unique_ptr<Transport> uring_create(const TransportParams& params) {
  return std::make_unique<UringTransport>(parse_settings(params));
}

}  // namespace

const TransportEntry& uring_transport_entry() {
  static const TransportEntry entry{
      "uring",       "kernel TCP/UDP sockets through io_uring: one ring per worker thread",
      false,         uring_caps(kDefaults),
      uring_options, uring_probe,
      uring_create,
  };
  return entry;
}

}  // namespace mtperf
