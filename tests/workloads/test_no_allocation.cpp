// Nothing on the data path allocates (STYLE.md, rule 10): over test::MemoryEngine, which
// allocates nothing after set-up itself, the workers of both sides make no heap allocation and
// free nothing from the moment the clock enters the measured window until it leaves it.
//
// This binary replaces the global operator new and delete with counting ones (each test file
// is its own executable, tests/CMakeLists.txt, so no other test is touched). They count every
// call, from any thread, while counting is on; the test turns it on just after the clock has
// entered Phase::measure and off just before it leaves, and the test's own thread only sleeps
// in between. What it cannot see: malloc called directly, and memory the kernel maps.
//
// Under ThreadSanitizer the binary reports itself skipped: TSan's runtime defines operator new
// and delete itself (clang links them in statically), so they cannot be replaced there. The
// plain and the ASan+UBSan builds run it; the TSan build runs test_worker_roles over the same
// engine.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/memory_run.hpp"
#include "tests/support/skip.hpp"

#if defined(__SANITIZE_THREAD__)
#define MTPERF_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MTPERF_TEST_TSAN 1
#endif
#endif

namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_news{0};
std::atomic<uint64_t> g_deletes{0};

}  // namespace

#ifdef MTPERF_TEST_TSAN
MTPERF_TEST_REQUIRES(
    "counting allocations needs its own operator new, and ThreadSanitizer's runtime defines it "
    "(this test runs in the plain and the ASan+UBSan builds)");
#else
namespace {

void* counted_new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1);
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

void* counted_new(std::size_t n, std::align_val_t al) {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1);
  std::size_t a = std::max(std::size_t(al), sizeof(void*));
  void* p = nullptr;
  if (posix_memalign(&p, a, n ? n : 1) != 0) throw std::bad_alloc();
  return p;
}

void counted_delete(void* p) noexcept {
  if (!p) return;
  if (g_counting.load(std::memory_order_relaxed)) g_deletes.fetch_add(1);
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
  try {
    return counted_new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return counted_new(n, a);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return counted_new(n, a);
  } catch (...) {
    return nullptr;
  }
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
void operator delete(void* p, const std::nothrow_t&) noexcept {
  counted_delete(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  counted_delete(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  counted_delete(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  counted_delete(p);
}
#endif

using namespace mtperf;
using mtperf::test::MemoryEngine;
using mtperf::test::MemoryRun;

namespace {

struct Heap {
  uint64_t news = 0, deletes = 0;
};

void start_counting() {
  g_news.store(0);
  g_deletes.store(0);
  g_counting.store(true);
}

Heap stop_counting() {
  g_counting.store(false);
  return {g_news.load(), g_deletes.load()};
}

// Keeps the compiler from dropping an allocation whose result is never used.
void escape(const void* p) {
  asm volatile("" : : "g"(p) : "memory");
}

uint64_t moved(MemoryRun& run) {
  uint64_t n = 0;
  for (Side side : {Side::client, Side::server}) {
    for (uint32_t i = 0; i < run.spec().flows_total(); ++i) {
      CounterValues c = run.counters(side, i);
      n += c.bytes_sent + c.bytes_recv;
    }
  }
  return n;
}

// A whole test over the in-memory engine; the heap operations of the measured window.
Heap measured_window(const TestSpec& spec, uint64_t& moved_in_window) {
  MemoryRun run(spec);
  run.start();
  REQUIRE(run.wait_for_progress());
  run.clock().phase.store(Phase::measure);
  uint64_t before = moved(run);
  start_counting();
  test::sleep_s(0.4);
  Heap h = stop_counting();
  uint64_t after = moved(run);
  run.end();
  CHECK(run.errors(Side::client) == "");
  CHECK(run.errors(Side::server) == "");
  moved_in_window = after - before;
  return h;
}

TestSpec spec_of(Workload w, uint32_t flows = 1, uint32_t threads = 0) {
  TestSpec s;
  s.workload = w;
  s.flows = flows;
  s.threads = threads;
  s.msg_size = 10000;
  s.req_size = 100;
  s.resp_size = 2000;
  return s;
}

}  // namespace

TEST_CASE("the counting operator new and delete see what is allocated", "[allocation]") {
  start_counting();
  void* p = ::operator new(64);
  escape(p);
  ::operator delete(p);
  std::string s(100, 'x');  // past the small-string buffer: on the heap
  escape(s.data());
  auto* a = new (std::align_val_t(128)) double[4];
  escape(a);
  ::operator delete[](a, std::align_val_t(128));
  Heap h = stop_counting();
  CHECK(h.news == 3);
  CHECK(h.deletes == 2);
}

TEST_CASE("a worker's allocation in the window is counted (a flow failing there)", "[allocation]") {
  // The counter sees the workers' threads: a sender whose receiver goes away in the window
  // writes its error, a string longer than the small-string buffer, from its own thread.
  TestSpec spec = spec_of(Workload::stream);
  MemoryRun run(spec);
  {
    MemoryEngine peer(run.network(), engine_config(spec, 1, MemoryEngine::memory_caps()));
    const int conn = peer.adopt(*run.slot(Side::server, 0).endpoint);
    REQUIRE(conn >= 0);
    run.start(Side::client);
    REQUIRE(run.wait_for_progress());
    run.clock().phase.store(Phase::measure);
    start_counting();
    peer.close(conn);
    bool ended = run.wait_ended(Side::client);
    Heap h = stop_counting();
    REQUIRE(ended);
    run.join(Side::client);
    CHECK(h.news >= 1);
    CHECK(run.slot(Side::client, 0).stats.error == std::string("send: ") + std::strerror(EPIPE));
  }
}

TEST_CASE("nothing on the data path allocates: stream, maerts, bidir", "[allocation]") {
  Workload w = GENERATE(Workload::stream, Workload::maerts, Workload::bidir);
  CAPTURE(to_string(w));
  TestSpec spec = spec_of(w, 2, 1);  // two flows a worker (bidir: four)
  spec.verify_seed = 7;
  uint64_t moved_in_window = 0;
  Heap h = measured_window(spec, moved_in_window);
  CHECK(moved_in_window > 0);
  CHECK(h.news == 0);
  CHECK(h.deletes == 0);
}

TEST_CASE("nothing on the data path allocates: rr and crr", "[allocation]") {
  Workload w = GENERATE(Workload::rr, Workload::crr);
  uint32_t burst = GENERATE(1u, 4u);
  if (w == Workload::crr && burst > 1) return;  // crr has one transaction in flight
  CAPTURE(to_string(w), burst);
  TestSpec spec = spec_of(w, 2, 1);
  spec.burst = burst;
  spec.verify_seed = 7;
  uint64_t moved_in_window = 0;
  Heap h = measured_window(spec, moved_in_window);
  CHECK(moved_in_window > 0);
  CHECK(h.news == 0);
  CHECK(h.deletes == 0);
}
