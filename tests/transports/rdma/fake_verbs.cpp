// FOR UNIT TESTS ONLY: the in-memory RDMA device of fake_verbs.hpp.
#include "tests/transports/rdma/fake_verbs.hpp"

#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <type_traits>

namespace mtperf::rdma::test {

const char* to_string(Obj k) {
  switch (k) {
    case Obj::pd:
      return "pd";
    case Obj::mr:
      return "mr";
    case Obj::cq:
      return "cq";
    case Obj::qp:
      return "qp";
    case Obj::srq:
      return "srq";
    case Obj::comp_channel:
      return "comp_channel";
    case Obj::cm_id:
      return "cm_id";
    case Obj::event_channel:
      return "event_channel";
    case Obj::cm_event:
      return "cm_event";
  }
  return "?";
}

// The context comes first, so that an object's context leads back to its FakeVerbs.
struct FakeVerbs::Device {
  ibv_context ctx;
  FakeVerbs* owner;
  ibv_device device;
};

int FakeVerbs::quiet_fd() {
  // Channels carry a real descriptor (never readable): the code under test sets flags on it and
  // polls it.
  return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

int FakeVerbs::fail_with(int err) {
  errno = err;
  return -1;
}

FakeVerbs::FakeVerbs() : dev_(std::make_unique<Device>()) {
  static_assert(std::is_standard_layout_v<Device>);
  Device& d = *dev_;
  std::memset(&d, 0, sizeof d);
  d.owner = this;
  std::strcpy(d.device.name, "fake0");
  std::strcpy(d.device.dev_name, "uverbs9");
  d.device.node_type = IBV_NODE_CA;
  d.device.transport_type = IBV_TRANSPORT_IB;
  d.ctx.device = &d.device;
  d.ctx.num_comp_vectors = 4;
  d.ctx.cmd_fd = -1;
  d.ctx.async_fd = -1;
  d.ctx.ops.post_send = [](ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
    return reinterpret_cast<Device*>(qp->context)->owner->post_send(qp, wr, bad);
  };
  d.ctx.ops.post_recv = [](ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
    return reinterpret_cast<Device*>(qp->context)->owner->post_recv(qp, wr, bad);
  };
  d.ctx.ops.post_srq_recv = [](ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
    return reinterpret_cast<Device*>(srq->context)->owner->post_srq_recv(srq, wr, bad);
  };
  d.ctx.ops.poll_cq = [](ibv_cq* cq, int n, ibv_wc* wc) {
    return reinterpret_cast<Device*>(cq->context)->owner->poll_cq(cq, n, wc);
  };
  d.ctx.ops.req_notify_cq = [](ibv_cq*, int) { return 0; };

  attr.max_qp = 1 << 18;
  attr.max_qp_wr = 16384;
  attr.max_sge = 30;
  attr.max_cq = 1 << 18;
  attr.max_cqe = 1 << 22;
  attr.max_mr = 1 << 20;
  attr.max_mr_size = UINT64_MAX;
  attr.max_pd = 1 << 18;
  attr.max_qp_rd_atom = 16;
  attr.max_qp_init_rd_atom = 16;
  attr.max_srq = 1 << 18;
  attr.max_srq_wr = 32767;
  attr.max_srq_sge = 31;
  attr.phys_port_cnt = 1;

  port_attr.state = IBV_PORT_ACTIVE;
  port_attr.max_mtu = IBV_MTU_4096;
  port_attr.active_mtu = IBV_MTU_1024;
  port_attr.link_layer = IBV_LINK_LAYER_ETHERNET;
  port_attr.gid_tbl_len = 4;
  for (uint32_t i = 0; i < 4; ++i) {
    ibv_gid_entry e{};
    e.gid_index = i;
    e.port_num = 1;
    e.gid_type = i % 2 == 0 ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_ROCE_V2;
    if (i < 2) {
      e.gid.raw[0] = 0xfe;
      e.gid.raw[1] = 0x80;
      e.gid.raw[15] = 1;
    } else {
      e.gid.raw[10] = 0xff;
      e.gid.raw[11] = 0xff;
      e.gid.raw[12] = 127;
      e.gid.raw[15] = 1;
    }
    gids.push_back(e);
  }
}

FakeVerbs::~FakeVerbs() {
  // What was leaked: its descriptors closed; the memory goes with live_.
  for (auto& [p, keep] : live_[size_t(Obj::comp_channel)])
    close(static_cast<const ibv_comp_channel*>(p)->fd);
  for (auto& [p, keep] : live_[size_t(Obj::event_channel)])
    close(static_cast<const rdma_event_channel*>(p)->fd);
}

ibv_context* FakeVerbs::context() {
  return &dev_->ctx;
}

int FakeVerbs::live_total() const {
  int n = 0;
  for (auto& m : live_)
    n += int(m.size());
  return n;
}

std::string FakeVerbs::leftovers() const {
  if (live_total() == 0 && bad_destroys_ == 0) return "";
  return "alive: " + live_text() + "; bad destroys: " + std::to_string(bad_destroys_);
}

std::string FakeVerbs::live_text() const {
  std::string s;
  for (size_t k = 0; k < kObjKinds; ++k) {
    if (live_[k].empty()) continue;
    s += (s.empty() ? "" : ", ") + std::string(to_string(Obj(k))) + " " +
         std::to_string(live_[k].size());
  }
  return s.empty() ? "none" : s;
}

void FakeVerbs::fail(Call c, int nth, int err) {
  int at = calls_[size_t(c)] + nth;
  faults_[size_t(c)] = {at, at, err};
}

void FakeVerbs::fail_always(Call c, int err) {
  faults_[size_t(c)] = {calls_[size_t(c)] + 1, INT_MAX, err};
}

void FakeVerbs::fail_post_send(int index, int err) {
  post_send_fail_at_ = index;
  post_send_err_ = err;
}

void FakeVerbs::heal() {
  faults_ = {};
  post_send_fail_at_ = -1;
}

int FakeVerbs::qp_state(uint32_t qp_num) const {
  auto it = qp_states_.find(qp_num);
  return it == qp_states_.end() ? -1 : it->second;
}

int FakeVerbs::fault(Call c) {
  int n = ++calls_[size_t(c)];
  const Fault& f = faults_[size_t(c)];
  return f.from != 0 && n >= f.from && n <= f.to ? f.err : 0;
}

bool FakeVerbs::drop(Obj k, const void* p) {
  if (live_[size_t(k)].erase(p) == 0) {
    ++bad_destroys_;
    return false;
  }
  return true;
}

bool FakeVerbs::uses(Obj k, const void* parent) const {
  for (const auto& [p, keep] : live_[size_t(k)]) {
    const void* pd = nullptr;
    const void* a = nullptr;
    const void* b = nullptr;
    const void* c = nullptr;
    switch (k) {
      case Obj::mr:
        pd = static_cast<const ibv_mr*>(p)->pd;
        break;
      case Obj::srq:
        pd = static_cast<const ibv_srq*>(p)->pd;
        break;
      case Obj::cq:
        a = static_cast<const ibv_cq*>(p)->channel;
        break;
      case Obj::qp: {
        const auto* qp = static_cast<const ibv_qp*>(p);
        pd = qp->pd;
        a = qp->send_cq;
        b = qp->recv_cq;
        c = qp->srq;
        break;
      }
      default:
        break;
    }
    if (parent == pd || parent == a || parent == b || parent == c) return true;
  }
  return false;
}

// ---- libibverbs --------------------------------------------------------------------------------

const char* FakeVerbs::device_name(ibv_context* ctx) {
  return ctx->device->name;
}

int FakeVerbs::query_device(ibv_context*, ibv_device_attr* out) {
  if (int err = fault(Call::query_device)) return fail_with(err);
  *out = attr;
  return 0;
}

ibv_pd* FakeVerbs::alloc_pd(ibv_context* ctx) {
  if (int err = fault(Call::alloc_pd)) return null_with<ibv_pd>(err);
  auto* pd = make<ibv_pd>(Obj::pd);
  pd->context = ctx;
  return pd;
}

int FakeVerbs::dealloc_pd(ibv_pd* pd) {
  if (uses(Obj::mr, pd) || uses(Obj::qp, pd) || uses(Obj::srq, pd)) return EBUSY;
  return drop(Obj::pd, pd) ? 0 : EINVAL;
}

ibv_comp_channel* FakeVerbs::create_comp_channel(ibv_context* ctx) {
  if (int err = fault(Call::create_comp_channel)) return null_with<ibv_comp_channel>(err);
  auto* ch = make<ibv_comp_channel>(Obj::comp_channel);
  ch->context = ctx;
  ch->fd = quiet_fd();
  return ch;
}

int FakeVerbs::destroy_comp_channel(ibv_comp_channel* ch) {
  if (uses(Obj::cq, ch)) return EBUSY;
  int fd = ch->fd;
  if (!drop(Obj::comp_channel, ch)) return EINVAL;
  close(fd);
  return 0;
}

ibv_cq* FakeVerbs::create_cq(ibv_context* ctx, int cqe, void* cq_context, ibv_comp_channel* ch,
                             int) {
  if (int err = fault(Call::create_cq)) return null_with<ibv_cq>(err);
  auto* cq = make<ibv_cq>(Obj::cq);
  cq->context = ctx;
  cq->channel = ch;
  cq->cq_context = cq_context;
  cq->cqe = cqe;
  return cq;
}

int FakeVerbs::destroy_cq(ibv_cq* cq) {
  if (uses(Obj::qp, cq)) return EBUSY;
  if (!drop(Obj::cq, cq)) return EINVAL;
  wcs_.erase(cq);
  return 0;
}

int FakeVerbs::get_cq_event(ibv_comp_channel*, ibv_cq**, void**) {
  return fail_with(EAGAIN);
}

void FakeVerbs::ack_cq_events(ibv_cq*, unsigned int) {}

ibv_mr* FakeVerbs::reg_mr(ibv_pd* pd, void* addr, size_t length, int) {
  if (int err = fault(Call::reg_mr)) return null_with<ibv_mr>(err);
  auto* mr = make<ibv_mr>(Obj::mr);
  mr->context = pd->context;
  mr->pd = pd;
  mr->addr = addr;
  mr->length = length;
  mr->lkey = next_key_++;
  mr->rkey = next_key_++;
  return mr;
}

int FakeVerbs::dereg_mr(ibv_mr* mr) {
  return drop(Obj::mr, mr) ? 0 : EINVAL;
}

ibv_srq* FakeVerbs::create_srq(ibv_pd* pd, ibv_srq_init_attr* a) {
  if (int err = fault(Call::create_srq)) return null_with<ibv_srq>(err);
  auto* srq = make<ibv_srq>(Obj::srq);
  srq->context = pd->context;
  srq->pd = pd;
  srq->srq_context = a->srq_context;
  return srq;
}

int FakeVerbs::destroy_srq(ibv_srq* srq) {
  if (uses(Obj::qp, srq)) return EBUSY;
  return drop(Obj::srq, srq) ? 0 : EINVAL;
}

ibv_qp* FakeVerbs::create_qp(ibv_pd* pd, ibv_qp_init_attr* a) {
  if (int err = fault(Call::create_qp)) return null_with<ibv_qp>(err);
  auto* qp = make<ibv_qp>(Obj::qp);
  qp->context = pd->context;
  qp->pd = pd;
  qp->send_cq = a->send_cq;
  qp->recv_cq = a->recv_cq;
  qp->srq = a->srq;
  qp->qp_type = a->qp_type;
  qp->qp_context = a->qp_context;
  qp->qp_num = next_qpn_++;
  last_qp_num = qp->qp_num;
  qp->state = IBV_QPS_RESET;
  a->cap.max_inline_data = std::min(a->cap.max_inline_data, max_inline);  // what it grants
  outstanding_[qp];
  return qp;
}

int FakeVerbs::destroy_qp(ibv_qp* qp) {
  if (!drop(Obj::qp, qp)) return EINVAL;
  outstanding_.erase(qp);
  return 0;
}

int FakeVerbs::query_port(ibv_context*, uint8_t port, ibv_port_attr* attr) {
  if (int err = fault(Call::query_port)) return err;
  if (port != 1) return EINVAL;
  *attr = port_attr;
  return 0;
}

int FakeVerbs::query_gid_ex(ibv_context*, uint32_t port, uint32_t index, ibv_gid_entry* entry) {
  if (int err = fault(Call::query_gid)) return err;
  if (port != 1 || index >= gids.size()) return ENODATA;
  *entry = gids[index];
  return 0;
}

int FakeVerbs::modify_qp(ibv_qp* qp, ibv_qp_attr* a, int mask) {
  if (int err = fault(Call::modify_qp)) return err;
  if ((mask & IBV_QP_STATE) && size_t(a->qp_state) < moves.size()) ++moves[a->qp_state];
  if ((mask & IBV_QP_STATE) && a->qp_state == IBV_QPS_RTR) {
    last_rtr = *a;
    last_rtr_mask = mask;
  }
  if ((mask & IBV_QP_STATE) && a->qp_state == IBV_QPS_RTS) {
    last_rts = *a;
    last_rts_mask = mask;
  }
  if (mask & IBV_QP_STATE) {
    qp->state = a->qp_state;
    qp_states_[qp->qp_num] = a->qp_state;
    if (a->qp_state == IBV_QPS_ERR) to_error(qp);
  }
  return 0;
}

void FakeVerbs::to_error(ibv_qp* qp) {
  // Everything the queue pair holds completes, flushed: sends on its send CQ, then its own
  // receives on its receive CQ.
  Outstanding& o = outstanding_[qp];
  auto flush = [&](ibv_cq* cq, uint64_t wr_id, ibv_wc_opcode op) {
    ibv_wc wc{};
    wc.wr_id = wr_id;
    wc.status = IBV_WC_WR_FLUSH_ERR;
    wc.opcode = op;
    wc.qp_num = qp->qp_num;
    if (cq) wcs_[cq].push_back(wc);
    ++flushed;
  };
  for (uint64_t id : o.sends)
    flush(qp->send_cq, id, IBV_WC_SEND);
  for (uint64_t id : o.recvs)
    flush(qp->recv_cq, id, IBV_WC_RECV);
  o.sends.clear();
  o.recvs.clear();
}

int FakeVerbs::post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  ++calls_[size_t(Call::post_send)];
  Outstanding& o = outstanding_[qp];
  int at = post_send_fail_at_;
  post_send_fail_at_ = -1;
  for (int i = 0; wr; wr = wr->next, ++i) {
    if (i == at) {
      *bad = wr;
      return post_send_err_;
    }
    o.sends.push_back(wr->wr_id);
    ++posted_sends;
  }
  if (qp->state == IBV_QPS_ERR) to_error(qp);
  return 0;
}

int FakeVerbs::post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  for (; wr; wr = wr->next) {
    if (int err = fault(Call::post_recv)) {
      *bad = wr;
      return err;
    }
    outstanding_[qp].recvs.push_back(wr->wr_id);
  }
  return 0;
}

int FakeVerbs::post_srq_recv(ibv_srq*, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  for (; wr; wr = wr->next) {
    if (int err = fault(Call::post_srq_recv)) {
      *bad = wr;
      return err;
    }
  }
  return 0;
}

int FakeVerbs::poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
  auto it = wcs_.find(cq);
  if (it == wcs_.end()) return 0;
  int got = 0;
  while (got < n && !it->second.empty()) {
    wc[got++] = it->second.front();
    it->second.pop_front();
  }
  return got;
}

}  // namespace mtperf::rdma::test
