#pragma once
// sockperf's wire format (sockperf 3.x, `sockperf sr` / `pp` / `ul` / `tp`). There is no control
// protocol: a client connects (TCP) or just sends (UDP), and every message starts with a 14-byte
// header, all fields big-endian:
//
//   offset 0  u64 sequence number   the client counts from 1
//   offset 8  u16 flags             1 client (clear in a server's reply), 2 pong request,
//                                   4 warm-up (neither counted nor answered)
//   offset 10 u32 length            of the whole message, header included, bytes
//
// The server answers a client message that asks for a pong with the same bytes, the client flag
// cleared; it counts the others silently. On TCP the length frames the stream; on UDP one
// datagram is one message. sockperf accepts messages up to 65507 bytes (its MAX_PAYLOAD_SIZE).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace mtperf::sockperf {

// What a sockperf peer sent wrong, or did not send in time, named.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr size_t kHeaderBytes = 14;
inline constexpr uint32_t kMaxMessage = 65507;  // bytes, header included
inline constexpr uint16_t kDefaultPort = 11111;
inline constexpr uint16_t kFlagClient = 1;
inline constexpr uint16_t kFlagPong = 2;
inline constexpr uint16_t kFlagWarmup = 4;

struct Header {
  uint64_t seq = 0;
  uint16_t flags = 0;
  uint32_t length = 0;  // whole message, bytes
};

enum class HeaderStatus { ok, short_header, too_short, too_long };
std::string to_string(HeaderStatus s);

// Writes h into out[0..14). No allocation.
void encode(const Header& h, uint8_t* out) noexcept;
// Reads a header from the n bytes at in; checks kHeaderBytes <= length <= max_message. No
// allocation.
HeaderStatus decode(const uint8_t* in, size_t n, Header& h,
                    uint32_t max_message = kMaxMessage) noexcept;

// Reassembles whole messages from a TCP byte stream into a buffer of max_message bytes allocated
// once by the constructor. feed() hands out each complete message; after an error it takes
// nothing more (error() names it). Not thread-safe.
class StreamFramer {
 public:
  explicit StreamFramer(uint32_t max_message = kMaxMessage);
  // Takes bytes from data[0..n); calls on_message(const Header&, uint8_t* message) for each
  // whole message (its bytes, header included, valid during the call). Returns false at the
  // first bad header, whose HeaderStatus is then error().
  template <class F>
  bool feed(const uint8_t* data, size_t n, F&& on_message) {
    while (n > 0 && status_ == HeaderStatus::ok) {
      size_t want = have_ < kHeaderBytes ? kHeaderBytes - have_ : size_t(header_.length) - have_;
      size_t take = want < n ? want : n;
      for (size_t i = 0; i < take; ++i)
        buf_[have_ + i] = data[i];
      have_ += take;
      data += take;
      n -= take;
      if (have_ == kHeaderBytes) {
        status_ = decode(buf_, have_, header_, max_);
        if (status_ != HeaderStatus::ok) return false;
      }
      if (have_ >= kHeaderBytes && have_ == header_.length) {
        on_message(static_cast<const Header&>(header_), buf_);
        have_ = 0;
      }
    }
    return status_ == HeaderStatus::ok;
  }
  // Bytes of an incomplete message held (a peer that stopped mid-message leaves them).
  size_t pending() const { return have_; }
  HeaderStatus error() const { return status_; }
  const Header& last_header() const { return header_; }
  StreamFramer(const StreamFramer&) = delete;
  StreamFramer& operator=(const StreamFramer&) = delete;
  ~StreamFramer();

 private:
  uint8_t* buf_;
  uint32_t max_;
  size_t have_ = 0;
  Header header_;
  HeaderStatus status_ = HeaderStatus::ok;
};

}  // namespace mtperf::sockperf
