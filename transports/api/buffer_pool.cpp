#include "transports/api/transport.hpp"

#include <sys/mman.h>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace mtperf {

BufferPool::BufferPool(uint32_t count, uint32_t size) : count_(count), size_(size) {
  if (count == 0 || size == 0) return;
  size_t bytes = size_t(count) * size;
  // mmap gives page-aligned, zeroed memory that can be registered (MR, fixed buffers) as a whole.
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw std::runtime_error("cannot allocate " + std::to_string(bytes) +
                             " bytes of I/O buffers: " + std::strerror(errno));
  }
  base_ = static_cast<std::byte*>(p);
  // Touch every page now so that page faults do not land in the measured window.
  std::memset(base_, 0x5a, bytes);
}

BufferPool::~BufferPool() {
  if (base_) munmap(base_, bytes());
}

BufferPool::BufferPool(BufferPool&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)),
      count_(std::exchange(o.count_, 0)),
      size_(std::exchange(o.size_, 0)) {}

BufferPool& BufferPool::operator=(BufferPool&& o) noexcept {
  if (this != &o) {
    if (base_) munmap(base_, bytes());
    base_ = std::exchange(o.base_, nullptr);
    count_ = std::exchange(o.count_, 0);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

}  // namespace mtperf
