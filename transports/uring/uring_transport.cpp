// The io_uring transport: registry entry, options, probe.
#include <liburing.h>
#include <sys/mman.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include "transports/api/engine_host.hpp"
#include "transports/uring/register.hpp"
#include "transports/uring/uring_engine.hpp"

namespace mtperf {
namespace {

// The defaults of `-T uring`, chosen by measurement (docs/transports.md): multishot receive
// cost the least CPU per transaction in every case measured; link is what request/response
// uses where multishot falls back.
const UringSettings kDefaults = [] {
  UringSettings s;
  s.multishot = true;
  s.link = true;
  s.cqe_skip = true;
  return s;
}();

Caps uring_caps(const UringSettings& s) {
  Caps c;
  c.max_outstanding = 32;  // four sends in flight per stream (engine_config.cpp)
  c.provides_recv_buffers = s.multishot;
  c.linked_ops = s.link && !s.zerocopy;
  c.unsignaled_sends = s.cqe_skip && !s.zerocopy;
  c.peer_greeting = true;
  return c;
}

std::string on_off(bool b) {
  return b ? "on" : "off";
}

class UringTransport final : public inet::SocketSetup, public EngineHost<UringEngine> {
 public:
  explicit UringTransport(const UringSettings& s) : set_(s) {}
  Caps caps() const override { return uring_caps(set_); }
  std::unique_ptr<UringEngine> make_engine(const EngineConfig& cfg) override {
    auto engine = std::make_unique<UringEngine>(cfg, set_);
    std::lock_guard lock(mu_);
    if (!have_eff_) eff_ = engine->effective();
    have_eff_ = true;
    return engine;
  }
  std::map<std::string, std::string> effective_settings() const override;
  uint64_t engine_overhead_bytes(const EngineConfig& cfg) const override {
    return UringEngine::overhead_bytes(cfg, set_);
  }
  uint32_t extra_threads_per_worker() const override { return set_.sqpoll ? 1 : 0; }

