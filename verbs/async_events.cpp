#include "verbs/async_events.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace mtperf::rdma {

namespace {

uint64_t address(const void* p) {
  return uint64_t(uintptr_t(p));
}

}  // namespace

bool fault_of(const ibv_context* ctx, const ibv_async_event& ev, Fault& out) {
  out = Fault{};
  out.event = int32_t(ev.event_type);
  out.ctx = address(ctx);
  switch (ev.event_type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_PATH_MIG_ERR:
      out.scope = FaultScope::qp;
      out.id = ev.element.qp ? ev.element.qp->qp_num : 0;
      return true;
    case IBV_EVENT_CQ_ERR:
      out.scope = FaultScope::cq;
      out.id = address(ev.element.cq);
      return true;
    case IBV_EVENT_SRQ_ERR:
      out.scope = FaultScope::srq;
      out.id = address(ev.element.srq);
      return true;
    case IBV_EVENT_PORT_ERR:
      out.scope = FaultScope::port;
      out.id = uint64_t(ev.element.port_num);
      return true;
    case IBV_EVENT_DEVICE_FATAL:
      out.scope = FaultScope::device;
      return true;
    default:
      return false;
  }
}

bool drained_of(const ibv_context* ctx, const ibv_async_event& ev, Fault& out) {
  if (ev.event_type != IBV_EVENT_QP_LAST_WQE_REACHED) return false;
  out = Fault{};
  out.scope = FaultScope::last_wqe;
  out.event = int32_t(ev.event_type);
  out.ctx = address(ctx);
  out.id = ev.element.qp ? ev.element.qp->qp_num : 0;
  return true;
}

std::string fault_text(const Fault& f) {
  const char* name = "?";
  switch (ibv_event_type(f.event)) {
    case IBV_EVENT_QP_FATAL:
      name = "IBV_EVENT_QP_FATAL";
      break;
    case IBV_EVENT_QP_REQ_ERR:
      name = "IBV_EVENT_QP_REQ_ERR";
      break;
    case IBV_EVENT_QP_ACCESS_ERR:
      name = "IBV_EVENT_QP_ACCESS_ERR";
      break;
    case IBV_EVENT_PATH_MIG_ERR:
      name = "IBV_EVENT_PATH_MIG_ERR";
      break;
    case IBV_EVENT_CQ_ERR:
      name = "IBV_EVENT_CQ_ERR";
      break;
    case IBV_EVENT_SRQ_ERR:
      name = "IBV_EVENT_SRQ_ERR";
      break;
    case IBV_EVENT_PORT_ERR:
      name = "IBV_EVENT_PORT_ERR";
      break;
    case IBV_EVENT_DEVICE_FATAL:
      name = "IBV_EVENT_DEVICE_FATAL";
      break;
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      name = "IBV_EVENT_QP_LAST_WQE_REACHED";
      break;
    default:
      break;
  }
  std::string s = std::string("asynchronous event ") + name + " (" +
                  ibv_event_type_str(ibv_event_type(f.event)) + ")";
  if (f.scope == FaultScope::port) s += " on port " + std::to_string(f.id);
  return s;
}

bool fault_hits(const Fault& f, uint64_t ctx, uint32_t qp_num, uint32_t port, uint64_t cq,
                uint64_t srq) {
  if (f.ctx != ctx) return false;
  switch (f.scope) {
    case FaultScope::qp:
      return f.id == qp_num;
    case FaultScope::cq:
      return f.id == cq;
    case FaultScope::srq:
      return srq != 0 && f.id == srq;
    case FaultScope::port:
      return f.id == port;
    case FaultScope::device:
      return true;
    case FaultScope::last_wqe:
      return false;  // a notice, not a fault
  }
  return false;
}

void FaultBoard::publish(const Fault& f) {
  uint64_t n = head_.load(std::memory_order_relaxed);
  Slot& s = slots_[n % kSlots];
  s.seq.store(2 * n + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s.w0.store(uint64_t(uint8_t(f.scope)) << 32 | uint32_t(f.event), std::memory_order_relaxed);
  s.w1.store(f.ctx, std::memory_order_relaxed);
  s.w2.store(f.id, std::memory_order_relaxed);
  s.seq.store(2 * n + 2, std::memory_order_release);
  head_.store(n + 1, std::memory_order_release);
}

AsyncWatcher::AsyncWatcher(std::vector<ibv_context*> contexts, std::shared_ptr<FaultBoard> board)
    : contexts_(std::move(contexts)), board_(std::move(board)) {
  for (ibv_context* c : contexts_) {
    int fl = fcntl(c->async_fd, F_GETFL);
    fcntl(c->async_fd, F_SETFL, fl | O_NONBLOCK);
  }
  wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // -1: the watcher notices within 100 ms
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

AsyncWatcher::~AsyncWatcher() {
  thread_.request_stop();
  if (wake_ >= 0) {
    uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);  // at once, not at the poll's next timeout
  }
  if (thread_.joinable()) thread_.join();
  if (wake_ >= 0) ::close(wake_);
}

void AsyncWatcher::run(std::stop_token stop) {
  std::vector<pollfd> fds;
  for (ibv_context* c : contexts_)
    fds.push_back({c->async_fd, POLLIN, 0});
  if (wake_ >= 0) fds.push_back({wake_, POLLIN, 0});
  while (!stop.stop_requested()) {
    if (::poll(fds.data(), fds.size(), 100) <= 0) continue;
    for (size_t i = 0; i < contexts_.size(); ++i) {
      if (!(fds[i].revents & POLLIN)) continue;
      ibv_async_event ev;
      while (ibv_get_async_event(contexts_[i], &ev) == 0) {
        Fault f;
        bool tell = fault_of(contexts_[i], ev, f) || drained_of(contexts_[i], ev, f);
        ibv_ack_async_event(&ev);  // at once: destroying the queue pair waits for it
        if (tell) board_->publish(f);
      }
    }
  }
}

}  // namespace mtperf::rdma
