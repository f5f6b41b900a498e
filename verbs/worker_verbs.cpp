#include "verbs/worker_verbs.hpp"

#include <fcntl.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "verbs/cm.hpp"
#include "verbs/device_rules.hpp"
#include "verbs/flow_math.hpp"

namespace mtperf::rdma {

namespace {

// Local write for every region (receives and READs land in the area; providers may want it of
// the pool as well); remote access only as device_rules.hpp's area_access says.
int access_flags(RemoteAccess r) {
  return IBV_ACCESS_LOCAL_WRITE | (r.write ? IBV_ACCESS_REMOTE_WRITE : 0) |
         (r.read ? IBV_ACCESS_REMOTE_READ : 0);
}

DeviceLimits limits(const ibv_device_attr& a) {
  return {a.max_qp_wr, a.max_cqe, a.max_srq_wr, a.max_sge};
}

}  // namespace

WorkerVerbs::WorkerVerbs(const WorkerShape& shape, const RdmaSettings& s, PoolMemory pool,
                         VerbsApi& verbs)
    : verbs_(&verbs), shape_(shape), settings_(s), layout_(make_layout(shape, s)), pool_(pool) {
  area_bytes_ = layout_.area_bytes();
  void* p = mmap(nullptr, area_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw_errno("mmap of " + std::to_string(area_bytes_) + " bytes", errno);
  area_ = static_cast<std::byte*>(p);  // zeroed: no landing slot holds a stamp yet
  setup_limit_ = std::max<uint32_t>(shape.max_conns, 1);
}

WorkerVerbs::~WorkerVerbs() {
  devices_.clear();  // memory regions before the memory
  if (area_) munmap(area_, area_bytes_);
}

uint32_t WorkerVerbs::take_setup_conn() {
  if (setup_conns_ >= setup_limit_) {
    throw std::runtime_error("rdma: more connections for one worker than its engine was sized for");
  }
  return setup_conns_++;
}

DeviceRes& WorkerVerbs::device(ibv_context* ctx) {
  if (ctx == nullptr) throw std::runtime_error("rdma: the address is on no RDMA device");
  for (auto& d : devices_) {
    if (d->ctx == ctx) return *d;
  }
  std::string dev = verbs_->device_name(ctx);
  if (layout_.srq && !devices_.empty()) {
    // The shared receive slots are posted to one device's SRQ; a second would post them again.
    throw std::runtime_error("rdma: one worker's flows run over " + devices_.front()->name() +
                             " and " + dev +
                             "; with a shared receive queue that cannot be: use "
                             "-O srq=off, or more threads (--threads)");
  }
  auto d = std::make_unique<DeviceRes>();
  d->verbs = verbs_;
  d->ctx = ctx;
  DeviceKind kind = ctx->device->transport_type == IBV_TRANSPORT_IB      ? DeviceKind::ib_roce
                    : ctx->device->transport_type == IBV_TRANSPORT_IWARP ? DeviceKind::iwarp
                                                                         : DeviceKind::other;
  if (std::string why = device_refusal(kind, settings_.verb, dev); !why.empty()) {
    throw std::runtime_error(why);
  }
  if (verbs_->query_device(ctx, &d->attr) != 0) throw_errno("ibv_query_device " + dev, errno);
  // Every queue is created at the size the engine uses, or not at all.
  if (std::string why = size_refusal(layout_, limits(d->attr), dev); !why.empty()) {
    throw std::runtime_error(why);
  }
  d->sq_cap = send_queue_ask(layout_.sq_depth, d->attr.max_qp_wr);
  create_queues(*d, dev);
  register_memory(*d, dev);
  if (layout_.srq) fill_srq(*d);
  d->max_inline = find_inline(*d);
  devices_.push_back(std::move(d));
  return *devices_.back();
}

// The device's protection domain, completion channel (non-blocking, for --wait block) and
// completion queue, on this worker's completion vector.
void WorkerVerbs::create_queues(DeviceRes& d, const std::string& dev) {
  d.pd = verbs_->alloc_pd(d.ctx);
  if (!d.pd) throw_errno("ibv_alloc_pd " + dev, errno);
  d.channel = verbs_->create_comp_channel(d.ctx);
  if (!d.channel) throw_errno("ibv_create_comp_channel " + dev, errno);
  int fl = fcntl(d.channel->fd, F_GETFL);
  fcntl(d.channel->fd, F_SETFL, fl | O_NONBLOCK);
  int cqe = int(cq_entries(layout_));
  d.comp_vector = comp_vector(shape_.worker, d.ctx->num_comp_vectors);
  d.cq = verbs_->create_cq(d.ctx, cqe, nullptr, d.channel, d.comp_vector);
  if (!d.cq) {
    throw_errno("ibv_create_cq " + dev + " (" + std::to_string(cqe) + " entries, vector " +
                    std::to_string(d.comp_vector) + ")",
                errno);
  }
}

// The buffer pool, the receive area and each connection's part of it, registered on the device.
void WorkerVerbs::register_memory(DeviceRes& d, const std::string& dev) {
  if (pool_.bytes > 0) {
    d.pool_mr = verbs_->reg_mr(d.pd, pool_.base, pool_.bytes, access_flags(pool_access()));
    if (!d.pool_mr) throw_errno("ibv_reg_mr of the buffer pool on " + dev, errno);
  }
  d.area_mr = verbs_->reg_mr(d.pd, area_, area_bytes_, access_flags(RemoteAccess{}));
  if (!d.area_mr) throw_errno("ibv_reg_mr of the receive area on " + dev, errno);
  d.conn_mrs.assign(layout_.conns, nullptr);
  for (uint32_t c = 0; c < layout_.conns; ++c) {
    RemoteSpan span = remote_span(layout_, c);
    if (span.bytes == 0) continue;
    d.conn_mrs[c] =
        verbs_->reg_mr(d.pd, area_ + span.offset, span.bytes, access_flags(span.access));
    if (!d.conn_mrs[c]) {
      throw_errno("ibv_reg_mr of connection " + std::to_string(c) + "'s part of the area on " + dev,
                  errno);
    }
  }
}

void WorkerVerbs::fill_srq(DeviceRes& d) {
  ibv_srq_init_attr a{};
  a.attr.max_wr = layout_.srq_depth;  // within max_srq_wr: size_refusal
  a.attr.max_sge = 1;
  d.srq = verbs_->create_srq(d.pd, &a);
  if (!d.srq) throw_errno("ibv_create_srq on " + d.name(), errno);
  for (uint32_t i = 0; i < layout_.srq_depth; ++i) {
    int rc = repost(d, nullptr, kSrqConn, 0, i);
    if (rc != 0) throw_errno("ibv_post_srq_recv on " + d.name(), rc);
  }
}

int WorkerVerbs::repost(DeviceRes& d, ibv_qp* qp, uint32_t conn, uint32_t gen, uint32_t index) {
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

int WorkerVerbs::post_receives(DeviceRes& d, ibv_qp* qp, uint32_t conn, uint32_t gen) {
  if (d.srq) return 0;
  for (uint32_t i = 0; i < layout_.recv_per_qp; ++i) {
    uint32_t index = layout_.recv_buffers ? layout_.slot_index(conn, i) : 0;
    int rc = repost(d, qp, conn, gen, index);
    if (rc != 0) return rc;
  }
  return 0;
}

ConnInfo WorkerVerbs::local_info(uint32_t conn, const DeviceRes& d, uint32_t flow,
                                 uint64_t cookie) const {
  ConnInfo c;
  c.verb = uint8_t(settings_.verb);
  c.flow = flow;
  c.cookie = cookie;
  if (layout_.slots_per_conn > 0) {
    c.addr = uint64_t(uintptr_t(conn_slot(conn, 0)));
    c.slots = uint16_t(std::min<uint32_t>(layout_.slots_per_conn, 65535));
  }
  c.rkey = d.conn_mrs.at(conn) ? d.conn_mrs[conn]->rkey : 0;  // this connection's part alone
  c.slot_size = layout_.slot_size;
  c.credits = uint16_t(std::min<uint32_t>(layout_.granted, 65535));
  c.credit_addr = uint64_t(uintptr_t(ctrl(conn)));
  return c;
}

ibv_qp_init_attr WorkerVerbs::qp_attr(const DeviceRes& d) const {
  ibv_qp_init_attr a{};
  a.send_cq = d.cq;
  a.recv_cq = d.cq;
  a.srq = d.srq;
  a.qp_type = IBV_QPT_RC;
  a.sq_sig_all = 0;
  a.cap.max_send_wr = d.sq_cap;  // within max_qp_wr
  a.cap.max_recv_wr = d.srq ? 0 : std::max<uint32_t>(layout_.recv_per_qp, 1);
  a.cap.max_send_sge = std::min(2, d.attr.max_sge);
  a.cap.max_recv_sge = d.srq ? 0 : 1;
  a.cap.max_inline_data = d.max_inline;
  return a;
}

std::string WorkerVerbs::qp_text(const ibv_qp_init_attr& a) const {
  return std::to_string(a.cap.max_send_wr) + " send, " + std::to_string(a.cap.max_recv_wr) +
         " receive entries, " + std::to_string(a.cap.max_inline_data) + " bytes inline";
}

uint32_t WorkerVerbs::find_inline(DeviceRes& d) {
  // Providers refuse an inline size beyond theirs without saying what it is, or lower it
  // without a word: a queue pair that is never connected asks, here at set-up, so that no
  // connection made on the data path (crr) has to.
  uint32_t wanted = inline_wanted(settings_.inline_cap, settings_.verb);
  int err = 0;
  ibv_qp_init_attr last{};
  int64_t got = settle_inline(wanted, [&](uint32_t ask, uint32_t& reported) {
    ibv_qp_init_attr a = qp_attr(d);
    a.cap.max_inline_data = ask;
    last = a;
    ibv_qp* qp = verbs_->create_qp(d.pd, &a);
    if (!qp) {
      err = errno;
      return false;
    }
    reported = a.cap.max_inline_data;  // what the provider granted
    d.sq_cap = send_queue_cap(d.sq_cap, a.cap.max_send_wr);
    if (int rc = verbs_->destroy_qp(qp); rc != 0) {
      throw_errno("ibv_destroy_qp of the queue pair that found the inline size on " + d.name(), rc);
    }
    return true;
  });
  if (got < 0) throw_errno("ibv_create_qp on " + d.name() + " (" + qp_text(last) + ")", err);
  return uint32_t(got);
}

ibv_qp* WorkerVerbs::create_qp(rdma_cm_id* id, DeviceRes& d) {
  ibv_qp_init_attr a = qp_attr(d);
  if (verbs_->cm_create_qp(id, d.pd, &a) != 0) {
    int err = errno;
    throw_errno("rdma_create_qp on " + d.name() + " (" + qp_text(qp_attr(d)) + ")", err);
  }
  // rdma_create_qp gives back what the device granted; a device that grants less inline than
  // the first queue pair was given lowers what every send of the device carries inline.
  d.max_inline = granted_inline(d.max_inline, a.cap.max_inline_data);
  d.sq_cap = send_queue_cap(d.sq_cap, a.cap.max_send_wr);
  return id->qp;
}

ibv_qp* WorkerVerbs::create_qp(DeviceRes& d) {
  ibv_qp_init_attr a = qp_attr(d);
  ibv_qp* qp = verbs_->create_qp(d.pd, &a);
  if (!qp) throw_errno("ibv_create_qp on " + d.name() + " (" + qp_text(qp_attr(d)) + ")", errno);
  d.max_inline = granted_inline(d.max_inline, a.cap.max_inline_data);
  d.sq_cap = send_queue_cap(d.sq_cap, a.cap.max_send_wr);
  return qp;
}

void WorkerVerbs::cm_half(rdma_cm_id* id, const std::string& what, DeviceRes*& dev,
                          uint32_t& conn) {
  dev = &device(id->verbs);
  conn = take_setup_conn();
  ibv_qp* qp = create_qp(id, *dev);
  if (int rc = post_receives(*dev, qp, conn, 0); rc != 0)
    throw_errno(what + ": posting receives", rc);
}

OobHello WorkerVerbs::oob_half(const OobPort& p, uint32_t flow, uint64_t cookie, DeviceRes*& dev,
                               uint32_t& conn, ibv_qp*& qp) {
  dev = &device(p.ctx);
  conn = take_setup_conn();
  qp = create_qp(*dev);
  oob_init(*verbs_, qp, p);
  if (int rc = post_receives(*dev, qp, conn, 0); rc != 0) throw_errno("posting receives", rc);
  OobHello h;
  h.qp.qpn = qp->qp_num;
  h.qp.psn = random_psn();
  h.qp.lid = p.lid;
  h.qp.link = p.link;
  h.qp.mtu = p.mtu;
  h.qp.depths = local_depths(*dev);
  h.qp.gid = p.gid;
  h.conn = local_info(conn, *dev, flow, cookie);
  return h;
}

std::string WorkerVerbs::landing_refusal(const ConnInfo& peer) const {
  if (settings_.verb == Verb::send || (peer.slots > 0 && peer.slot_size >= layout_.slot_size)) {
    return "";
  }
  return "the peer's landing slots (" + std::to_string(peer.slots) + " of " +
         std::to_string(peer.slot_size) + " bytes) cannot take " +
         std::to_string(layout_.slot_size) + "-byte messages";
}

std::vector<std::string> WorkerVerbs::vectors_text() const {
  std::vector<std::string> text;
  for (const auto& d : devices_) {
    text.push_back(d->name() + " vector " + std::to_string(d->comp_vector) + " of " +
                   std::to_string(d->ctx->num_comp_vectors));
  }
  return text;
}

void WorkerVerbs::add_granted(std::map<std::string, std::string>& m, bool stream) const {
  m["srq"] = layout_.srq ? "on" : "off";
  m["recv_depth"] = std::to_string(layout_.depth);
  m["credits"] = std::to_string(layout_.granted);
  if (stream && !devices_.empty()) {
    uint32_t cap = devices_.front()->sq_cap;
    uint32_t window = stream_window(settings_.tx_depth, cap);
    m["tx_depth"] = std::to_string(window) + " (send queue " + std::to_string(cap) + ")";
    m["signal"] = std::to_string(signal_interval(settings_.signal_every, window));
  }
  std::string devs;
  for (const auto& d : devices_)
    devs += (devs.empty() ? "" : ",") + d->name();
  if (!devs.empty()) m["devices"] = devs;
}

}  // namespace mtperf::rdma
