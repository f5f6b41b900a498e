#include "verbs/fork_safety.hpp"

#include <infiniband/verbs.h>

#include <cstring>
#include <mutex>

namespace mtperf::rdma {

std::string ensure_fork_safe() {
  static std::once_flag once;
  static int rc = 0;
  std::call_once(once, [] { rc = ibv_fork_init(); });
  if (rc == 0) return "";
  return std::string("ibv_fork_init: ") + std::strerror(rc) +
         " (registered memory is not protected from a fork during the test)";
}

bool fork_safe() {
  return ibv_is_fork_initialized() != IBV_FORK_DISABLED;
}

}  // namespace mtperf::rdma
