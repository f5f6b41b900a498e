#include "verbs/device_res.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace mtperf::rdma {

void throw_errno(const std::string& what, int err) {
  std::string hint;
  if (err == ENOMEM && what.find("reg_mr") != std::string::npos) {
    hint = " (the memory-lock limit is too small? raise it: ulimit -l unlimited)";
  } else if (err == ENODEV || err == ENOENT) {
    hint = " (no RDMA device for this address? `rdma link` lists them)";
  }
  throw std::runtime_error(what + ": " + std::strerror(err) + hint);
}

DeviceRes::~DeviceRes() {
  // A destructor does not throw: a failure goes to stderr. EBUSY means something made on this
  // device (a queue pair, a memory region) outlived the code that should have destroyed it.
  std::string dev = name();
  VerbsApi& v = *verbs;
  auto check = [&dev](int rc, const char* what) {
    if (rc == 0) return;
    std::fprintf(stderr, "mtperf: rdma: %s on %s: %s%s\n", what, dev.c_str(), std::strerror(rc),
                 rc == EBUSY ? " (still in use: a queue pair or region was not released)" : "");
  };
  if (srq) check(v.destroy_srq(srq), "ibv_destroy_srq");
  if (cq) {
    if (cq_events) v.ack_cq_events(cq, cq_events);
    check(v.destroy_cq(cq), "ibv_destroy_cq");
  }
  if (channel) check(v.destroy_comp_channel(channel), "ibv_destroy_comp_channel");
  for (ibv_mr* mr : conn_mrs) {
    if (mr) check(v.dereg_mr(mr), "ibv_dereg_mr (a connection's remote part of the area)");
  }
  if (area_mr) check(v.dereg_mr(area_mr), "ibv_dereg_mr (receive area)");
  if (pool_mr) check(v.dereg_mr(pool_mr), "ibv_dereg_mr (buffer pool)");
  if (pd) check(v.dealloc_pd(pd), "ibv_dealloc_pd");
}

std::string DeviceRes::name() const {
  return ctx ? verbs->device_name(ctx) : "?";
}

}  // namespace mtperf::rdma
