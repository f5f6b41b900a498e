// Nothing on the product's data path allocates, locks or formats (STYLE.md, rule 10): both sides
// of each workload run as the product runs them, Worker<SocketEngine> over real 127.0.0.1 flows
// made by the socket transport's set-up, in the engine's blocking mode (one flow a worker) and
// its epoll mode (two), and from the moment the clock enters the measured window until it leaves
// it no thread of the process allocates, takes a lock or formats text.
//
// This binary counts those calls by defining them itself (each test file is its own executable,
// tests/CMakeLists.txt, so no other test is touched): the global operator new and delete; the
// POSIX locks (pthread_mutex_lock, _trylock, _timedlock, pthread_rwlock_rdlock, _wrlock,
// pthread_spin_lock), which std::mutex and its kin call; and the printf family, formatted to a
// buffer or a stream (std::to_string of a double and most text building also allocate, which the
// first counter sees). The definitions count while counting is on and call the C library's own
// (dlsym(RTLD_NEXT)); the executable exports them (ENABLE_EXPORTS), so that calls from the shared
// libraries of the sanitized builds reach them too. What it cannot see: glibc's internal locks
// (malloc's, stdio's), which no program calls by name, and formatting by hand.
//
// Under ThreadSanitizer the binary reports itself skipped: TSan's runtime defines operator new
// and the pthread locks itself, so they cannot be replaced there. workloads/test_no_allocation
// counts allocations over the in-memory engine in the same way.
#include <dlfcn.h>
#include <pthread.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/skip.hpp"
#include "tests/transports/socket/socket_test_support.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/spec.hpp"
#include "workloads/worker.hpp"

#if defined(__SANITIZE_THREAD__)
#define MTPERF_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MTPERF_TEST_TSAN 1
#endif
#endif

namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocs{0};  // operator new and delete calls
std::atomic<uint64_t> g_locks{0};
std::atomic<uint64_t> g_formats{0};

void count(std::atomic<uint64_t>& c) {
  if (g_counting.load(std::memory_order_relaxed)) c.fetch_add(1);
}

}  // namespace

#ifdef MTPERF_TEST_TSAN
MTPERF_TEST_REQUIRES(
    "counting allocations and locks needs its own operator new and pthread_mutex_lock, and "
    "ThreadSanitizer's runtime defines them (this test runs in the plain and the ASan+UBSan "
    "builds)");
#else
namespace {

// The C library's definition of `name`, looked up once (several threads may race to look it up
// first; each finds the same one).
template <typename Fn>
Fn real(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) {
    std::fputs("test_data_path_calls: the C library has no ", stderr);
    std::fputs(name, stderr);
    std::abort();
  }
  return reinterpret_cast<Fn>(p);
}

