#pragma once
// The verbs and rdma_cm calls through which the rdma transport makes, changes and destroys its
// objects (protection domain, completion channel and queue, memory regions, shared receive
// queue, queue pairs, event channels, rdma_cm ids) and manages connections: one interface, so
// that a unit test can hand the transport an in-memory device that counts what is alive and
// fails where it is told to (tests/transports/rdma/fake_verbs.hpp). real_verbs() forwards every
// call to libibverbs or librdmacm unchanged: return values and errno as they set them.
//
// The data path is not behind it: ibv_post_send, ibv_post_recv, ibv_post_srq_recv, ibv_poll_cq
// and ibv_req_notify_cq stay the verbs header's inline calls, which dispatch through the
// object's own context (ibv_context::ops) — a test's device fills those entries itself. So the
// interface costs one virtual call on set-up, teardown, crr's per-connection set-up, a blocking
// wait's wake-up and error paths, never per work request.
//
// Each WorkerRes holds the one it was built with (resources.hpp); whatever it made goes back
// through the same. Thread-safety: real_verbs() as libibverbs and librdmacm are; another
// implementation says its own.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstddef>
#include <cstdint>

namespace mtperf::rdma {

class VerbsApi {
 public:
  virtual ~VerbsApi() = default;

  // libibverbs
  virtual const char* device_name(ibv_context* ctx) = 0;
  virtual int query_device(ibv_context* ctx, ibv_device_attr* attr) = 0;
  virtual ibv_pd* alloc_pd(ibv_context* ctx) = 0;
  virtual int dealloc_pd(ibv_pd* pd) = 0;
  virtual ibv_comp_channel* create_comp_channel(ibv_context* ctx) = 0;
  virtual int destroy_comp_channel(ibv_comp_channel* ch) = 0;
  virtual ibv_cq* create_cq(ibv_context* ctx, int cqe, void* cq_context, ibv_comp_channel* ch,
                            int comp_vector) = 0;
  virtual int destroy_cq(ibv_cq* cq) = 0;
  virtual int get_cq_event(ibv_comp_channel* ch, ibv_cq** cq, void** cq_context) = 0;
  virtual void ack_cq_events(ibv_cq* cq, unsigned int n) = 0;
  virtual ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, int access) = 0;
  virtual int dereg_mr(ibv_mr* mr) = 0;
  virtual ibv_srq* create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) = 0;
  virtual int destroy_srq(ibv_srq* srq) = 0;
  virtual ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) = 0;
  virtual int destroy_qp(ibv_qp* qp) = 0;
  virtual int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) = 0;
  // Out-of-band set-up (oob.hpp): a port's attributes and one entry of its GID table (0 or an
  // errno, as ibv_query_gid_ex returns it; ENODATA for an empty entry).
  virtual int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) = 0;
  virtual int query_gid_ex(ibv_context* ctx, uint32_t port, uint32_t index,
                           ibv_gid_entry* entry) = 0;

  // librdmacm
  virtual rdma_event_channel* create_event_channel() = 0;
  virtual void destroy_event_channel(rdma_event_channel* ch) = 0;
  virtual int get_cm_event(rdma_event_channel* ch, rdma_cm_event** ev) = 0;
  virtual int ack_cm_event(rdma_cm_event* ev) = 0;
  virtual int create_id(rdma_event_channel* ch, rdma_cm_id** id, void* context,
                        rdma_port_space ps) = 0;
  virtual int destroy_id(rdma_cm_id* id) = 0;
  virtual int migrate_id(rdma_cm_id* id, rdma_event_channel* ch) = 0;
  virtual int set_option(rdma_cm_id* id, int level, int name, void* value, size_t len) = 0;
  virtual int bind_addr(rdma_cm_id* id, sockaddr* addr) = 0;
  virtual int listen(rdma_cm_id* id, int backlog) = 0;
  virtual uint16_t src_port(rdma_cm_id* id) = 0;  // network byte order, as rdma_get_src_port
  virtual int resolve_addr(rdma_cm_id* id, sockaddr* src, sockaddr* dst, int timeout_ms) = 0;
  virtual int resolve_route(rdma_cm_id* id, int timeout_ms) = 0;
  // rdma_create_qp and rdma_destroy_qp: the id's queue pair (id->qp).
  virtual int cm_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* attr) = 0;
  virtual void cm_destroy_qp(rdma_cm_id* id) = 0;
  virtual int connect(rdma_cm_id* id, rdma_conn_param* param) = 0;
  virtual int accept(rdma_cm_id* id, rdma_conn_param* param) = 0;
  virtual int reject(rdma_cm_id* id, const void* private_data, uint8_t len) = 0;
  virtual int disconnect(rdma_cm_id* id) = 0;
};

// libibverbs and librdmacm themselves: one instance for the process.
VerbsApi& real_verbs();

}  // namespace mtperf::rdma
