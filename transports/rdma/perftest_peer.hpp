#pragma once
// The rdma transport's hook for tests against unmodified perftest servers
// (transports/api/foreign_peer.hpp; perftest_peer.cpp).
#include "transports/api/foreign_peer.hpp"

namespace mtperf::rdma {

const ForeignPeerHook& perftest_hook();

}  // namespace mtperf::rdma
