#include "transports/rdma/resources.hpp"

#include <fcntl.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "transports/rdma/flow_math.hpp"

namespace mtperf::rdma {

namespace {

// The largest inline size a first queue pair tries when the options leave it to the device.
constexpr uint32_t kInlineProbe = 1024;

int access_flags() {
  return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
}

}  // namespace

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
  if (srq) ibv_destroy_srq(srq);
  if (cq) {
    if (cq_events) ibv_ack_cq_events(cq, cq_events);
    ibv_destroy_cq(cq);
  }
  if (channel) ibv_destroy_comp_channel(channel);
  if (area_mr) ibv_dereg_mr(area_mr);
  if (pool_mr) ibv_dereg_mr(pool_mr);
  if (pd) ibv_dealloc_pd(pd);
}

std::string DeviceRes::name() const {
  return ctx ? ibv_get_device_name(ctx->device) : "?";
}

WorkerRes::WorkerRes(const EngineConfig& cfg, const RdmaSettings& s, bool per_transaction)
    : cfg_(cfg),
      settings_(s),
      layout_(make_layout(cfg, s, per_transaction)),
      pool_(cfg.buffers, cfg.buffer_size) {
  cfg_.sock = nullptr;  // not kept: set-up's socket options do not outlive set-up
  area_bytes_ = layout_.area_bytes();
  void* p = mmap(nullptr, area_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw_errno("mmap of " + std::to_string(area_bytes_) + " bytes", errno);
  area_ = static_cast<std::byte*>(p);  // zeroed: no landing slot holds a stamp yet
  setup_limit_ = std::max<uint32_t>(cfg.max_conns, 1);
}

WorkerRes::~WorkerRes() {
  devices_.clear();  // memory regions before the memory
  if (area_) munmap(area_, area_bytes_);
}

uint32_t WorkerRes::take_setup_conn() {
  if (setup_conns_ >= setup_limit_) {
    throw std::runtime_error("rdma: more connections for one worker than its engine was sized for");
  }
  return setup_conns_++;
}

DeviceRes& WorkerRes::device(ibv_context* ctx) {
  if (ctx == nullptr) throw std::runtime_error("rdma: the address is on no RDMA device");
  for (auto& d : devices_) {
    if (d->ctx == ctx) return *d;
  }
  std::string dev = ibv_get_device_name(ctx->device);
  if (layout_.srq && !devices_.empty()) {
    // The shared receive slots are posted to one device's SRQ; a second would post them again.
    throw std::runtime_error("rdma: one worker's flows run over " + devices_.front()->name() +
                             " and " + dev +
                             "; with a shared receive queue that cannot be: use "
                             "-O srq=off, or more threads (--threads)");
  }
  auto d = std::make_unique<DeviceRes>();
  d->ctx = ctx;
  if (ibv_query_device(ctx, &d->attr) != 0) throw_errno("ibv_query_device " + dev, errno);
  d->pd = ibv_alloc_pd(ctx);
  if (!d->pd) throw_errno("ibv_alloc_pd " + dev, errno);
  d->channel = ibv_create_comp_channel(ctx);
  if (!d->channel) throw_errno("ibv_create_comp_channel " + dev, errno);
  int fl = fcntl(d->channel->fd, F_GETFL);
  fcntl(d->channel->fd, F_SETFL, fl | O_NONBLOCK);
  uint64_t want = cq_entries(layout_);
  int cqe = int(std::min<uint64_t>(want, uint64_t(std::max(d->attr.max_cqe, 1))));
  d->cq = ibv_create_cq(ctx, cqe, nullptr, d->channel, 0);
  if (!d->cq) throw_errno("ibv_create_cq " + dev + " (" + std::to_string(cqe) + " entries)", errno);
  if (pool_.bytes() > 0) {
    d->pool_mr = ibv_reg_mr(d->pd, pool_.base(), pool_.bytes(), access_flags());
    if (!d->pool_mr) throw_errno("ibv_reg_mr of the buffer pool on " + dev, errno);
  }
  d->area_mr = ibv_reg_mr(d->pd, area_, area_bytes_, access_flags());
  if (!d->area_mr) throw_errno("ibv_reg_mr of the receive area on " + dev, errno);
  if (layout_.srq) fill_srq(*d);
  devices_.push_back(std::move(d));
  return *devices_.back();
}

void WorkerRes::fill_srq(DeviceRes& d) {
  ibv_srq_init_attr a{};
  uint32_t depth = layout_.srq_depth;
  if (d.attr.max_srq_wr > 0) depth = std::min<uint32_t>(depth, uint32_t(d.attr.max_srq_wr));
  a.attr.max_wr = depth;
  a.attr.max_sge = 1;
  d.srq = ibv_create_srq(d.pd, &a);
  if (!d.srq) throw_errno("ibv_create_srq on " + d.name(), errno);
  if (depth < layout_.srq_depth) {
    throw std::runtime_error("rdma: " + d.name() + " takes " + std::to_string(depth) +
                             " receives in a shared queue, " + std::to_string(layout_.srq_depth) +
                             " needed; use -O srq=off");
  }
  for (uint32_t i = 0; i < layout_.srq_depth; ++i) {
    int rc = repost(d, nullptr, kSrqConn, 0, i);
    if (rc != 0) throw_errno("ibv_post_srq_recv on " + d.name(), rc);
  }
}

int WorkerRes::repost(DeviceRes& d, ibv_qp* qp, uint32_t conn, uint32_t gen, uint32_t index) {
  ibv_sge sge{};
  ibv_recv_wr wr{};
  ibv_recv_wr* bad = nullptr;
  wr.wr_id = make_wr_id(conn, gen, true, index);
  if (layout_.recv_buffers) {
    sge.addr = uint64_t(uintptr_t(slot(index)));
    sge.length = layout_.slot_size;
    sge.lkey = d.area_mr->lkey;
    wr.sg_list = &sge;
    wr.num_sge = 1;
  }
  return d.srq ? ibv_post_srq_recv(d.srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad);
}

int WorkerRes::post_receives(DeviceRes& d, ibv_qp* qp, uint32_t conn, uint32_t gen) {
  if (d.srq) return 0;
  for (uint32_t i = 0; i < layout_.recv_per_qp; ++i) {
    uint32_t index = layout_.recv_buffers ? conn * layout_.slots_per_conn + i : 0;
    int rc = repost(d, qp, conn, gen, index);
    if (rc != 0) return rc;
  }
  return 0;
}

ConnInfo WorkerRes::local_info(uint32_t conn, const DeviceRes& d, const FlowSetup& s) const {
  ConnInfo c;
  c.verb = uint8_t(settings_.verb);
  c.flow = s.flow;
  c.cookie = s.cookie;
  if (layout_.slots_per_conn > 0) {
    c.addr = uint64_t(uintptr_t(conn_slot(conn, 0)));
    c.slots = uint16_t(std::min<uint32_t>(layout_.slots_per_conn, 65535));
  }
  c.rkey = d.area_mr->rkey;
  c.slot_size = layout_.slot_size;
  c.credits = uint16_t(std::min<uint32_t>(layout_.granted, 65535));
  c.credit_addr = uint64_t(uintptr_t(ctrl(conn)));
  return c;
}

ibv_qp* WorkerRes::create_qp(rdma_cm_id* id, DeviceRes& d) {
  ibv_qp_init_attr a{};
  a.send_cq = d.cq;
  a.recv_cq = d.cq;
  a.srq = d.srq;
  a.qp_type = IBV_QPT_RC;
  a.sq_sig_all = 0;
  a.cap.max_send_wr = std::min<uint32_t>(layout_.sq_depth, uint32_t(d.attr.max_qp_wr));
  a.cap.max_recv_wr = d.srq ? 0 : std::max<uint32_t>(layout_.recv_per_qp, 1);
  a.cap.max_send_sge = std::min(2, d.attr.max_sge);
  a.cap.max_recv_sge = d.srq ? 0 : 1;
  uint32_t cap = settings_.inline_cap;
  bool probing = d.max_inline == UINT32_MAX;
  uint32_t want = std::min(cap, probing ? kInlineProbe : d.max_inline);
  int err = 0;
  auto create = [&](uint32_t inline_bytes) {
    ibv_qp_init_attr t = a;
    t.cap.max_inline_data = inline_bytes;
    if (rdma_create_qp(id, d.pd, &t) == 0) return true;
    err = errno;
    return false;
  };
  if (create(want)) {
    d.max_inline = want;  // what every queue pair of the device is asked for from now on
    return id->qp;
  }
  if (!probing || want == 0) {
    throw_errno("rdma_create_qp on " + d.name() + " (" + std::to_string(a.cap.max_send_wr) +
                    " send, " + std::to_string(a.cap.max_recv_wr) + " receive entries, " +
                    std::to_string(want) + " bytes inline)",
                err);
  }
  // Providers refuse an inline size beyond theirs and do not say what it is: the first queue
  // pair of a device searches for the largest they take; the next ones ask for that.
  uint32_t lo = 0, hi = want - 1;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (create(mid)) {
      rdma_destroy_qp(id);
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  d.max_inline = lo;
  if (create(lo)) return id->qp;
  throw_errno("rdma_create_qp on " + d.name() + " (" + std::to_string(a.cap.max_send_wr) +
                  " send, " + std::to_string(a.cap.max_recv_wr) + " receive entries)",
              err);
}

}  // namespace mtperf::rdma