// The C library's `name` of type `Fn`, looked up at the first call.
#define MTPERF_REAL(Fn, name)                                         \
  ([] {                                                               \
    static std::atomic<Fn> fn{nullptr};                               \
    Fn f = fn.load(std::memory_order_relaxed);                        \
    if (!f) fn.store(f = real<Fn>(#name), std::memory_order_relaxed); \
    return f;                                                         \
  }())

using MutexFn = int (*)(pthread_mutex_t*);
using TimedMutexFn = int (*)(pthread_mutex_t*, const struct timespec*);
using RwlockFn = int (*)(pthread_rwlock_t*);
using SpinFn = int (*)(pthread_spinlock_t*);
using VsnprintfFn = int (*)(char*, size_t, const char*, va_list);
using VsprintfFn = int (*)(char*, const char*, va_list);
using VfprintfFn = int (*)(FILE*, const char*, va_list);
using VsnprintfChkFn = int (*)(char*, size_t, int, size_t, const char*, va_list);
using VfprintfChkFn = int (*)(FILE*, int, const char*, va_list);

void* counted_new(std::size_t n) {
  count(g_allocs);
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

void* counted_new(std::size_t n, std::align_val_t al) {
  count(g_allocs);
  std::size_t a = std::max(std::size_t(al), sizeof(void*));
  void* p = nullptr;
  if (posix_memalign(&p, a, n ? n : 1) != 0) throw std::bad_alloc();
  return p;
}

void counted_delete(void* p) noexcept {
  if (!p) return;
  count(g_allocs);
  std::free(p);
}

}  // namespace

void* operator new(std::size_t n) {
  return counted_new(n);
}
void* operator new[](std::size_t n) {
  return counted_new(n);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return counted_new(n, a);
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return counted_new(n, a);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  count(g_allocs);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  count(g_allocs);
  return std::malloc(n ? n : 1);
}
void operator delete(void* p) noexcept {
  counted_delete(p);
}
void operator delete[](void* p) noexcept {
  counted_delete(p);
}
void operator delete(void* p, std::size_t) noexcept {
  counted_delete(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  counted_delete(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  counted_delete(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  counted_delete(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  counted_delete(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  counted_delete(p);
}

extern "C" {

int pthread_mutex_lock(pthread_mutex_t* m) {
  count(g_locks);
  return MTPERF_REAL(MutexFn, pthread_mutex_lock)(m);
}
int pthread_mutex_trylock(pthread_mutex_t* m) {
  count(g_locks);
  return MTPERF_REAL(MutexFn, pthread_mutex_trylock)(m);
}
int pthread_mutex_timedlock(pthread_mutex_t* m, const struct timespec* t) {
  count(g_locks);
  return MTPERF_REAL(TimedMutexFn, pthread_mutex_timedlock)(m, t);
}
int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  count(g_locks);
  return MTPERF_REAL(RwlockFn, pthread_rwlock_rdlock)(l);
}
int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  count(g_locks);
  return MTPERF_REAL(RwlockFn, pthread_rwlock_wrlock)(l);
}
int pthread_spin_lock(pthread_spinlock_t* l) {
  count(g_locks);
  return MTPERF_REAL(SpinFn, pthread_spin_lock)(l);
}

int vsnprintf(char* s, size_t n, const char* fmt, va_list ap) {
  count(g_formats);
  return MTPERF_REAL(VsnprintfFn, vsnprintf)(s, n, fmt, ap);
}
int snprintf(char* s, size_t n, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vsnprintf(s, n, fmt, ap);
  va_end(ap);
  return r;
}
int vsprintf(char* s, const char* fmt, va_list ap) {
  count(g_formats);
  return MTPERF_REAL(VsprintfFn, vsprintf)(s, fmt, ap);
}
int sprintf(char* s, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vsprintf(s, fmt, ap);
  va_end(ap);
  return r;
}
int vfprintf(FILE* f, const char* fmt, va_list ap) {
  count(g_formats);
  return MTPERF_REAL(VfprintfFn, vfprintf)(f, fmt, ap);
}
int fprintf(FILE* f, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vfprintf(f, fmt, ap);
  va_end(ap);
  return r;
}
int printf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vfprintf(stdout, fmt, ap);
  va_end(ap);
  return r;
}
// What the calls above become with _FORTIFY_SOURCE.
int __vsnprintf_chk(char* s, size_t n, int flag, size_t slen, const char* fmt, va_list ap) {
  count(g_formats);
  return MTPERF_REAL(VsnprintfChkFn, __vsnprintf_chk)(s, n, flag, slen, fmt, ap);
}
int __snprintf_chk(char* s, size_t n, int flag, size_t slen, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = __vsnprintf_chk(s, n, flag, slen, fmt, ap);
  va_end(ap);
  return r;
}
int __vfprintf_chk(FILE* f, int flag, const char* fmt, va_list ap) {
  count(g_formats);
  return MTPERF_REAL(VfprintfChkFn, __vfprintf_chk)(f, flag, fmt, ap);
}
int __fprintf_chk(FILE* f, int flag, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = __vfprintf_chk(f, flag, fmt, ap);
  va_end(ap);
  return r;
}

}  // extern "C"
#endif

using namespace mtperf;
using namespace mtperf::test;

namespace {

struct Calls {
  uint64_t allocs = 0, locks = 0, formats = 0;
};

void start_counting() {
  g_allocs.store(0);
  g_locks.store(0);
  g_formats.store(0);
  g_counting.store(true);
}

Calls stop_counting() {
  g_counting.store(false);
  return {g_allocs.load(), g_locks.load(), g_formats.load()};
}

void sleep_s(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

// Keeps the compiler from dropping what the control case does for nothing.
void escape(const void* p) {
  asm volatile("" : : "g"(p) : "memory");
}

// Both sides of a test, each side's flows on one worker thread over its own SocketEngine, as
// Transport::run_worker drives them; the test drives the clock.
class SocketRun {
 public:
  explicit SocketRun(const TestSpec& spec) : spec_(spec), transport_(socket_transport()) {
    const uint32_t n = spec_.flows_total();
    for (uint32_t i = 0; i < n; ++i) {
      FlowSetup setup = flow_setup(spec_.proto, opts_, i);
      Flow ends = spec_.workload == Workload::crr ? make_per_transaction(*transport_, setup)
                                                  : make_flow(*transport_, setup);
      for (Side side : {Side::client, Side::server}) {
        auto s = std::make_unique<FlowSlot>();
        s->id = i;
        s->role = role_of(spec_, i, side);
        s->proto = spec_.proto;
        s->endpoint = std::move(side == Side::client ? ends.client : ends.server);
        half(side).job.flows.push_back(s.get());
        half(side).slots.push_back(std::move(s));
      }
    }
    const Caps caps = find_transport("socket").caps;
    for (Half& h : halves_) {
      h.job.spec = &spec_;
      h.job.clock = &clock_;
      h.engine = std::make_unique<SocketEngine>(engine_config(h.job, caps));
    }
  }
  ~SocketRun() {
    clock_.abort.store(true);
    for (Half& h : halves_)
      if (h.thread.joinable()) h.thread.join();
  }
  SocketRun(const SocketRun&) = delete;
  SocketRun& operator=(const SocketRun&) = delete;

  void start() {
    clock_.start_ns = mono_ns();
    clock_.hard_deadline_ns = clock_.start_ns + 30'000 * kMs;
    for (Half& h : halves_)
      h.thread = std::thread([&h] { Worker<SocketEngine>(*h.engine, h.job).run(); });
  }
  // Until every flow has moved a byte both ways (each worker is set up and running), 20 s at
  // most.
  bool wait_for_progress() {
    int64_t end = mono_ns() + 20'000 * kMs;
    while (mono_ns() < end) {
      if (moved_by_every_flow()) return true;
      sleep_s(0.01);
    }
    return false;
  }
  // The end of a test, as the runner does it (test::MemoryRun::end).
  void end() {
    clock_.phase.store(Phase::done);
    half(Side::client).thread.join();
    clock_.finish.store(true);
    half(Side::server).thread.join();
  }
  PhaseClock& clock() { return clock_; }
  uint64_t moved() {
    uint64_t n = 0;
    for (Half& h : halves_)
      for (auto& s : h.slots)
        n += s->counters.bytes_sent.load() + s->counters.bytes_recv.load();
    return n;
  }
  std::string errors() {
    std::string all;
    for (Half& h : halves_)
      for (auto& s : h.slots)
        if (!s->stats.error.empty()) all += s->stats.error + "; ";
    return all;
  }

 private:
  struct Half {
    std::vector<std::unique_ptr<FlowSlot>> slots;
    WorkerJob job;
    std::unique_ptr<SocketEngine> engine;
    std::thread thread;
  };
  Half& half(Side side) { return halves_[side == Side::client ? 0 : 1]; }
  bool moved_by_every_flow() {
    for (Half& h : halves_)
      for (auto& s : h.slots)
        if (s->counters.bytes_sent.load() + s->counters.bytes_recv.load() == 0) return false;
    return true;
  }

  TestSpec spec_;
  SocketOptions opts_;
  std::unique_ptr<Transport> transport_;
  PhaseClock clock_;
  std::array<Half, 2> halves_;
};

struct Case {
  const char* name;
  Workload workload;
  Proto proto;
  uint32_t flows;
  uint32_t burst;
  bool verify;
};

}  // namespace

TEST_CASE("the counters see an allocation, a lock and a format, from any thread", "[data path]") {
  std::mutex m;
  char text[32];
  volatile int seven = 7;
  int len = 0;
  start_counting();
  std::thread other([&] {  // std::thread allocates its state: counted too
    auto* p = new int(seven);
    escape(p);
    delete p;
    m.lock();
    m.unlock();
    len = std::snprintf(text, sizeof text, "%d", seven);
  });
  other.join();
  Calls c = stop_counting();
  CHECK(len == 1);
  CHECK(c.allocs >= 2);  // the new and its delete, and the thread's state
  CHECK(c.locks == 1);
  CHECK(c.formats == 1);
}

TEST_CASE("nothing on the socket data path allocates, locks or formats", "[data path]") {
  const Case c = GENERATE(values<Case>({
      {"TCP stream, blocking mode", Workload::stream, Proto::tcp, 1, 1, false},
      {"TCP stream, two flows, epoll mode, --verify", Workload::stream, Proto::tcp, 2, 1, true},
      {"maerts, blocking mode", Workload::maerts, Proto::tcp, 1, 1, false},
      {"bidir, epoll mode", Workload::bidir, Proto::tcp, 1, 1, false},
      {"UDP stream, blocking mode", Workload::stream, Proto::udp, 1, 1, false},
      {"TCP rr, blocking mode", Workload::rr, Proto::tcp, 1, 1, false},
      {"TCP rr burst 4, two flows, epoll mode, --verify", Workload::rr, Proto::tcp, 2, 4, true},
      {"UDP rr, blocking mode, --verify", Workload::rr, Proto::udp, 1, 1, true},
      {"crr, blocking mode", Workload::crr, Proto::tcp, 1, 1, false},
      {"crr, two flows, epoll mode", Workload::crr, Proto::tcp, 2, 1, false},
  }));
  CAPTURE(c.name);
  TestSpec spec;
  spec.workload = c.workload;
  spec.proto = c.proto;
  spec.flows = c.flows;
  spec.burst = c.burst;
  spec.msg_size = c.proto == Proto::udp ? 1200 : 16384;
  spec.req_size = 100;
  spec.resp_size = 2000;
  spec.verify_seed = c.verify ? 7 : 0;
  SocketRun run(spec);
  run.start();
  REQUIRE(run.wait_for_progress());
  run.clock().phase.store(Phase::measure);
  uint64_t before = run.moved();
  start_counting();
  sleep_s(0.3);
  Calls calls = stop_counting();
  uint64_t moved = run.moved() - before;
  run.end();
  CHECK(run.errors() == "");
  CHECK(moved > 0);
  CHECK(calls.allocs == 0);
  CHECK(calls.locks == 0);
  CHECK(calls.formats == 0);
}
