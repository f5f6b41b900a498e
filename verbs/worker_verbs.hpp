#pragma once
// One worker's RDMA resources below the transport (transports/rdma/resources.hpp's WorkerRes
// adds the workload's buffer pool and engine configuration), made by the transport's set-up (it
// must publish the landing slots' address and rkey in each connection's private data) and
// handed to the worker's engine:
//   per worker          the area (layout.hpp), one allocation, and the connection table's
//                       set-up half; the pool it registers is its owner's
//   per worker, device  a protection domain, a completion channel and one completion queue, the
//                       pool and the area registered (one memory region each), and the shared
//                       receive queue when the layout has one (filled at once)
// Destruction releases everything in the reverse order (the pool's registration before the
// pool, which its owner frees after); queue pairs and rdma_cm ids belong to endpoints and
// engines, which hold a shared_ptr to the owner, so the PD and CQ outlive them.
// Every object is made and destroyed through the VerbsApi the WorkerVerbs was built with
// (verbs_api.hpp: libibverbs and librdmacm themselves, or a test's in-memory device).
// Set-up path (control thread), then the worker thread only: not thread-safe.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "verbs/device_res.hpp"
#include "verbs/layout.hpp"
#include "verbs/oob_qp.hpp"
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

// The memory of the workload's buffers, registered on each device (not owned).
struct PoolMemory {
  std::byte* base = nullptr;
  size_t bytes = 0;
};

class WorkerVerbs {
 public:
  // `verbs`: through which every object of this worker is made and destroyed; it and `pool`
  // outlive the WorkerVerbs.
  WorkerVerbs(const WorkerShape& shape, const RdmaSettings& s, PoolMemory pool,
              VerbsApi& verbs = real_verbs());
  ~WorkerVerbs();
  WorkerVerbs(const WorkerVerbs&) = delete;
  WorkerVerbs& operator=(const WorkerVerbs&) = delete;

  const Layout& layout() const { return layout_; }
  const RdmaSettings& settings() const { return settings_; }
  VerbsApi& verbs() const { return *verbs_; }
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

  // What this side tells the peer of connection `conn` on device d, for the flow and cookie of
  // its set-up.
  ConnInfo local_info(uint32_t conn, const DeviceRes& d, uint32_t flow, uint64_t cookie) const;
  // Creates the queue pair of `id` on d (RC, this layout's depths, inline up to what the device
  // granted and the options allow); throws naming the call.
  ibv_qp* create_qp(rdma_cm_id* id, DeviceRes& d);
  // The same without rdma_cm (-O connect=oob): a queue pair in RESET, the caller's to destroy.
  ibv_qp* create_qp(DeviceRes& d);
  // Posts a connection's receives (none with an SRQ); 0 or an errno.
  int post_receives(DeviceRes& d, ibv_qp* qp, uint32_t conn, uint32_t gen);
  // Re-posts one receive for slot `index` (with its buffer when the layout has them).
  int repost(DeviceRes& d, ibv_qp* qp, uint32_t conn, uint32_t gen, uint32_t index);

  // The local half of a connection on `id`'s device (rdma_cm): the device's resources, the next
  // entry of the connection table (conn) and the queue pair with its receives posted.
  void cm_half(rdma_cm_id* id, const std::string& what, DeviceRes*& dev, uint32_t& conn);
  // The same out of band, on port p: the queue pair in INIT, stored in `qp` as soon as it exists
  // (the caller's from then on, whether or not this throws), and the hello that describes it.
  OobHello oob_half(const OobPort& p, uint32_t flow, uint64_t cookie, DeviceRes*& dev,
                    uint32_t& conn, ibv_qp*& qp);
  // Why the peer's landing slots cannot take this worker's messages, or "".
  std::string landing_refusal(const ConnInfo& peer) const;

  // For the report: each device's completion vector ("mlx5_0 vector 3 of 8"), and what the
  // devices granted (the receive queue, its depth, the credits; a stream's window within the send
  // queue granted and its signalling interval; the devices).
  std::vector<std::string> vectors_text() const;
  void add_granted(std::map<std::string, std::string>& m, bool stream) const;

 private:
  // device()'s steps for a device met the first time.
  void create_queues(DeviceRes& d, const std::string& dev);
  void register_memory(DeviceRes& d, const std::string& dev);
  void fill_srq(DeviceRes& d);
  ibv_qp_init_attr qp_attr(const DeviceRes& d) const;
  uint32_t find_inline(DeviceRes& d);
  std::string qp_text(const ibv_qp_init_attr& a) const;

  VerbsApi* verbs_;
  WorkerShape shape_;
  RdmaSettings settings_;
  Layout layout_;
  PoolMemory pool_;
  std::byte* area_ = nullptr;
  size_t area_bytes_ = 0;
  uint32_t setup_conns_ = 0;
  uint32_t setup_limit_ = 0;
  std::vector<std::unique_ptr<DeviceRes>> devices_;
  std::shared_ptr<const FaultBoard> faults_;
};

}  // namespace mtperf::rdma
