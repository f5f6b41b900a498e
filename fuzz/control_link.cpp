// Fuzz target: the control connection's frames as a peer sends them, before and after sealing
// (control/link.hpp) — what the handshake reads (HELLO's nonce, WELCOME's challenge) and every
// sealed frame after it — read by the blocking reader (Link::recv) and by the event loop's
// (Link::try_recv, the bytes arriving in pieces).
//
// Input: a mode byte (bit 0: the link is sealed, with a fixed key and nonces; bits 1..7: the
// size of the pieces try_recv sees, 1..128 bytes), then the peer's bytes.
//
// Findings beyond crashes and sanitizer reports: an exception other than ProtocolError; the two
// readers taking different frames or ending differently from the same bytes; a nonce accepted
// that is not 32 lowercase hex characters.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "control/link.hpp"
#include "fuzz/fuzz_support.hpp"

namespace mtperf::fuzz {
namespace {

constexpr uint32_t kMaxBody = 4096;
const std::string kKey = "mtperf fuzz key";
const std::string kNonceInit(32, 'a'), kNonceResp(32, 'b');

struct Outcome {
  std::vector<std::string> frames;  // type and canonical body of each frame taken
  std::string end;                  // how reading ended
};

void take(Outcome& out, const control::Message& m) {
  out.frames.push_back(std::string(control::to_string(m.type)) + " " + m.body.dump());
  try {
    const std::string n = control::nonce_field(m.body, "nonce", "HELLO");
    check(n.size() == 32 && n.find_first_not_of("0123456789abcdef") == std::string::npos,
          "nonce_field accepted a nonce of the wrong form");
  } catch (const control::ProtocolError&) {
  }
}

// The bytes through a socket pair (the writer's end closed: the reader meets EOF after them).
int feed(const std::string& bytes) {
  int sv[2];
  check(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
  int size = int(bytes.size()) + 4096;
  ::setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  ::setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  check(::write(sv[0], bytes.data(), bytes.size()) == ssize_t(bytes.size()), "feed");
  ::close(sv[0]);
  return sv[1];
}

Outcome blocking(const std::string& bytes, bool sealed) {
  Outcome out;
  int fd = feed(bytes);
  control::Link link(fd);
  if (sealed) link.seal(kKey, false, kNonceInit, kNonceResp);
  try {
    for (;;)
      take(out, link.recv(kMaxBody, control::deadline_in(1000)));
  } catch (const control::ProtocolError& e) {
    out.end = e.what();
  }
  ::close(fd);
  return out;
}

Outcome pieces(const std::string& bytes, bool sealed, size_t piece) {
  Outcome out;
  int sv[2];
  check(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
  control::Link link(sv[1]);
  if (sealed) link.seal(kKey, false, kNonceInit, kNonceResp);
  try {
    control::Message m;
    for (size_t at = 0;; at += piece) {
      if (at < bytes.size()) {
        const size_t n = std::min(piece, bytes.size() - at);
        check(::write(sv[0], bytes.data() + at, n) == ssize_t(n), "feed a piece");
      } else if (sv[0] >= 0) {
        ::close(sv[0]);
        sv[0] = -1;
      }
      while (link.try_recv(m, kMaxBody))
        take(out, m);
      check(at <= bytes.size() + piece, "try_recv missed the end of the bytes");
    }
  } catch (const control::ProtocolError& e) {
    out.end = e.what();
  }
  if (sv[0] >= 0) ::close(sv[0]);
  ::close(sv[1]);
  return out;
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mtperf::fuzz;
  Bytes in(data, size);
  const uint8_t mode = in.u8();
  auto rest = in.take(60000);
  const std::string bytes(reinterpret_cast<const char*>(rest.data()), rest.size());
  const bool sealed = mode & 1;
  const Outcome a = blocking(bytes, sealed);
  const Outcome b = pieces(bytes, sealed, size_t(mode >> 1) + 1);
  check(a.frames == b.frames, "recv and try_recv took different frames");
  // Both end at the same place: EOF (the blocking reader's timeout never comes: EOF is first)
  // or the same refusal.
  check(a.end == b.end, "recv and try_recv ended differently");
  return 0;
}
