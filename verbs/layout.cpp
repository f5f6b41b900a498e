#include "verbs/layout.hpp"

namespace mtperf::rdma {

uint64_t cq_entries(const Layout& l) {
  return uint64_t(l.conns) * (l.sq_depth + l.recv_per_qp) + l.srq_depth;
}

}  // namespace mtperf::rdma
