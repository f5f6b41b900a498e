#pragma once
// FOR UNIT TESTS ONLY. FakeVerbs: an in-memory RDMA device behind the rdma transport's VerbsApi
// (verbs/verbs_api.hpp), so that the transport's set-up, crr's accepts, failed posts
// and teardown run on a host without RDMA, and a test can check that nothing is left behind.
//
//   - Counts the objects alive, by kind (live); destroying one that is not alive is counted too
//     (bad_destroys: a double destroy, or a pointer that was never made here). As a device
//     does, it refuses (EBUSY) to destroy a PD, CQ, SRQ or completion channel still in use.
//   - Fails a call when told (fail, fail_always): it returns the error as the library would
//     (nullptr or -1 with errno, or the error number itself where the call returns it).
//   - Answers rdma_cm as a peer and the network would: resolve_addr and resolve_route queue
//     their RESOLVED events, connect queues ESTABLISHED carrying reply_pd (REJECTED when empty),
//     accept queues ESTABLISHED; connect_request queues a peer's CONNECT_REQUEST on a listener.
//   - Its context's posting and polling entries (ibv_context::ops, which the verbs header's
//     inline ibv_post_send, ibv_post_recv, ibv_post_srq_recv and ibv_poll_cq call) keep the
//     requests a queue pair holds; moving a queue pair to the error state (modify_qp, or
//     disconnect as rdma_cm does) completes each with IBV_WC_WR_FLUSH_ERR on its CQ, signalled
//     or not, as a device does.
// Whatever the code under test leaked is freed by the destructor. Single-threaded.
#include <array>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "verbs/verbs_api.hpp"

namespace mtperf::rdma::test {

enum class Obj : uint8_t { pd, mr, cq, qp, srq, comp_channel, cm_id, event_channel, cm_event };
inline constexpr size_t kObjKinds = 9;
const char* to_string(Obj k);

// The calls a test can make fail.
enum class Call : uint8_t {
  query_device,
  alloc_pd,
  create_comp_channel,
  create_cq,
  reg_mr,
  create_srq,
  create_qp,
  modify_qp,
  create_event_channel,
  create_id,
  migrate_id,
  bind_addr,
  listen,
  resolve_addr,
  resolve_route,
  cm_create_qp,
  connect,
  accept,
  post_send,
  post_recv,
  post_srq_recv,
  query_port,
  query_gid
};
inline constexpr size_t kCalls = 23;

class FakeVerbs final : public VerbsApi {
 public:
  FakeVerbs();
  ~FakeVerbs() override;
  FakeVerbs(const FakeVerbs&) = delete;
  FakeVerbs& operator=(const FakeVerbs&) = delete;

  // The device ("fake0", RoCE, four completion vectors), as rdma_cm ids bound or resolved here
  // give it.
  ibv_context* context();
  ibv_device_attr attr{};     // what query_device answers: a roomy device unless changed
  uint32_t max_inline = 256;  // bytes of inline data a queue pair is granted at most
  // Its port 1, as query_port answers (ACTIVE, Ethernet, 1024-byte MTU), and its GID table
  // (query_gid_ex): index 0 a link-local RoCE v1 GID, 1 the same of RoCE v2, 2 and 3 the
  // IPv4-mapped 127.0.0.1 of RoCE v1 and v2 (the tests' out-of-band connections run on loopback).
  ibv_port_attr port_attr{};
  std::vector<ibv_gid_entry> gids;
  // How many modify_qp calls moved a queue pair to each state (by ibv_qp_state).
  std::array<int, 8> moves{};

  int live(Obj k) const { return int(live_[size_t(k)].size()); }
  int live_total() const;
  std::string live_text() const;  // "qp 1, cm_id 2", or "none"
  int bad_destroys() const { return bad_destroys_; }
  // "" when nothing is alive and nothing was destroyed wrongly; otherwise what is left, for a
  // test's CHECK(f.leftovers() == "") to print.
  std::string leftovers() const;

  // The nth call of c from now (1: the next) fails with err; fail_always: every one from the
  // next on. post_send: fail_post_send fails the next chain at its request `index` (0-based).
  void fail(Call c, int nth = 1, int err = ENOMEM);
  void fail_always(Call c, int err = ENOMEM);
  void fail_post_send(int index, int err = ENOMEM);
  void heal();  // no more failures
  int calls(Call c) const { return calls_[size_t(c)]; }

  // A peer's CONNECT_REQUEST on `listener`'s channel, with private data `pd` and the READ depths
  // as the accepting side's event gives them; the request's new id (alive until destroyed).
  rdma_cm_id* connect_request(rdma_cm_id* listener, const void* pd, size_t len,
                              uint8_t responder_resources = 16, uint8_t initiator_depth = 16);
  std::vector<uint8_t> reply_pd;  // what a connect's ESTABLISHED carries (empty: REJECTED)

  int rejects = 0, accepts = 0, disconnects = 0;
  rdma_cm_id* last_listener = nullptr;  // the id listen was last called on
  uint32_t last_qp_num = 0;             // of the queue pair made last
  // The state a queue pair was last moved to, by qp_num (kept after it is destroyed); -1: never
  // moved.
  int qp_state(uint32_t qp_num) const;
  uint64_t posted_sends = 0;  // work requests taken by post_send
  uint64_t flushed = 0;       // completed with IBV_WC_WR_FLUSH_ERR

