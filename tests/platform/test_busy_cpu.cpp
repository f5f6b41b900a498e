// Integration: a thread pinned to one CPU and spinning for about a second must show up as a busy
// CPU in the utilization computed from the live /proc/stat.
#include <atomic>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "platform/affinity.hpp"
#include "platform/cpu_stat.hpp"

using namespace mtperf;

TEST_CASE("a busy-looping pinned thread shows as a busy CPU", "[cpu_stat][integration]") {
  const auto allowed = current_thread_affinity();
  REQUIRE(!allowed.empty());
  // The last CPU we may use: on a 2-CPU machine that leaves CPU0 to the rest of the system.
  const int cpu = allowed.back();
  INFO("busy CPU " << cpu << " of " << online_cpu_count() << " online");

  std::atomic<bool> pinned{false};
  std::atomic<bool> stop{false};
  std::thread spinner([&] {
    pin_current_thread(cpu);
    pinned.store(true);
    volatile uint64_t spins = 0;
    while (!stop.load(std::memory_order_relaxed))
      spins = spins + 1;
  });
  while (!pinned.load())
    std::this_thread::yield();
  // Let the spinner own the CPU before the window opens.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto before = read_cpu_snapshot();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto after = read_cpu_snapshot();
  stop.store(true);
  spinner.join();

  const auto u = cpu_utilization(before, after);
  const CpuUsage* usage = nullptr;
  for (const auto& [id, use] : u.per_cpu) {
    if (id == cpu) usage = &use;
  }
  REQUIRE(usage != nullptr);
  INFO("util " << usage->util << " % (user " << usage->user << ", sys " << usage->sys << ", steal "
               << usage->steal << ") over " << usage->ticks << " ticks");
  CHECK(usage->ticks > 0);
  CHECK(usage->util >= 90.0);
}
