#include "verbs/device_rules.hpp"

#include "verbs/flow_math.hpp"

namespace mtperf::rdma {

namespace {

std::string limit_text(std::string_view device, const char* what, int limit, const char* attr,
                       uint64_t need) {
  return "rdma: " + std::string(device) + " takes at most " + std::to_string(limit) + " " + what +
         " (" + attr + "); this test needs " + std::to_string(need);
}

}  // namespace

std::string size_refusal(const Layout& l, const DeviceLimits& lim, std::string_view device) {
  // A smaller send queue than wanted is taken (the stream's window shrinks to it:
  // flow_math.hpp's send_queue_ask and stream_window), one without room for a send beside its
  // spare entries is not.
  if (uint64_t(std::max(lim.max_qp_wr, 0)) <= kSqSpare) {
    return limit_text(device, "work requests per queue", lim.max_qp_wr, "max_qp_wr", kSqSpare + 1) +
           " in each send queue (a send, the end of stream and credit words)";
  }
  if (uint64_t(l.recv_per_qp) > uint64_t(std::max(lim.max_qp_wr, 0))) {
    return limit_text(device, "work requests per queue", lim.max_qp_wr, "max_qp_wr",
                      l.recv_per_qp) +
           " receives per queue pair: lower -O recv_depth";
  }
  if (l.srq && uint64_t(l.srq_depth) > uint64_t(std::max(lim.max_srq_wr, 0))) {
    if (lim.max_srq_wr <= 0) {
      return "rdma: " + std::string(device) +
             " has no shared receive queue (max_srq_wr 0); use -O srq=off";
    }
    return limit_text(device, "receives in a shared queue", lim.max_srq_wr, "max_srq_wr",
                      l.srq_depth) +
           ": use -O srq=off, or more threads (--threads)";
  }
  uint64_t cqe = cq_entries(l);
  if (cqe > uint64_t(std::max(lim.max_cqe, 0))) {
    return limit_text(device, "completion-queue entries", lim.max_cqe, "max_cqe", cqe) +
           " for one worker's " + std::to_string(l.conns) +
           " connections: use more threads (--threads), or lower --burst or -O recv_depth";
  }
  if (lim.max_sge < 1) {
    return "rdma: " + std::string(device) + " takes no scatter/gather entry (max_sge " +
           std::to_string(lim.max_sge) + ")";
  }
  return "";
}

std::string device_refusal(DeviceKind k, Verb v, std::string_view device) {
  std::string d(device);
  switch (k) {
    case DeviceKind::ib_roce:
      return "";
    case DeviceKind::iwarp:
      if (v == Verb::write_imm) {
        return "rdma: -O verb=write_imm over " + d +
               ", an iWARP device: iWARP has no RDMA WRITE with immediate; use an InfiniBand or "
               "RoCE device";
      }
      return "rdma: " + d +
             " is an iWARP device: it carries no immediate data, which this transport's credits "
             "and end of stream ride on; use an InfiniBand or RoCE device";
    case DeviceKind::other:
      return "rdma: " + d +
             " is neither InfiniBand, RoCE nor iWARP (EFA, usNIC): it has no reliable-connected "
             "queue pairs connected by rdma_cm, which this transport uses";
  }
  return "";
}

}  // namespace mtperf::rdma
