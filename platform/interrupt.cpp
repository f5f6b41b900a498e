#include "platform/interrupt.hpp"

#include <signal.h>

#include <atomic>

namespace mtperf {
namespace {

std::atomic<int> g_count{0};
static_assert(std::atomic<int>::is_always_lock_free,
              "the signal handler needs a lock-free counter");

extern "C" void on_interrupt(int) {
  g_count.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interrupts() {
  return g_count.load(std::memory_order_relaxed);
}

void simulate_interrupt() {
  g_count.fetch_add(1, std::memory_order_relaxed);
}

void reset_interrupts() {
  g_count.store(0, std::memory_order_relaxed);
}

}  // namespace mtperf
