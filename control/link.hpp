#pragma once
// A control connection whose frames, once both ends have proven the pre-shared key, are sealed:
// each carries a MAC that binds it to the key, to this connection and to its place in the
// sequence, so that a frame modified, injected, replayed (from this connection or another) or
// reordered on the path is refused and ends the connection.
//
// Sealed frame: the plain frame (protocol.hpp: header | body) followed by a 32-byte trailer,
//   T = HMAC-SHA256(K_dir, seq | header | body)
// seq a 64-bit big-endian count of the frames sent in that direction since sealing began (0
// first), K_dir the direction's key:
//   K_dir = HMAC-SHA256(K, "mtperf seal" 0x00 LABEL 0x00 N_init 0x00 N_resp)
// LABEL "initiator" for the frames of the end that connected, "responder" for the other's;
// N_init and N_resp the two ends' fresh nonces of the handshake (HELLO's nonce, WELCOME's
// challenge). Both nonces are fresh per connection, so no frame of one connection is valid on
// another, and each direction has its own key, so a frame cannot be reflected back to its sender.
// What is sealed is authenticated, not hidden: docs/security.md says what a path attacker sees.
//
// The proofs of the handshake (each end shows the other it has K before anything that makes a
// host send traffic is taken from it):
//   P(role) = hex(HMAC-SHA256(K, "mtperf prove" 0x00 ROLE 0x00 N_init 0x00 N_resp))
// ROLE "server" (control) or "coordinator" (fleet): the responder's proof, in WELCOME.
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <openssl/types.h>

#include "control/protocol.hpp"

namespace mtperf::control {

class Link {
 public:
  Link() = default;
  explicit Link(int fd) : fd_(fd) {}
  ~Link();
  int fd() const { return fd_; }
  void set_fd(int fd) { fd_ = fd; }
  bool sealed() const { return sealed_; }
  // From now on every frame either way is sealed. `initiator`: this end connected.
  void seal(std::string_view key, bool initiator, std::string_view nonce_init,
            std::string_view nonce_resp);

  // The whole frame by deadline_ns (protocol.hpp's deadlines). Sealed: a frame whose trailer
  // does not match throws ProtocolError saying so (an ERROR frame's text is quoted, marked as
  // unauthenticated). Sends from several threads are serialised (the sequence is per frame).
  void send(const Message& m, int64_t deadline_ns);
  // The same for a frame encode() made (one encoding sent to many links).
  void send_frame(std::string frame, int64_t deadline_ns);
  Message recv(uint32_t max_body, int64_t deadline_ns);
  // Without blocking: reads what has arrived of the next frame (never past its end) and returns
  // true with `out` once the whole frame is in and checked; false when more is to come. For an
  // event loop over many links (a peer that stalls mid-frame holds up no one). Throws as recv()
  // does, and on EOF. Not to be mixed with recv() while a frame is partly read.
  bool try_recv(Message& out, uint32_t max_body);

 private:
  Message finish(std::string& frame, const unsigned char* got);

  // Each direction's HMAC-SHA256, keyed once at seal(): a frame's trailer re-initialises it
  // (the key kept) instead of setting up a MAC per frame.
  struct MacFree {
    void operator()(EVP_MAC_CTX* c) const;
  };
  using Mac = std::unique_ptr<EVP_MAC_CTX, MacFree>;

  int fd_ = -1;
  bool sealed_ = false;
  Mac send_mac_, recv_mac_;
  uint64_t send_seq_ = 0, recv_seq_ = 0;
  std::mutex send_mu_;
  std::string partial_;  // try_recv(): the frame so far
};

// The responder's proof P(role) of the drawing above.
std::string prove(std::string_view key, std::string_view role, std::string_view nonce_init,
                  std::string_view nonce_resp);

// body[field] checked as a nonce (32 lowercase hex characters, as random_hex(16) makes them);
// ProtocolError naming `who` and the field otherwise.
std::string nonce_field(const nlohmann::json& body, const char* field, const std::string& who);

// protocol.hpp's frame I/O over a Link.
void send_message_until(Link& l, const Message& m, int64_t deadline_ns);
Message recv_message_until(Link& l, uint32_t max_body, int64_t deadline_ns);
Message expect_until(Link& l, MsgType want, uint32_t max_body, int64_t deadline_ns);
void send_message(Link& l, const Message& m, int timeout_ms);
Message recv_message(Link& l, uint32_t max_body, int timeout_ms);
Message expect(Link& l, MsgType want, uint32_t max_body, int timeout_ms);

}  // namespace mtperf::control
