// Fuzz target: perftest's out-of-band exchange (peers/perftest/protocol.hpp), what `mtperf run
// --peer perftest` applies to a perftest server's bytes: the version, the system data, the MTU,
// the key messages and the report.
//
// Input: a first byte that picks the program (its low bits) and whether the keys carry GIDs
// (bit 7); the rest is the server's byte stream, cut into the answers each step reads (a step
// that reads nothing proceeds).
//
// Findings beyond crashes and sanitizer reports: anything thrown but a ProtocolError; an
// exchange that goes on after an error or past its end; a step that sends nothing where perftest
// reads; a key message that decodes but does not decode again, the same, from its own encoding.
#include <cstdint>
#include <exception>

#include "fuzz/fuzz_support.hpp"
#include "verbs/perftest_wire.hpp"

namespace mtperf::fuzz {
namespace {

using perftest::ClientExchange;

void exchange(Bytes& in) {
  ClientExchange::Config c;
  std::uint8_t pick = in.u8();
  c.program = perftest::Program(pick % 5);
  c.with_gid = (pick & 0x80) == 0;
  c.keys.qpn = 0x100;
  c.keys.gid[10] = 0xff;
  c.keys.gid[11] = 0xff;
  ClientExchange x(c);
  for (int steps = 0; !x.finished(); ++steps) {
    check(steps < 64, "an exchange ends");
    std::size_t want = x.answer_bytes();
    if (want == 0) {
      x.proceed();
      continue;
    }
    check(!x.outgoing().empty(), "a step that reads also sends");
    if (in.left() < want) return;
    std::span<const std::uint8_t> answer = in.take(want);
    try {
      x.take(answer);
    } catch (const perftest::ProtocolError&) {
      return;  // named: the exchange ends there
    }
    if (want == perftest::kKeyGidBytes || want == perftest::kKeyBytes) {
      perftest::Keys k = perftest::decode_keys(answer, c.with_gid);
      perftest::Keys again =
          perftest::decode_keys(perftest::encode_keys(k, c.with_gid), c.with_gid);
      check(again.qpn == k.qpn && again.psn == k.psn && again.rkey == k.rkey &&
                again.vaddr == k.vaddr && again.gid == k.gid && again.srqn == k.srqn,
            "keys decode the same from their own encoding");
    }
  }
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mtperf::fuzz::Bytes in(data, size);
  try {
    mtperf::fuzz::exchange(in);
  } catch (const std::exception& e) {
    mtperf::fuzz::check(false, "only ProtocolError is thrown");
  }
  return 0;
}
