#include "verbs/private_data.hpp"

#include <string_view>

namespace mtperf::rdma {
namespace {

template <class T>
void put(uint8_t*& p, T v) {
  for (size_t i = sizeof(T); i-- > 0;) {
    *p++ = uint8_t(v >> (8 * i));
  }
}

template <class T>
T get(const uint8_t*& p) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v = T((v << 8) | *p++);
  return v;
}

}  // namespace

std::string_view to_string(PdError e) {
  switch (e) {
    case PdError::ok:
      return "ok";
    case PdError::too_short:
      return "private data too short";
    case PdError::magic:
      return "not an mtperf connection (wrong magic)";
    case PdError::version:
      return "an mtperf of another version";
  }
  return "?";
}

void encode_conn_info(const ConnInfo& info, uint8_t* out) {
  uint8_t* p = out;
  put<uint32_t>(p, kPdMagic);
  put<uint8_t>(p, kPdVersion);
  put<uint8_t>(p, info.verb);
  put<uint16_t>(p, info.slots);
  put<uint32_t>(p, info.flow);
  put<uint64_t>(p, info.cookie);
  put<uint64_t>(p, info.addr);
  put<uint32_t>(p, info.rkey);
  put<uint32_t>(p, info.slot_size);
  put<uint16_t>(p, info.credits);
  put<uint16_t>(p, 0);  // reserved
  put<uint64_t>(p, info.credit_addr);
}

PdError decode_conn_info(const void* data, size_t len, ConnInfo& out) {
  if (data == nullptr || len < kPdBytes) return PdError::too_short;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  if (get<uint32_t>(p) != kPdMagic) return PdError::magic;
  if (get<uint8_t>(p) != kPdVersion) return PdError::version;
  ConnInfo c;
  c.verb = get<uint8_t>(p);
  c.slots = get<uint16_t>(p);
  c.flow = get<uint32_t>(p);
  c.cookie = get<uint64_t>(p);
  c.addr = get<uint64_t>(p);
  c.rkey = get<uint32_t>(p);
  c.slot_size = get<uint32_t>(p);
  c.credits = get<uint16_t>(p);
  get<uint16_t>(p);
  c.credit_addr = get<uint64_t>(p);
  out = c;
  return PdError::ok;
}

std::string check_conn_info(const void* data, size_t len, uint64_t cookie, uint32_t flow,
                            uint8_t verb, ConnInfo& out) {
  PdError e = decode_conn_info(data, len, out);
  if (e != PdError::ok) return std::string(to_string(e));
  if (out.cookie != cookie) return "not this test's cookie";
  if (out.flow != flow) {
    return "flow " + std::to_string(out.flow) + " where " + std::to_string(flow) + " was expected";
  }
  if (out.verb != verb) return "the peer uses another verb";
  return "";
}

}  // namespace mtperf::rdma
