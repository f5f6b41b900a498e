#include "peers/sockperf/protocol.hpp"

namespace mtperf::sockperf {

std::string to_string(HeaderStatus s) {
  switch (s) {
    case HeaderStatus::ok:
      return "ok";
    case HeaderStatus::short_header:
      return "fewer than 14 bytes, the header's size";
    case HeaderStatus::too_short:
      return "a length below the 14-byte header";
    case HeaderStatus::too_long:
      return "a length over the largest message";
  }
  return "?";
}

void encode(const Header& h, uint8_t* out) noexcept {
  for (int i = 0; i < 8; ++i)
    out[i] = uint8_t(h.seq >> (56 - 8 * i));
  out[8] = uint8_t(h.flags >> 8);
  out[9] = uint8_t(h.flags);
  for (int i = 0; i < 4; ++i)
    out[10 + i] = uint8_t(h.length >> (24 - 8 * i));
}

HeaderStatus decode(const uint8_t* in, size_t n, Header& h, uint32_t max_message) noexcept {
  if (n < kHeaderBytes) return HeaderStatus::short_header;
  h.seq = 0;
  for (int i = 0; i < 8; ++i)
    h.seq = (h.seq << 8) | in[i];
  h.flags = uint16_t((in[8] << 8) | in[9]);
  h.length = 0;
  for (int i = 0; i < 4; ++i)
    h.length = (h.length << 8) | in[10 + i];
  if (h.length < kHeaderBytes) return HeaderStatus::too_short;
  if (h.length > max_message) return HeaderStatus::too_long;
  return HeaderStatus::ok;
}

StreamFramer::StreamFramer(uint32_t max_message)
    : buf_(new uint8_t[max_message < kHeaderBytes ? kHeaderBytes : max_message]),
      max_(max_message) {}

StreamFramer::~StreamFramer() {
  delete[] buf_;
}

}  // namespace mtperf::sockperf
