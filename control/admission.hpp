#pragma once
// What the tests running on one server hold at once: how many there are (ServerOptions::
// max_sessions) and their memory (max_total_memory). A session takes a Ticket once its TEST is
// authenticated and within policy; the ticket gives its place and its memory back when it goes.
// Connections still in their handshake hold no ticket (they are bounded apart, max_pending).
// Thread-safe.
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

#include "control/protocol.hpp"
#include "workloads/memory.hpp"

namespace mtperf::control {

class Admission {
 public:
  Admission(uint32_t max_tests, uint64_t max_memory)
      : max_tests_(max_tests), max_memory_(max_memory) {}

  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& o) noexcept
        : owner_(std::exchange(o.owner_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    Ticket& operator=(Ticket&& o) noexcept {
      if (this != &o) {
        release();
        owner_ = std::exchange(o.owner_, nullptr);
        bytes_ = std::exchange(o.bytes_, 0);
      }
      return *this;
    }
    ~Ticket() { release(); }
    explicit operator bool() const { return owner_ != nullptr; }

   private:
    friend class Admission;
    Ticket(Admission* a, uint64_t bytes) : owner_(a), bytes_(bytes) {}
    void release() {
      if (owner_) owner_->give_back(bytes_);
      owner_ = nullptr;
    }
    Admission* owner_ = nullptr;
    uint64_t bytes_ = 0;
  };

  // A place for a test of `bytes`; throws ProtocolError naming the limit when it does not fit
  // beside the tests running now.
  Ticket admit(uint64_t bytes) {
    std::lock_guard lock(mu_);
    if (running_ >= max_tests_) {
      throw ProtocolError("server busy: " + std::to_string(running_) +
                          " tests are running, the most it runs at once (mtperf serve "
                          "--max-sessions); try again later");
    }
    if (memory_ + bytes > max_memory_) {
      throw ProtocolError("server busy: the test needs " + format_bytes(bytes) +
                          " of memory and the tests running hold " + format_bytes(memory_) +
                          " of the " + format_bytes(max_memory_) +
                          " the server gives all tests at once (mtperf serve "
                          "--max-total-memory); try again later");
    }
    ++running_;
    memory_ += bytes;
    return Ticket(this, bytes);
  }

  uint32_t running() const {
    std::lock_guard lock(mu_);
    return running_;
  }
  uint64_t memory_in_use() const {
    std::lock_guard lock(mu_);
    return memory_;
  }

 private:
  void give_back(uint64_t bytes) {
    std::lock_guard lock(mu_);
    --running_;
    memory_ -= bytes;
  }

  mutable std::mutex mu_;
  const uint32_t max_tests_;
  const uint64_t max_memory_;
  uint32_t running_ = 0;
  uint64_t memory_ = 0;
};

}  // namespace mtperf::control