  // VerbsApi
  const char* device_name(ibv_context* ctx) override;
  int query_device(ibv_context* ctx, ibv_device_attr* out) override;
  ibv_pd* alloc_pd(ibv_context* ctx) override;
  int dealloc_pd(ibv_pd* pd) override;
  ibv_comp_channel* create_comp_channel(ibv_context* ctx) override;
  int destroy_comp_channel(ibv_comp_channel* ch) override;
  ibv_cq* create_cq(ibv_context* ctx, int cqe, void* cq_context, ibv_comp_channel* ch,
                    int comp_vector) override;
  int destroy_cq(ibv_cq* cq) override;
  int get_cq_event(ibv_comp_channel* ch, ibv_cq** cq, void** cq_context) override;
  void ack_cq_events(ibv_cq* cq, unsigned int n) override;
  ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, int access) override;
  int dereg_mr(ibv_mr* mr) override;
  ibv_srq* create_srq(ibv_pd* pd, ibv_srq_init_attr* a) override;
  int destroy_srq(ibv_srq* srq) override;
  ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* a) override;
  int destroy_qp(ibv_qp* qp) override;
  int modify_qp(ibv_qp* qp, ibv_qp_attr* a, int mask) override;
  int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) override;
  int query_gid_ex(ibv_context* ctx, uint32_t port, uint32_t index, ibv_gid_entry* entry) override;
  ibv_qp_attr last_rtr{}, last_rts{};  // what the last moves to RTR and RTS asked
  int last_rtr_mask = 0, last_rts_mask = 0;
  rdma_event_channel* create_event_channel() override;
  void destroy_event_channel(rdma_event_channel* ch) override;
  int get_cm_event(rdma_event_channel* ch, rdma_cm_event** ev) override;
  int ack_cm_event(rdma_cm_event* ev) override;
  int create_id(rdma_event_channel* ch, rdma_cm_id** id, void* context,
                rdma_port_space ps) override;
  int destroy_id(rdma_cm_id* id) override;
  int migrate_id(rdma_cm_id* id, rdma_event_channel* ch) override;
  int set_option(rdma_cm_id* id, int level, int name, void* value, size_t len) override;
  int bind_addr(rdma_cm_id* id, sockaddr* addr) override;
  int listen(rdma_cm_id* id, int backlog) override;
  uint16_t src_port(rdma_cm_id* id) override;
  int resolve_addr(rdma_cm_id* id, sockaddr* src, sockaddr* dst, int timeout_ms) override;
  int resolve_route(rdma_cm_id* id, int timeout_ms) override;
  int cm_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* a) override;
  void cm_destroy_qp(rdma_cm_id* id) override;
  int connect(rdma_cm_id* id, rdma_conn_param* param) override;
  int accept(rdma_cm_id* id, rdma_conn_param* param) override;
  int reject(rdma_cm_id* id, const void* private_data, uint8_t len) override;
  int disconnect(rdma_cm_id* id) override;

  // ibv_context::ops entries (the data path), public for the context's table.
  int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
  int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
  int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad);
  int poll_cq(ibv_cq* cq, int n, ibv_wc* wc);

 private:
  struct Fault {
    int from = 0, to = 0;  // calls numbered from..to fail (0: none)
    int err = 0;
  };
  struct Outstanding {  // what a queue pair holds: sends, then its own receives
    std::vector<uint64_t> sends, recvs;
  };
  static int quiet_fd();
  static int fail_with(int err);  // errno = err; -1
  template <class T>
  static T* null_with(int err) {
    errno = err;
    return nullptr;
  }
  // The error to fail call c with now, or 0.
  int fault(Call c);
  template <class T>
  T* make(Obj k) {
    auto p = std::make_shared<T>();  // value-initialized: zeroed
    live_[size_t(k)][p.get()] = p;
    return p.get();
  }
  bool drop(Obj k, const void* p);
  // Whether an object of kind k alive refers to `parent` (its PD, CQ, SRQ or channel).
  bool uses(Obj k, const void* parent) const;
  void queue_event(rdma_event_channel* ch, rdma_cm_event_type type, rdma_cm_id* id,
                   rdma_cm_id* listen_id, const void* pd, size_t len);
  void to_error(ibv_qp* qp);

  struct Device;
  std::unique_ptr<Device> dev_;
  std::array<std::map<const void*, std::shared_ptr<void>>, kObjKinds> live_;
  std::array<int, kCalls> calls_{};
  std::array<Fault, kCalls> faults_{};
  int post_send_fail_at_ = -1, post_send_err_ = 0;
  int bad_destroys_ = 0;
  uint32_t next_qpn_ = 0x100;
  uint32_t next_key_ = 0x1000;
  uint16_t next_port_ = 20000;
  std::map<const rdma_event_channel*, std::deque<rdma_cm_event*>> events_;
  std::map<const ibv_cq*, std::deque<ibv_wc>> wcs_;
  std::map<const ibv_qp*, Outstanding> outstanding_;
  std::map<uint32_t, int> qp_states_;
};

}  // namespace mtperf::rdma::test
