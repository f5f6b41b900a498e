#pragma once
// What the two ends of a flow tell each other in rdma_cm's private data: the proof that the
// connection belongs to the test and the flow (magic, version, cookie, flow id), and where the
// sender may write or read (the landing slots of the connection) and how many receives it may
// consume (credits). The same 48 bytes go both ways, big-endian, in the REQ (rdma_connect) and
// in the REP (rdma_accept).
//
// Size: an RC connection request over the IB CM carries 92 bytes of private data, of which
// rdma_cm's own header takes 36 (RDMA_PS_TCP), leaving 56; a REP carries 196. 48 fits both.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mtperf::rdma {

inline constexpr uint32_t kPdMagic = 0x4d545244;  // "MTRD"
inline constexpr uint8_t kPdVersion = 1;
inline constexpr size_t kPdBytes = 48;
inline constexpr size_t kReqPrivateMax = 56;
static_assert(kPdBytes <= kReqPrivateMax);

struct ConnInfo {
  uint8_t verb = 0;          // settings.hpp Verb, as a number: both ends must use the same
  uint32_t flow = 0;         // the flow's id within the test
  uint64_t cookie = 0;       // the test's cookie (READY)
  uint64_t addr = 0;         // the connection's landing slots: first byte, in the sender's space
  uint32_t rkey = 0;         //   their memory region's remote key
  uint32_t slot_size = 0;    //   bytes per slot
  uint16_t slots = 0;        //   slots
  uint16_t credits = 0;      // receives the peer may consume with SEND / WRITE with immediate
  uint64_t credit_addr = 0;  // a 4-byte word (same rkey) where the peer writes credits back
};

enum class PdError : uint8_t { ok, too_short, magic, version };
std::string_view to_string(PdError e);

// Writes exactly kPdBytes bytes.
void encode_conn_info(const ConnInfo& info, uint8_t* out);
// Reads len bytes from data (null with len 0 is fine): ok, or why the bytes are not ours.
PdError decode_conn_info(const void* data, size_t len, ConnInfo& out);

// A connection's private data, checked against what this flow expects (the test's cookie, the
// flow's id, the verb): "" or why not.
std::string check_conn_info(const void* data, size_t len, uint64_t cookie, uint32_t flow,
                            uint8_t verb, ConnInfo& out);

}  // namespace mtperf::rdma
