#pragma once
// The I/O side of one emulated adapter pair: a thread, pinned to the adapter's interrupt CPU,
// that moves packets between the two hosts' TUN/TAP devices and the pure AtmLink pipeline.
//
//   loop: read from each device while the link can take a packet (backpressure: otherwise the
//         packet stays in the kernel's queue), run the link up to now (pacing, cells,
//         reassembly; reassembled packets are written to the other device), then sleep in
//         ppoll() until a device is readable, the next PDU is due, or stop() is called.
//
// The sleep is one ppoll() per batch of PDUs, never one per cell: the pacer's credit absorbs
// late wake-ups. Buffers are allocated before the thread starts; the loop does not allocate.
// Thread-safety: stats() and ready() may be called from any thread.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "atmlink/counters.hpp"
#include "atmlink/link.hpp"

namespace mtperf::atm {

struct alignas(64) DriverCounters {
  Counter reads, writes, write_errors, read_errors, wakeups;
};

class LinkDriver {
 public:
  // Takes the link and borrows the two descriptors (non-blocking; they must outlive the
  // driver). cpu < 0: not pinned. Starts the thread and the link's control plane; throws
  // std::runtime_error when the thread cannot start or be pinned.
  LinkDriver(std::unique_ptr<AtmLink> link, int near_fd, int far_fd, int cpu);
  ~LinkDriver();  // stops and joins the thread
  LinkDriver(const LinkDriver&) = delete;
  LinkDriver& operator=(const LinkDriver&) = delete;

  // Waits until both hosts registered (CLIP) or joined (LANE); false on timeout.
  bool wait_ready(std::chrono::milliseconds timeout) const;
  LinkStats stats() const { return link_->stats(); }
  const DriverCounters& counters() const { return counters_; }
  const LinkConfig& config() const { return link_->config(); }
  int cpu() const { return cpu_; }
  void stop() noexcept;
  // stop(), then waits for the thread to end: the link's counters no longer move.
  void stop_and_join() noexcept;

 private:
  void run(std::promise<void>* started);
  bool pump_reads(Side side, std::uint64_t now_ns);

  std::unique_ptr<AtmLink> link_;
  int fds_[2];
  int cpu_;
  int stop_fd_ = -1;  // eventfd: wakes the loop to stop
  std::atomic<bool> stopping_{false};
  std::unique_ptr<std::uint8_t[]> buffer_;
  DriverCounters counters_;
  std::thread thread_;
};

}  // namespace mtperf::atm
