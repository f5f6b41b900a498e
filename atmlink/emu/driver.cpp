// The emulator thread of one adapter pair (see driver.hpp).
#include "atmlink/emu/driver.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <future>
#include <stdexcept>

#include "platform/affinity.hpp"
#include "platform/clock.hpp"

namespace mtperf::atm {
namespace {

constexpr std::size_t kBufferBytes = 65536;  // any TUN packet or TAP frame
constexpr int kReadBatch = 32;               // reads per device per loop, for fairness

class FdSink final : public LinkSink {
 public:
  FdSink(const int (&fds)[2], DriverCounters& counters) : fds_(fds), counters_(counters) {}
  void deliver(Side to, std::span<const std::uint8_t> packet) override {
    // One write per packet; a TUN/TAP write does not block. A failure (the device going down
    // under us) is counted, not retried.
    if (::write(fds_[int(to)], packet.data(), packet.size()) < 0) {
      counters_.write_errors.add();
    } else {
      counters_.writes.add();
    }
  }

 private:
  const int (&fds_)[2];
  DriverCounters& counters_;
};

}  // namespace

LinkDriver::LinkDriver(std::unique_ptr<AtmLink> link, int near_fd, int far_fd, int cpu)
    : link_(std::move(link)), fds_{near_fd, far_fd}, cpu_(cpu) {
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  buffer_ = std::make_unique<std::uint8_t[]>(kBufferBytes);
  std::promise<void> started;
  auto ready = started.get_future();
  thread_ = std::thread([this, &started] { run(&started); });
  try {
    ready.get();
  } catch (...) {
    thread_.join();
    ::close(stop_fd_);
    throw;
  }
}

LinkDriver::~LinkDriver() {
  stop();
  if (thread_.joinable()) thread_.join();
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

void LinkDriver::stop() noexcept {
  stopping_.store(true, std::memory_order_relaxed);
  const std::uint64_t one = 1;
  if (stop_fd_ >= 0) [[maybe_unused]]
    auto r = ::write(stop_fd_, &one, sizeof one);
}

void LinkDriver::stop_and_join() noexcept {
  stop();
  if (thread_.joinable()) thread_.join();
}

bool LinkDriver::wait_ready(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!link_->host_counters(Side::kNear).ready.load() ||
         !link_->host_counters(Side::kFar).ready.load()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// Reads packets while the link can take them; true when the device may have more.
bool LinkDriver::pump_reads(Side side, std::uint64_t now_ns) {
  for (int n = 0; n < kReadBatch; ++n) {
    if (!link_->can_take(side)) return false;
    const ssize_t got = ::read(fds_[int(side)], buffer_.get(), kBufferBytes);
    if (got < 0) {
      if (errno != EAGAIN && errno != EINTR) counters_.read_errors.add();
      return false;
    }
    counters_.reads.add();
    link_->from_host(side, {buffer_.get(), std::size_t(got)}, now_ns);
  }
  return true;
}

void LinkDriver::run(std::promise<void>* started) {
  try {
    if (cpu_ >= 0) pin_current_thread(cpu_);
    // The default 50 us timer slack would add to every pacing sleep; the pacer makes up lost
    // time, but a tight sleep keeps the burst after each wake-up small.
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    link_->start(std::uint64_t(now_ns()));
    started->set_value();
  } catch (...) {
    started->set_exception(std::current_exception());
    return;
  }
  FdSink sink(fds_, counters_);
  pollfd fds[3];
  while (!stopping_.load(std::memory_order_relaxed)) {
    std::uint64_t now = std::uint64_t(now_ns());
    bool more = pump_reads(Side::kNear, now);
    more |= pump_reads(Side::kFar, now);
    const std::uint64_t next = link_->advance(now, sink);
    if (more) continue;  // a device still has packets and the line has room
    nfds_t n = 0;
    fds[n++] = {stop_fd_, POLLIN, 0};
    for (const Side side : {Side::kNear, Side::kFar})
      if (link_->can_take(side)) fds[n++] = {fds_[int(side)], POLLIN, 0};
    now = std::uint64_t(now_ns());
    if (next <= now) continue;
    timespec timeout{};
    const bool forever = next == kNoEvent;
    if (!forever) {
      const std::uint64_t wait = next - now;
      timeout.tv_sec = time_t(wait / 1'000'000'000u);
      timeout.tv_nsec = long(wait % 1'000'000'000u);
    }
    ::ppoll(fds, n, forever ? nullptr : &timeout, nullptr);
    counters_.wakeups.add();
  }
}

}  // namespace mtperf::atm
