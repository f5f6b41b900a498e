#pragma once
// A device's asynchronous events (ibv_get_async_event): a queue pair, completion queue or shared
// receive queue gone to the error state, a port down, the device lost. Without them such a
// failure can show as nothing at all: no completion ever comes, and the flow stalls.
//
// The contexts are librdmacm's, one per device for the whole process, so their events cannot be
// read by each worker: one watcher thread per transport reads every device's, acknowledges them
// at once (ibv_destroy_qp waits for that) and publishes those that end something on a
// FaultBoard. Each worker's engine looks at the board when it looks at rdma_cm's events and
// ends the flows the fault touches, naming the event.
//
// FaultBoard: one writer (the watcher), any number of readers, no lock: a reader only loads
// atomics, so the data path never waits on it. A reader more than kSlots faults behind loses the
// oldest (faults are rare: a device in trouble raises a handful).
#include <infiniband/verbs.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace mtperf::rdma {

// What a fault ends. last_wqe is no fault: a queue pair on a shared receive queue, in the error
// state, will take no more of its receives (IBV_EVENT_QP_LAST_WQE_REACHED): the engine may
// destroy it now (drained_of); it ends nothing.
enum class FaultScope : uint8_t { qp, cq, srq, port, device, last_wqe };

struct Fault {
  FaultScope scope = FaultScope::device;
  int32_t event = 0;  // its ibv_event_type
  uint64_t ctx = 0;   // the device's context (its address)
  uint64_t id = 0;    // qp: qp_num; cq, srq: its address; port: its number; device: 0
  friend bool operator==(const Fault&, const Fault&) = default;
};

// The fault an event is, or false for the events that end nothing (COMM_EST, PORT_ACTIVE,
// LAST_WQE_REACHED, ...).
bool fault_of(const ibv_context* ctx, const ibv_async_event& ev, Fault& out);
// "IBV_EVENT_QP_FATAL (local work queue catastrophic error)"-like: the event's name and its
// libibverbs description.
std::string fault_text(const Fault& f);
// IBV_EVENT_QP_LAST_WQE_REACHED as a notice on the board (scope last_wqe, id its qp_num), or
// false for any other event.
bool drained_of(const ibv_context* ctx, const ibv_async_event& ev, Fault& out);
// Whether the fault ends a connection whose queue pair is qp_num on port `port` of ctx, served by
// completion queue cq and shared receive queue srq (addresses; 0 for none).
bool fault_hits(const Fault& f, uint64_t ctx, uint32_t qp_num, uint32_t port, uint64_t cq,
                uint64_t srq);

class FaultBoard {
 public:
  static constexpr uint64_t kSlots = 64;

  void publish(const Fault& f);
  // Faults published since *seen, oldest first, each handed to fn; *seen then covers them.
  // Returns how many were lost (overwritten before this reader came).
  template <class Fn>
  uint64_t read_since(uint64_t& seen, Fn&& fn) const;
  uint64_t head() const { return head_.load(std::memory_order_acquire); }

 private:
  struct Slot {
    std::atomic<uint64_t> seq{0};  // 2n+2 once fault n is whole in it; odd while written
    std::atomic<uint64_t> w0{0}, w1{0}, w2{0};
  };
  std::array<Slot, kSlots> slots_;
  std::atomic<uint64_t> head_{0};
};

template <class Fn>
uint64_t FaultBoard::read_since(uint64_t& seen, Fn&& fn) const {
  uint64_t end = head();
  uint64_t lost = 0;
  if (end - seen > kSlots) {
    lost = end - seen - kSlots;
    seen = end - kSlots;
  }
  for (; seen != end; ++seen) {
    const Slot& s = slots_[seen % kSlots];
    uint64_t before = s.seq.load(std::memory_order_acquire);
    Fault f;
    uint64_t w0 = s.w0.load(std::memory_order_relaxed);
    f.ctx = s.w1.load(std::memory_order_relaxed);
    f.id = s.w2.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (before != 2 * seen + 2 || s.seq.load(std::memory_order_relaxed) != before) {
      ++lost;  // overwritten by a later fault while we read
      continue;
    }
    f.scope = FaultScope(uint8_t(w0 >> 32));
    f.event = int32_t(uint32_t(w0));
    fn(f);
  }
  return lost;
}

// The watcher: a thread reading the async events of `contexts` until destroyed.
class AsyncWatcher {
 public:
  AsyncWatcher(std::vector<ibv_context*> contexts, std::shared_ptr<FaultBoard> board);
  ~AsyncWatcher();
  AsyncWatcher(const AsyncWatcher&) = delete;
  AsyncWatcher& operator=(const AsyncWatcher&) = delete;

 private:
  void run(std::stop_token stop);

  std::vector<ibv_context*> contexts_;
  std::shared_ptr<FaultBoard> board_;
  int wake_ = -1;  // an eventfd that ends the thread's wait at destruction
  std::jthread thread_;
};

}  // namespace mtperf::rdma
