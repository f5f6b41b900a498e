#include "verbs/verbs_api.hpp"

namespace mtperf::rdma {

namespace {

// Each call as the library makes it; nothing added.
class RealVerbs final : public VerbsApi {
 public:
  const char* device_name(ibv_context* ctx) override { return ibv_get_device_name(ctx->device); }
  int query_device(ibv_context* ctx, ibv_device_attr* attr) override {
    return ibv_query_device(ctx, attr);
  }
  ibv_pd* alloc_pd(ibv_context* ctx) override { return ibv_alloc_pd(ctx); }
  int dealloc_pd(ibv_pd* pd) override { return ibv_dealloc_pd(pd); }
  ibv_comp_channel* create_comp_channel(ibv_context* ctx) override {
    return ibv_create_comp_channel(ctx);
  }
  int destroy_comp_channel(ibv_comp_channel* ch) override { return ibv_destroy_comp_channel(ch); }
  ibv_cq* create_cq(ibv_context* ctx, int cqe, void* cq_context, ibv_comp_channel* ch,
                    int comp_vector) override {
    return ibv_create_cq(ctx, cqe, cq_context, ch, comp_vector);
  }
  int destroy_cq(ibv_cq* cq) override { return ibv_destroy_cq(cq); }
  int get_cq_event(ibv_comp_channel* ch, ibv_cq** cq, void** cq_context) override {
    return ibv_get_cq_event(ch, cq, cq_context);
  }
  void ack_cq_events(ibv_cq* cq, unsigned int n) override { ibv_ack_cq_events(cq, n); }
  ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, int access) override {
    return ibv_reg_mr(pd, addr, length, access);
  }
  int dereg_mr(ibv_mr* mr) override { return ibv_dereg_mr(mr); }
  ibv_srq* create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) override {
    return ibv_create_srq(pd, attr);
  }
  int destroy_srq(ibv_srq* srq) override { return ibv_destroy_srq(srq); }
  ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) override { return ibv_create_qp(pd, attr); }
  int destroy_qp(ibv_qp* qp) override { return ibv_destroy_qp(qp); }
  int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) override {
    return ibv_modify_qp(qp, attr, mask);
  }
  int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) override {
    return ibv_query_port(ctx, port, attr);
  }
  int query_gid_ex(ibv_context* ctx, uint32_t port, uint32_t index, ibv_gid_entry* entry) override {
    return ibv_query_gid_ex(ctx, port, index, entry, 0);
  }

  rdma_event_channel* create_event_channel() override { return rdma_create_event_channel(); }
  void destroy_event_channel(rdma_event_channel* ch) override { rdma_destroy_event_channel(ch); }
  int get_cm_event(rdma_event_channel* ch, rdma_cm_event** ev) override {
    return rdma_get_cm_event(ch, ev);
  }
  int ack_cm_event(rdma_cm_event* ev) override { return rdma_ack_cm_event(ev); }
  int create_id(rdma_event_channel* ch, rdma_cm_id** id, void* context,
                rdma_port_space ps) override {
    return rdma_create_id(ch, id, context, ps);
  }
  int destroy_id(rdma_cm_id* id) override { return rdma_destroy_id(id); }
  int migrate_id(rdma_cm_id* id, rdma_event_channel* ch) override {
    return rdma_migrate_id(id, ch);
  }
  int set_option(rdma_cm_id* id, int level, int name, void* value, size_t len) override {
    return rdma_set_option(id, level, name, value, len);
  }
  int bind_addr(rdma_cm_id* id, sockaddr* addr) override { return rdma_bind_addr(id, addr); }
  int listen(rdma_cm_id* id, int backlog) override { return rdma_listen(id, backlog); }
  uint16_t src_port(rdma_cm_id* id) override { return rdma_get_src_port(id); }
  int resolve_addr(rdma_cm_id* id, sockaddr* src, sockaddr* dst, int timeout_ms) override {
    return rdma_resolve_addr(id, src, dst, timeout_ms);
  }
  int resolve_route(rdma_cm_id* id, int timeout_ms) override {
    return rdma_resolve_route(id, timeout_ms);
  }
  int cm_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* attr) override {
    return rdma_create_qp(id, pd, attr);
  }
  void cm_destroy_qp(rdma_cm_id* id) override { rdma_destroy_qp(id); }
  int connect(rdma_cm_id* id, rdma_conn_param* param) override { return ::rdma_connect(id, param); }
  int accept(rdma_cm_id* id, rdma_conn_param* param) override { return rdma_accept(id, param); }
  int reject(rdma_cm_id* id, const void* private_data, uint8_t len) override {
    return rdma_reject(id, private_data, len);
  }
  int disconnect(rdma_cm_id* id) override { return rdma_disconnect(id); }
};

}  // namespace

VerbsApi& real_verbs() {
  // Never destroyed: a static object's destructor may run after it (at exit) calls through it.
  static auto* verbs = new RealVerbs();
  return *verbs;
}

}  // namespace mtperf::rdma
