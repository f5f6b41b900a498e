#pragma once
// One worker's RDMA resources, made by the transport's set-up (it must publish the landing
// slots' address and rkey in each connection's private data) and handed to the worker's engine
// in make_engine (EngineHost):
//   per worker          the pool and the area (layout.hpp), one allocation each, and the
//                       connection table's set-up half
//   per worker, device  a protection domain, a completion channel and one completion queue, the
//                       pool and the area registered (one memory region each), and the shared
//                       receive queue when the layout has one (filled at once)
// Destruction releases everything in the reverse order; queue pairs and rdma_cm ids belong to
// endpoints and engines, which hold a shared_ptr to these, so the PD and CQ outlive them.
// Every object is made and destroyed through the VerbsApi the WorkerRes was built with
// (verbs_api.hpp: libibverbs and librdmacm themselves, or a test's in-memory device).
// Set-up path (control thread), then the worker thread only: not thread-safe.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "transports/api/endpoint.hpp"
#include "transports/rdma/layout.hpp"
#include "verbs/device_res.hpp"
#include "verbs/private_data.hpp"
#include "verbs/verbs_api.hpp"

namespace mtperf::rdma {

// wr_id of a work request: its connection and the connection's generation (so that a
// completion of a closed connection is never taken for the next one in its place), whether it
// is a receive, and the send queue's sequence number or the receive's slot.
inline constexpr uint32_t kSrqConn = 0xffff;
constexpr uint64_t make_wr_id(uint32_t conn, uint32_t gen, bool recv, uint32_t index) {
  return uint64_t(conn & 0xffff) << 48 | uint64_t(gen & 0x7fff) << 33 | uint64_t(recv) << 32 |
         index;
}
constexpr uint32_t wr_conn(uint64_t id) {
  return uint32_t(id >> 48);
}
constexpr uint32_t wr_gen(uint64_t id) {
  return uint32_t(id >> 33) & 0x7fff;
}
constexpr bool wr_recv(uint64_t id) {
  return (id >> 32) & 1;
}
constexpr uint32_t wr_index(uint64_t id) {
  return uint32_t(id);
}

class FaultBoard;

class WorkerRes {
 public:
  // `verbs`: through which every object of this worker is made and destroyed; it outlives the
  // WorkerRes.
  WorkerRes(const EngineConfig& cfg, const RdmaSettings& s, bool per_transaction,
            VerbsApi& verbs = real_verbs());
  ~WorkerRes();
  WorkerRes(const WorkerRes&) = delete;
  WorkerRes& operator=(const WorkerRes&) = delete;

  const Layout& layout() const { return layout_; }
  const RdmaSettings& settings() const { return settings_; }
  const EngineConfig& config() const { return cfg_; }
  VerbsApi& verbs() const { return *verbs_; }
  BufferPool& pool() { return pool_; }
  std::byte* slot(uint32_t index) const { return area_ + size_t(index) * layout_.slot_size; }
  std::byte* conn_slot(uint32_t conn, uint32_t i) const {
    return slot(layout_.slot_index(conn, i));
  }
  std::byte* ctrl(uint32_t conn) const { return slot(layout_.ctrl_index(conn)); }
  // The device's resources, made on first use. Throws std::runtime_error naming the call.
  DeviceRes& device(ibv_context* ctx);
  std::vector<std::unique_ptr<DeviceRes>>& devices() { return devices_; }
  const std::vector<std::unique_ptr<DeviceRes>>& devices() const { return devices_; }
  // The devices' asynchronous faults (async_events.hpp), published by the transport's watcher;
  // nullptr when none watches.
  const FaultBoard* faults() const { return faults_.get(); }
  void set_faults(std::shared_ptr<const FaultBoard> b) { faults_ = std::move(b); }
  // Set-up: the next entry of the connection table. Throws when set-up has used its half.
  uint32_t take_setup_conn();
  uint32_t setup_conns() const { return setup_conns_; }

  // What this side tells the peer of connection `conn` on device d.
  ConnInfo local_info(uint32_t conn, const DeviceRes& d, const FlowSetup& s) const;
  // Creates the queue pair of `id` on d (RC, this layout's depths, inline up to what the device
  // granted and the options allow); throws naming the call.
  ibv_qp* create_qp(rdma_cm_id* id, DeviceRes& d);
  // The same without rdma_cm (-O connect=oob): a queue pair in RESET, the caller's to destroy.
  ibv_qp* create_qp(DeviceRes& d);
  // Posts a connection's receives (none with an SRQ); 0 or an errno.
  int post_receives(DeviceRes& d, ibv_qp* qp, uint32_t conn, uint32_t gen);
  // Re-posts one receive for slot `index` (with its buffer when the layout has them).
  int repost(DeviceRes& d, ibv_qp* qp, uint32_t conn, uint32_t gen, uint32_t index);

 private:
  // device()'s steps for a device met the first time.
  void create_queues(DeviceRes& d, const std::string& dev);
  void register_memory(DeviceRes& d, const std::string& dev);
  void fill_srq(DeviceRes& d);
  ibv_qp_init_attr qp_attr(const DeviceRes& d) const;
  uint32_t find_inline(DeviceRes& d);
  std::string qp_text(const ibv_qp_init_attr& a) const;

  VerbsApi* verbs_;
  EngineConfig cfg_;
  RdmaSettings settings_;
  Layout layout_;
  BufferPool pool_;
  std::byte* area_ = nullptr;
  size_t area_bytes_ = 0;
  uint32_t setup_conns_ = 0;
  uint32_t setup_limit_ = 0;
  std::vector<std::unique_ptr<DeviceRes>> devices_;
  std::shared_ptr<const FaultBoard> faults_;
};

}  // namespace mtperf::rdma
