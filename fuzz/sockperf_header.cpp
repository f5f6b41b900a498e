// Fuzz target: sockperf's message header and its TCP framing (peers/sockperf/protocol.hpp), what
// both `mtperf run --peer sockperf` and `mtperf serve --sockperf` apply to a peer's bytes.
//
// Input: a first byte that picks the framer's bound (14 + byte * 256 bytes) and splits the rest
// into reads of 1..64 bytes (as a socket hands them out); the rest is the peer's byte stream,
// also decoded as one datagram.
//
// Findings beyond crashes and sanitizer reports: a message handed out with a length outside
// 14..bound or not equal to the bytes it holds; a framer that goes on after an error or holds
// more than its bound; a decoded header that does not encode back to the same 14 bytes.
#include <cstdint>
#include <cstring>

#include "fuzz/fuzz_support.hpp"
#include "peers/sockperf/protocol.hpp"

namespace mtperf::fuzz {
namespace {

void frame(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::uint32_t bound = 14 + std::uint32_t(data[0]) * 256;
  const std::size_t chunk = std::size_t(data[0] % 64) + 1;
  sockperf::StreamFramer f(bound);
  bool failed = false;
  for (std::size_t at = 1; at < size;) {
    const std::size_t n = std::min(chunk, size - at);
    bool ok = f.feed(data + at, n, [&](const sockperf::Header& h, std::uint8_t* msg) {
      check(!failed, "no message after an error");
      check(h.length >= sockperf::kHeaderBytes && h.length <= bound, "length within bounds");
      sockperf::Header again;
      check(sockperf::decode(msg, h.length, again, bound) == sockperf::HeaderStatus::ok &&
                again.length == h.length && again.seq == h.seq,
            "the message holds its own header");
    });
    check(f.pending() <= bound, "holds at most one message");
    if (!ok) {
      check(f.error() != sockperf::HeaderStatus::ok, "an error is named");
      failed = true;
    }
    at += n;
  }
}

void datagram(const std::uint8_t* data, std::size_t size) {
  sockperf::Header h;
  if (sockperf::decode(data, size, h) != sockperf::HeaderStatus::ok) return;
  std::uint8_t back[sockperf::kHeaderBytes];
  sockperf::encode(h, back);
  check(std::memcmp(back, data, sizeof back) == 0, "a header encodes back to its bytes");
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mtperf::fuzz::frame(data, size);
  mtperf::fuzz::datagram(data, size);
  return 0;
}