 private:
  UringSettings set_;
  mutable std::mutex mu_;
  bool have_eff_ = false;
  UringEffective eff_;
};

// Every -O key of the transport, once: an on/off key names its field of UringSettings and,
// where the kernel may overrule it, of UringEffective; a numeric key its field and range (a power
// of two in lo..hi, or 0 where zero_ok).
struct Key {
  const char* key;
  bool UringSettings::*flag = nullptr;
  bool UringEffective::*effective = nullptr;
  uint32_t UringSettings::*number = nullptr;
  unsigned long lo = 0, hi = 0;
  bool zero_ok = false;
  const char* help = "";
};

const Key kKeys[] = {
    {.key = "ring_size",
     .number = &UringSettings::ring_size,
     .lo = 8,
     .hi = 32768,
     .help = "SQ ring entries, a power of two 8..32768"},
    {.key = "single_issuer",
     .flag = &UringSettings::single_issuer,
     .effective = &UringEffective::single_issuer,
     .help = "IORING_SETUP_SINGLE_ISSUER|DEFER_TASKRUN (kernel >= 6.1; falls back with a note)"},
    {.key = "sqpoll",
     .flag = &UringSettings::sqpoll,
     .help = "IORING_SETUP_SQPOLL: a kernel thread submits (takes a CPU)"},
    {.key = "fixed_files",
     .flag = &UringSettings::fixed_files,
     .effective = &UringEffective::fixed_files,
     .help = "registered file table (IOSQE_FIXED_FILE)"},
    {.key = "fixed_buffers",
     .flag = &UringSettings::fixed_buffers,
     .effective = &UringEffective::fixed_buffers,
     .help = "register the buffer pool; used by zero-copy sends (IORING_RECVSEND_FIXED_BUF)"},
    {.key = "zerocopy",
     .flag = &UringSettings::zerocopy,
     .effective = &UringEffective::zerocopy,
     .help = "send with IORING_OP_SEND_ZC; a send completes at its notification (kernel >= 6.0)"},
    {.key = "multishot",
     .flag = &UringSettings::multishot,
     .effective = &UringEffective::multishot,
     .help = "multishot receive into a provided-buffer ring (kernel >= 6.0)"},
    {.key = "buf_ring",
     .number = &UringSettings::buf_ring_entries,
     .lo = 1,
     .hi = 32768,
     .zero_ok = true,
     .help = "provided buffers per worker for multishot, a power of two 1..32768 (0: 8 per "
             "connection, at most 32 MiB)"},
    {.key = "link",
     .flag = &UringSettings::link,
     .effective = &UringEffective::link,
     .help = "request/response: the request's send and the next receive go as one linked chain, "
             "one CQE per transaction (IOSQE_IO_LINK, IOSQE_CQE_SKIP_SUCCESS)"},
    {.key = "cqe_skip",
     .flag = &UringSettings::cqe_skip,
     .effective = &UringEffective::cqe_skip,
     .help = "request/response with one transaction in flight: a send that succeeds has no CQE "
             "(IOSQE_CQE_SKIP_SUCCESS); with multishot, one CQE per transaction and side"},
    {.key = "cqe_batch",
     .number = &UringSettings::cqe_batch,
     .lo = 1,
     .hi = 64,
     .help = "completions reaped and handed to the workload per poll, a power of two 1..64"},
    {.key = "ring_fd",
     .flag = &UringSettings::ring_fd,
     .effective = &UringEffective::ring_fd,
     .help = "io_uring_register_ring_fd: io_uring_enter skips the file lookup"},
};

std::map<std::string, std::string> UringTransport::effective_settings() const {
  std::lock_guard lock(mu_);
  std::map<std::string, std::string> m;
  for (const Key& k : kKeys) {
    if (k.flag) {
      m[k.key] = on_off(have_eff_ && k.effective ? eff_.*k.effective : set_.*k.flag);
    } else if (k.number != &UringSettings::buf_ring_entries) {
      m[k.key] = std::to_string(set_.*k.number);
    }
  }
  if (!have_eff_) return m;
  if (eff_.multishot) m["buf_ring"] = std::to_string(eff_.buf_ring_entries);
  std::string notes;
  for (auto& n : eff_.notes)
    notes += (notes.empty() ? "" : "; ") + n;
  if (!notes.empty()) m["notes"] = notes;
  return m;
}

std::vector<OptionInfo> uring_options() {
  std::vector<OptionInfo> out;
  for (const Key& k : kKeys) {
    out.push_back(k.flag ? flag_option(k.key, kDefaults.*k.flag, k.help)
                         : pow2_option(k.key, k.lo, k.hi, kDefaults.*k.number, k.help, k.zero_ok));
  }
  return out;
}

UringSettings parse_settings(const TransportParams& params) {
  const OptionValues v = parse_options("uring", uring_options(), params);
  UringSettings s;
  for (const Key& k : kKeys) {
    if (k.flag) {
      s.*k.flag = v.on(k.key);
    } else {
      s.*k.number = uint32_t(v.number(k.key));
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

// A provided-buffer ring can be registered (kernel >= 5.19).
bool probe_buf_ring(io_uring& ring) {
  void* mem = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return false;
  io_uring_buf_reg reg{};
  reg.ring_addr = uint64_t(uintptr_t(mem));
  reg.ring_entries = 8;
  reg.bgid = 0;
  bool ok = io_uring_register_buf_ring(&ring, &reg, 0) == 0;
  if (ok) io_uring_unregister_buf_ring(&ring, 0);
  munmap(mem, 4096);
  return ok;
}

// Why the kernel.io_uring_disabled sysctl keeps io_uring from this process ("": it does not).
std::string disabled_why(const std::string& root) {
  std::ifstream in(root + "/proc/sys/kernel/io_uring_disabled");
  int disabled = 0;
  if (!(in >> disabled && (disabled == 1 || disabled == 2))) return "";
  return "io_uring is disabled by the kernel.io_uring_disabled sysctl (= " +
         std::to_string(disabled) + (disabled == 1 ? ": only for privileged processes" : "") +
         "); enable it with `sysctl kernel.io_uring_disabled=0`";
}

// What io_uring_setup's error `rc` (< 0) means here.
std::string setup_why(int rc) {
  if (rc == -ENOSYS) {
    return "io_uring_setup: ENOSYS: the kernel has no io_uring (CONFIG_IO_URING) or a seccomp "
           "filter hides it";
  }
  if (rc == -EPERM) {
    return "io_uring_setup: EPERM: io_uring is forbidden here (a seccomp profile such as a "
           "container runtime's default, or kernel.io_uring_disabled); allow io_uring_setup/"
           "io_uring_enter/io_uring_register";
  }
  return std::string("io_uring_setup: ") + strerror(-rc);
}

ProbeResult uring_probe(const std::string& root) {
  ProbeResult r;
  r.why = disabled_why(root);
  if (!r.why.empty()) return r;
  io_uring ring;
  int rc = io_uring_queue_init(8, &ring, 0);
  if (rc < 0) {
    r.why = setup_why(rc);
    return r;
  }
  r.usable = true;
  r.features = {"tcp", std::string(kFeatureUdp)};
  io_uring_probe* probe = io_uring_get_probe_ring(&ring);
  bool send_zc = probe && io_uring_opcode_supported(probe, IORING_OP_SEND_ZC);
  if (probe) io_uring_free_probe(probe);
  bool cqe_skip = (ring.features & IORING_FEAT_CQE_SKIP) != 0;
  bool buf_ring = probe_buf_ring(ring);
  bool ring_fd = io_uring_register_ring_fd(&ring) == 1;
  io_uring_queue_exit(&ring);
  if (try_ring(IORING_SETUP_SINGLE_ISSUER) == 0) r.features.push_back("single_issuer");
  if (try_ring(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN) == 0) {
    r.features.push_back("defer_taskrun");
  }
  if (send_zc) r.features.push_back("send_zc");
  if (buf_ring) r.features.push_back("buf_ring");
  // Multishot receive came with send_zc (6.0) and needs a provided-buffer ring.
  if (buf_ring && send_zc) r.features.push_back("multishot_recv");
  if (cqe_skip) r.features.push_back("link_cqe_skip");
  if (ring_fd) r.features.push_back("ring_fd");
  if (try_ring(IORING_SETUP_SQPOLL) == 0) r.features.push_back("sqpoll");
  return r;
}

std::unique_ptr<Transport> uring_create(const TransportParams& params) {
  return std::make_unique<UringTransport>(parse_settings(params));
}

}  // namespace

const TransportEntry& uring_transport_entry() {
  static const TransportEntry entry{
      .caps = uring_caps(kDefaults),
      .options = uring_options,
      .probe = uring_probe,
      .create = uring_create,
  };
  return entry;
}

}  // namespace mtperf
