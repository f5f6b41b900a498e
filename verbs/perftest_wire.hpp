#pragma once
// perftest's out-of-band exchange (linux-rdma/perftest, as Debian 12's perftest 4.5+0.17 speaks
// it; its programs call themselves version "6.06"), the client's side, read from
// src/perftest_communication.c and src/*_bw.c, *_lat.c of that release. A server (`ib_send_bw`
// and the rest without a host name) listens on TCP 18515; every message is fixed-size and read
// by perftest with one read() of exactly that size, so each is sent in one write. In each
// exchange the client writes first, then reads the server's message of the same size:
//
//   client                                  server
//   version: 16 bytes, NUL-padded text ("6.06")       ctx_xchg_data (exchange_versions)
//     ---->  <----                           both refuse a peer older than "5.70"
//   cycle buffer: 4 bytes, big-endian int   (peer >= 5.32: check_sys_data; both keep the larger)
//   cache line:   4 bytes, big-endian int
//   MTU: 2 bytes, "%d" of its ibv_mtu and   (peer >= 5.31; 4 bytes from 5.1; the smaller kept)
//        a NUL ("3\0": 1024 bytes)
//   keys, per QP (ctx_hand_shake): 108 bytes of text, GID included (RoCE; 59 without:
//     "%04x:%04x:%06x:%06x:%08x:%016llx" LID, outstanding reads, QPN, PSN, RKEY, VADDR, then
//     16 GID bytes "%02x:" each, then "%08x:" SRQN; a NUL at the end)
//   both GIDs IPv4-mapped or neither (ctx_check_gid_compatibility), else the server exits
//   QPs to RTR and RTS (ctx_connect), then a barrier: the keys again
//   ... the test: bandwidth tests run -n iterations (the server counts and reports); latency
//       tests ping-pong -n iterations ...
//   close (ctx_close_connection): the keys again, then "done\0" (5 bytes) each way, unread
//
// Nothing here touches a socket or a device: bytes in, bytes out, every field bounded, errors
// thrown as ProtocolError naming the field and quoting what the peer sent. perftest_run.hpp
// drives it over a TCP socket and one queue pair.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mtperf::perftest {

struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr uint16_t kDefaultPort = 18515;
inline constexpr size_t kVersionBytes = 16;  // perftest's MAX_VERSION
inline constexpr size_t kKeyBytes = 59;      // KEY_MSG_SIZE: no GID
inline constexpr size_t kKeyGidBytes = 108;  // KEY_MSG_SIZE_GID
inline constexpr size_t kSysBytes = 4;
inline constexpr size_t kMtuBytes = 2;  // a peer of 5.31 or later
inline constexpr size_t kDoneBytes = 5;
// The version we claim: perftest 4.5-0.17's own, so that it takes the same paths with us as with
// itself (it refuses anything below 5.70).
inline constexpr std::string_view kOurVersion = "6.06";
inline constexpr uint32_t kOldestVersion = 5700;  // 5.70, in thousandths

// A version as perftest compares them (atof of the text): thousandths, "6.06" -> 6060,
// "5.4" -> 5400. Throws ProtocolError quoting the text unless it is digits, a dot and 1..3
// digits, NUL-terminated within kVersionBytes.
uint32_t parse_version(std::span<const uint8_t> bytes);
std::array<uint8_t, kVersionBytes> encode_version(std::string_view v);

// One QP's keys.
struct Keys {
  uint16_t lid = 0;
  uint16_t out_reads = 0;  // READs the side keeps in flight (perftest's max_rd_atomic)
  uint32_t qpn = 0;        // 24 bits
  uint32_t psn = 0;        // 24 bits
  uint32_t rkey = 0;
  uint64_t vaddr = 0;
  std::array<uint8_t, 16> gid{};
  uint32_t srqn = 0;
};

// Exactly kKeyGidBytes (with_gid) or kKeyBytes, NUL last.
std::vector<uint8_t> encode_keys(const Keys& k, bool with_gid);
// Strict: every field its fixed width of lowercase or uppercase hex digits, the colons, the NUL;
// QPN and PSN within 24 bits. Throws ProtocolError naming the field and quoting the text.
Keys decode_keys(std::span<const uint8_t> bytes, bool with_gid);

// Whether a GID is IPv4-mapped (::ffff:a.b.c.d), as ctx_check_gid_compatibility asks.
bool ipv4_mapped(const std::array<uint8_t, 16>& gid);

// The MTU message: "%d\0" of an ibv_mtu (1..5).
std::array<uint8_t, kMtuBytes> encode_mtu(uint8_t mtu);
uint8_t decode_mtu(std::span<const uint8_t> bytes);  // throws ProtocolError unless 1..5

std::array<uint8_t, kSysBytes> encode_int(int32_t v);
int32_t decode_int(std::span<const uint8_t> bytes);

