#pragma once
// The floor: each mtperf workload as the smallest loop of the same system calls with the same
// socket options as mtperf's socket transport (transports/socket/, transports/inet/), over
// loopback. Nothing else happens on the data path: no event loop, no completions, no clock
// reads, no counters beyond one relaxed store per call. What mtperf measures above this is
// mtperf's own cost (docs/performance.md).
//
// Engine::uring is the same for mtperf's io_uring transport with its defaults (`-T uring`): the
// same ring set-up, operations and flags in a bare ring loop per thread (uring.cpp), for
// stream, maerts and rr, and rr with many flows on each side's one thread.
//
// Threads: the client side runs on one CPU, the server side on another (or the same); each
// thread pins itself with sched_setaffinity before its loop. The main thread only sleeps and
// reads the counters at the window's edges.
#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace mtperf::floors {

enum class Workload { stream, maerts, bidir, rr, udp_rr, crr };
enum class Engine { socket, uring };

struct Options {
  Workload workload = Workload::stream;
  Engine engine = Engine::socket;
  uint32_t flows = 1;         // rr flows, all on the client's one thread and the server's (uring)
  uint32_t msg_size = 65536;  // bytes per send (streams)
  uint32_t req_size = 1;      // bytes (rr, crr)
  uint32_t resp_size = 1;
  int client_cpu = 0;  // -1: not pinned
  int server_cpu = 1;
  double seconds = 5;  // measured window
  double warmup = 0.5;
  // TCP_NODELAY: as mtperf, on except for streams of sends under 16 KiB (cli/run_options.cpp).
  bool nodelay() const;
  // The receive size mtperf uses (workloads/engine_config.cpp buffer_size): a TCP stream
  // receiver reads up to max(message, 64 KiB); rr/crr receive into max(req, resp, 64).
  uint32_t recv_size() const;
};

// Written by the loops (one writer each), read by the main thread. Units: bytes received for
// streams, transactions completed for rr and crr. Each on its own cache line.
struct alignas(64) Counter {
  std::atomic<uint64_t> value{0};
  void add(uint64_t n) {
    value.store(value.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
};

struct Shared {
  std::atomic<bool> stop{false};
  Counter counters[2];  // bidir: one per direction
  // The errno of the first client-side loop that ended before the stop (0: none did): a floor
  // that stopped early would print a rate that is not one.
  std::atomic<int> error{0};
  void fail(int err) {
    int none = 0;
    if (!stop.load(std::memory_order_relaxed)) error.compare_exchange_strong(none, err);
  }
};

// Socket set-up (sockets.cpp); each throws std::runtime_error naming the failed call.
void pin_to(int cpu);
// A TCP listener or bound UDP socket on 127.0.0.1, port 0 (the kernel's choice).
int listen_loopback(bool udp, bool nodelay, int backlog);
sockaddr_in local_of(int fd);
// crr connects on the data path: no exception, -errno on failure.
int connect_tcp(const sockaddr_in& to, bool nodelay) noexcept;
int accept_tcp(int listen_fd);
// The options mtperf puts on every blocking data socket it adopts: SO_RCVTIMEO/SO_SNDTIMEO of
// 200 ms (so a waiting thread notices the end), and for UDP a 4 MiB receive buffer.
void set_io_timeout(int fd, int ms);
void udp_rcvbuf(int fd);

// The loops (loops.cpp). Each returns when `s.stop` is set (client side) or the peer ends.
void stream_send(int fd, uint32_t size, Shared& s);
void stream_recv(int fd, uint32_t size, Counter& c);
void rr_client(int fd, const Options& o, Shared& s);
void rr_server(int fd, const Options& o);
void udp_rr_client(int fd, const Options& o, Shared& s);
void udp_rr_server(int fd, const Options& o, Shared& s);
void crr_client(const sockaddr_in& to, const Options& o, Shared& s);
void crr_server(int listen_fd, const Options& o, Shared& s);

// The io_uring loops (uring.cpp, where liburing was found: MTPERF_FLOOR_URING). Each sets up
// its own ring on its thread; a set-up failure is printed and recorded with Shared::fail.
void uring_stream_send(int fd, uint32_t size, Shared& s);
void uring_stream_recv(int fd, uint32_t size, Counter& c, Shared& s);
void uring_rr_client(const std::vector<int>& fds, const Options& o, Shared& s);
void uring_rr_server(const std::vector<int>& fds, const Options& o, Shared& s);

// Runs the workload: set-up, threads, warm-up, the measured window, teardown. Returns the
// counter's growth over the window and the window's length in seconds.
struct Result {
  uint64_t units = 0;
  double window_s = 0;
  int error = 0;  // Shared::error
};
Result run(const Options& o);

}  // namespace mtperf::floors
