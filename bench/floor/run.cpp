// Set-up, threads and the measured window of the floor.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/floor/floor.hpp"

namespace mtperf::floors {
namespace {

constexpr int kIoTimeoutMs = 200;  // mtperf's default SO_RCVTIMEO/SO_SNDTIMEO

// A connected TCP pair over loopback, both ends with mtperf's options for blocking sockets
// (the I/O timeouts only where the socket engine sets them: not for io_uring).
struct Pair {
  int client = -1, server = -1;
};

Pair tcp_pair(bool nodelay, bool timeouts = true) {
  int l = listen_loopback(false, nodelay, 4);
  Pair p;
  p.client = connect_tcp(local_of(l), nodelay);
  if (p.client < 0) throw std::runtime_error("connect to the floor's listener failed");
  p.server = accept_tcp(l);
  ::close(l);
  if (timeouts) {
    set_io_timeout(p.client, kIoTimeoutMs);
    set_io_timeout(p.server, kIoTimeoutMs);
  }
  return p;
}

Pair udp_pair() {
  Pair p;
  p.server = listen_loopback(true, false, 0);
  p.client = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (p.client < 0) throw std::runtime_error("UDP socket failed");
  udp_rcvbuf(p.client);
  sockaddr_in s = local_of(p.server);
  if (connect(p.client, reinterpret_cast<sockaddr*>(&s), sizeof s) != 0)
    throw std::runtime_error("UDP connect failed");
  sockaddr_in c = local_of(p.client);
  if (connect(p.server, reinterpret_cast<sockaddr*>(&c), sizeof c) != 0)
    throw std::runtime_error("UDP connect failed");
  set_io_timeout(p.client, kIoTimeoutMs);
  set_io_timeout(p.server, kIoTimeoutMs);
  return p;
}

class Threads {
 public:
  template <class F>
  void start(int cpu, F f) {
    threads_.emplace_back([cpu, f] {
      pin_to(cpu);
      f();
    });
  }
  ~Threads() {
    for (auto& t : threads_)
      t.join();
  }

