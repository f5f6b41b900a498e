#include "transports/rdma/settings.hpp"

namespace mtperf::rdma {

Caps rdma_caps(const RdmaSettings& s) {
  Caps c;
  c.one_sided = s.verb == Verb::write;
  c.passive_sender = s.verb == Verb::read;
  c.max_inline = s.inline_cap >= kInlineAuto ? 0 : s.inline_cap;
  c.max_outstanding = s.tx_depth;
  c.stream_depth = s.tx_depth;  // sends in flight per stream (engine_config.cpp)
  c.provides_recv_buffers = true;
  c.unsignaled_sends = true;
  return c;
}

}  // namespace mtperf::rdma
