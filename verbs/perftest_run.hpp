#pragma once
// A test against an unmodified perftest server (ib_send_bw, ib_write_bw, ib_read_bw,
// ib_send_lat, ib_write_lat started without a host name, listening on TCP 18515): the client's
// side of perftest's exchange (perftest_wire.hpp) over a connected TCP socket, one RC queue pair
// brought up out of band (oob_qp.hpp: the port and GID of the socket's local address, INIT, RTR,
// RTS), and the data phase each program expects:
//
//   send_bw    `iters` SENDs of `size` bytes, `tx_depth` in flight, one in `signal_every`
//              signalled; the server counts them into the receives it posted
//   write_bw   the same as RDMA WRITEs to the server's buffer (the address and key it sent)
//   read_bw    the same as RDMA READs from it
//   send_lat   ping-pong: a SEND, then the server's SEND back, `iters` times; we send first
//   write_lat  ping-pong by RDMA WRITE: each side writes `size` bytes into the other's buffer
//              whose last byte is the round's number (mod 256), and waits for the other's; the
//              server writes first
//
// Our buffer is perftest's layout for one queue pair: two halves of max(size, cycle buffer)
// bytes, the first sent from, the second the one we advertise (vaddr) for the peer to write.
// Every wait has a deadline: each exchange step, and the data phase while nothing completes.
#include <cstdint>
#include <string>
#include "stats/histogram.hpp"
#include "verbs/perftest_wire.hpp"
#include "verbs/settings.hpp"
#include "verbs/verbs_api.hpp"

namespace mtperf::rdma {

struct PerftestAsk {
  perftest::Program program = perftest::Program::send_bw;
  uint32_t size = 65536;  // bytes per message: the server's -s
  uint64_t iters = 1000;  // messages, or round trips: the server's -n
  RdmaSettings settings;  // tx_depth, signal_every, inline_cap, gid_index, ack_timeout, tos
  int64_t timeout_ns = 10'000'000'000;  // each exchange step; the data phase without progress
};

inline constexpr uint32_t kPerftestMaxSize = 16u << 20;  // bytes per message, at most
inline constexpr uint64_t kPerftestMaxIters = 1'000'000'000;

struct PerftestRun {
  std::string peer_version;  // as perftest says it ("6.06")
  std::string device;        // "rxe0 port 1"
  int gid_index = -1;
  uint32_t path_mtu = 0;     // bytes
  uint64_t completed = 0;    // messages or round trips that completed
  int64_t first_ns = 0;      // the first post (CLOCK_MONOTONIC)
  int64_t last_ns = 0;       // the last completion
  Histogram rtt;             // latency programs: each round trip, ns
  bool interrupted = false;  // SIGINT or SIGTERM during the data phase
};

// Runs the test over `fd` (a connected TCP socket, non-blocking; `name`: the server as errors
// show it). Throws std::runtime_error naming the step (perftest::ProtocolError for what perftest
// sent); everything made on the device is destroyed on every path.
PerftestRun run_perftest(VerbsApi& v, int fd, const std::string& name, const PerftestAsk& a);

}  // namespace mtperf::rdma
