#pragma once
// mtperf forks while workers run (platform/exec.cpp: --exec hooks, helpers). On a kernel that
// does not copy pinned pages at fork, a page registered with the device and shared
// copy-on-write with the child moves to a new frame at the parent's next write, and the device
// keeps using the old one: data lost without an error. libibverbs' fork support
// (ibv_fork_init) marks registered memory, and the provider's queues, MADV_DONTFORK; it must be
// enabled before the process's first verbs call, which the rdma transport's creation ensures.
// No verbs header: tests ask without one.
#include <string>

namespace mtperf::rdma {

// Enables libibverbs' fork support once per process (a no-op where the kernel needs none).
// Thread-safe. "" when enabled (or unneeded), else ibv_fork_init's error: the transport still
// runs (a fork during the test is what would hurt), and its report says so.
std::string ensure_fork_safe();
// Whether registered memory survives a fork: fork support enabled, or not needed by the kernel.
bool fork_safe();

}  // namespace mtperf::rdma