// Which perftest program the server runs: each orders its exchanges in its own way.
enum class Program : uint8_t { send_bw, write_bw, read_bw, send_lat, write_lat };
std::string_view to_string(Program p);  // "send_bw", ...
// Throws ProtocolError listing the choices.
Program parse_program(std::string_view s);

// The bandwidth report a write_bw or read_bw server hands the client at the end
// (xchg_bw_reports, peers of 5.33 or later): each field one exchange, big-endian; the doubles
// byte-swapped IEEE 754. A passive server (not -b) sends a report it never filled: its bytes are
// whatever its stack held (seen: 139,798,663,536,922 iterations), so they are read and checked
// for size only, never shown as its count.
struct BwReport {
  uint64_t size = 0;  // bytes per message
  uint64_t iters = 0;
  double bw_peak = 0, bw_avg = 0, msg_rate = 0;  // MB/s (2^20), MB/s, Mpps
};

// The client's side of the whole exchange, one step at a time, for a perftest 4.5 server running
// `program` with one QP (-q 1) and a fixed iteration count (-n), read from each program's main():
//
//   send_bw    version, cycle buffer, cache line, MTU, keys | RTS | barrier x3, data, barrier, done
//   write_bw   version, cycle buffer, cache line, MTU, keys | RTS | barrier x2, data, barrier,
//   read_bw      the report (size, iterations, peak, average, message rate), barrier, done
//   send_lat   as send_bw
//   write_lat  version, cycle buffer, cache line, MTU, keys x2 | RTS | barrier x2, data (no close)
//
// (a barrier: the key message again, both ways; "done": 5 bytes written, none read). At `rts`
// and `data` nothing is exchanged: the caller moves its QP to RTS, or runs the test, then calls
// proceed(). Not thread-safe.
class ClientExchange {
 public:
  enum class Step : uint8_t {
    version,
    cycle_buffer,
    cache_line,
    mtu,
    keys,
    rts,
    barrier,
    data,
    report_size,
    report_iters,
    report_peak,
    report_avg,
    report_rate,
    done,
    finished
  };
  struct Config {
    Program program = Program::send_bw;
    int32_t cycle_buffer = 4096;  // our page size, bytes
    int32_t cache_line = 64;      // bytes
    uint8_t mtu = 3;              // our port's active MTU, ibv_mtu
    Keys keys;                    // our QP's (its GID: RoCE)
    bool with_gid = true;         // RoCE: the key messages carry GIDs
    BwReport report;              // ours, for write_bw and read_bw
  };
  explicit ClientExchange(const Config& c);

  Step step() const { return steps_[at_]; }
  bool finished() const { return step() == Step::finished; }
  // The bytes to send now (exactly, in one write; empty at rts, data and finished), and the
  // size of the answer to read (0: none).
  const std::vector<uint8_t>& outgoing() const { return out_; }
  size_t answer_bytes() const;
  // The server's answer to the current step (answer_bytes() bytes; none for done): checked,
  // then the next step. Throws ProtocolError (a version older than 5.70, a malformed field, GIDs
  // of different address families) quoting what perftest sent.
  void take(std::span<const uint8_t> answer);
  // Past rts or data (the caller did its part).
  void proceed();
  // Ours for the report steps (write_bw, read_bw): what the data phase measured.
  void set_report(const BwReport& r);

  // What was agreed (valid once past the step that sets it).
  uint32_t peer_version() const { return peer_version_; }
  const std::string& peer_version_text() const { return peer_version_text_; }
  int32_t cycle_buffer() const { return cycle_buffer_; }
  int32_t cache_line() const { return cache_line_; }
  uint8_t mtu() const { return mtu_; }
  const Keys& peer_keys() const { return peer_keys_; }
  const BwReport& peer_report() const { return peer_report_; }

 private:
  void prepare();
  // take's steps that check what perftest sent.
  void check_answer(std::span<const uint8_t> a) const;
  void take_version(std::span<const uint8_t> a);
  void take_keys(std::span<const uint8_t> a);
  Config cfg_;
  std::vector<Step> steps_;
  size_t at_ = 0;
  std::vector<uint8_t> out_;
  uint32_t peer_version_ = 0;
  std::string peer_version_text_;
  int32_t cycle_buffer_ = 0, cache_line_ = 0;
  uint8_t mtu_ = 0;
  Keys peer_keys_;
  BwReport peer_report_;
};

std::string_view to_string(ClientExchange::Step s);

// The words perftest's server must be started with for an mtperf client test: the program and
// its flags (-n iterations, -s bytes, -t tx depth when > 0, -x GID index when >= 0, -F), e.g.
// "ib_send_bw -n 1000 -s 65536 -F".
std::string server_command(Program program, uint64_t iterations, uint32_t size, int gid_index,
                           int tx_depth);

}  // namespace mtperf::perftest