 private:
  std::vector<std::thread> threads_;
};

uint64_t total(const Shared& s) {
  return s.counters[0].value.load(std::memory_order_relaxed) +
         s.counters[1].value.load(std::memory_order_relaxed);
}

// Sleeps through the warm-up and the window, then tells the loops to stop.
Result measure(const Options& o, Shared& s) {
  using clock = std::chrono::steady_clock;
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
  uint64_t u0 = total(s);
  auto t0 = clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
  uint64_t u1 = total(s);
  auto t1 = clock::now();
  int err = s.error.load();
  s.stop.store(true);
  return Result{u1 - u0, std::chrono::duration<double>(t1 - t0).count(), err};
}

void start_stream(const Options& o, Shared& s, Threads& t, std::vector<int>& fds) {
  bool nd = o.nodelay();
  uint32_t m = o.msg_size, r = o.recv_size();
  Counter* c0 = &s.counters[0];
  Counter* c1 = &s.counters[1];
  Pair a = tcp_pair(nd);
  fds.insert(fds.end(), {a.client, a.server});
  if (o.workload == Workload::maerts) {
    t.start(o.server_cpu, [a, m, &s] { stream_send(a.server, m, s); });
    t.start(o.client_cpu, [a, r, c0] { stream_recv(a.client, r, *c0); });
    return;
  }
  t.start(o.client_cpu, [a, m, &s] { stream_send(a.client, m, s); });
  t.start(o.server_cpu, [a, r, c0] { stream_recv(a.server, r, *c0); });
  if (o.workload != Workload::bidir) return;
  Pair b = tcp_pair(nd);  // the other direction: a second flow, as mtperf's bidir -P 1
  fds.insert(fds.end(), {b.client, b.server});
  t.start(o.server_cpu, [b, m, &s] { stream_send(b.server, m, s); });
  t.start(o.client_cpu, [b, r, c1] { stream_recv(b.client, r, *c1); });
}

void start_socket(const Options& o, Shared& s, Threads& t, std::vector<int>& fds) {
  switch (o.workload) {
    case Workload::stream:
    case Workload::maerts:
    case Workload::bidir:
      start_stream(o, s, t, fds);
      break;
    case Workload::rr: {
      Pair p = tcp_pair(true);
      fds.insert(fds.end(), {p.client, p.server});
      t.start(o.client_cpu, [p, &o, &s] { rr_client(p.client, o, s); });
      t.start(o.server_cpu, [p, &o] { rr_server(p.server, o); });
      break;
    }
    case Workload::udp_rr: {
      Pair p = udp_pair();
      fds.insert(fds.end(), {p.client, p.server});
      t.start(o.client_cpu, [p, &o, &s] { udp_rr_client(p.client, o, s); });
      t.start(o.server_cpu, [p, &o, &s] { udp_rr_server(p.server, o, s); });
      break;
    }
    case Workload::crr: {
      int l = listen_loopback(false, true, 1024);
      fds.push_back(l);
      set_io_timeout(l, kIoTimeoutMs);  // accept() wakes up to see the end
      sockaddr_in to = local_of(l);
      t.start(o.client_cpu, [to, &o, &s] { crr_client(to, o, s); });
      t.start(o.server_cpu, [l, &o, &s] { crr_server(l, o, s); });
      break;
    }
  }
}

#ifdef MTPERF_FLOOR_URING
// The io_uring floor's threads: one ring each (uring.cpp); rr's flows share each side's ring.
void start_uring(const Options& o, Shared& s, Threads& t, std::vector<int>& fds) {
  uint32_t m = o.msg_size, r = o.recv_size();
  Counter* c0 = &s.counters[0];
  if (o.workload == Workload::rr) {
    std::vector<int> client, server;
    for (uint32_t i = 0; i < o.flows; ++i) {
      Pair p = tcp_pair(true, false);
      client.push_back(p.client);
      server.push_back(p.server);
      fds.insert(fds.end(), {p.client, p.server});
    }
    t.start(o.client_cpu, [client, &o, &s] { uring_rr_client(client, o, s); });
    t.start(o.server_cpu, [server, &o, &s] { uring_rr_server(server, o, s); });
    return;
  }
  Pair a = tcp_pair(o.nodelay(), false);
  fds.insert(fds.end(), {a.client, a.server});
  bool maerts = o.workload == Workload::maerts;
  int from = maerts ? a.server : a.client, to = maerts ? a.client : a.server;
  t.start(maerts ? o.server_cpu : o.client_cpu, [from, m, &s] { uring_stream_send(from, m, s); });
  t.start(maerts ? o.client_cpu : o.server_cpu,
          [to, r, c0, &s] { uring_stream_recv(to, r, *c0, s); });
}
#else
void start_uring(const Options&, Shared&, Threads&, std::vector<int>&) {
  throw std::runtime_error("built without liburing: no io_uring floor");
}
#endif

}  // namespace

bool Options::nodelay() const {
  bool stream =
      workload == Workload::stream || workload == Workload::maerts || workload == Workload::bidir;
  return !(stream && msg_size < 16 * 1024);
}

uint32_t Options::recv_size() const {
  bool stream =
      workload == Workload::stream || workload == Workload::maerts || workload == Workload::bidir;
  uint32_t size = stream ? std::max<uint32_t>(msg_size, 64 * 1024) : std::max(req_size, resp_size);
  return std::max<uint32_t>(size, 64);
}

Result run(const Options& o) {
  Shared s;
  std::vector<int> fds;
  Result r;
  {
    Threads t;  // joined before the descriptors close
    if (o.engine == Engine::uring) {
      start_uring(o, s, t, fds);
    } else {
      start_socket(o, s, t, fds);
    }
    r = measure(o, s);
  }
  for (int fd : fds)
    ::close(fd);
  return r;
}

}  // namespace mtperf::floors
