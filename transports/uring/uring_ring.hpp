#pragma once
// Private to the io_uring engine's sources: the ring behind UringEngine's opaque pointer and the
// constants its two source files share.
#include <liburing.h>

#include <cstdint>

#include "transports/uring/uring_engine.hpp"

namespace mtperf {

struct UringEngine::Ring {
  io_uring ring{};
};

inline constexpr uint64_t kUringInternal = ~uint64_t(0);  // cancels: their CQEs are dropped
inline constexpr uint32_t kUringCqeBatch = 64;
inline constexpr uint16_t kUringBufGroup = 0;

}  // namespace mtperf
